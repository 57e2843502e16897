//! Where a key or value is written in the settings file: line and column, from the
//! spans the `toml` parser keeps.

use std::collections::BTreeMap;
use std::fmt;

use toml::de::{DeTable, DeValue};

/// A place in the settings file: 1-based line and column (the column counts
/// characters, as editors do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, in characters.
    pub column: u32,
}

impl Location {
    /// The line and column of the byte `offset` in `text` (clamped to its end, and to a
    /// character boundary).
    pub fn of_offset(text: &str, offset: usize) -> Location {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        // Small, so that `SettingsError` stays small; a file of 4 billion lines is not
        // a settings file.
        let small = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Location {
            line: small(line),
            column: small(column),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One table's places: its header, and each key's name and value.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TableSpans {
    /// Where the table's name is written (`sber` in `[systems.sber]`).
    pub header: Option<Location>,
    /// Each key as written: where its name is, and where its value is.
    pub keys: BTreeMap<String, (Location, Location)>,
}

impl TableSpans {
    pub(crate) fn key(&self, name: &str) -> Option<Location> {
        self.keys.get(name).map(|(key, _)| *key)
    }

    pub(crate) fn value(&self, name: &str) -> Option<Location> {
        self.keys.get(name).map(|(_, value)| *value)
    }
}

/// The places of the file's `[defaults]` and `[systems.NAME]` tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Spans {
    pub defaults: TableSpans,
    pub systems: BTreeMap<String, TableSpans>,
    /// Where each top-level key is written (`systems`, `defaults`, or a stray one).
    pub top: BTreeMap<String, Location>,
}

impl Spans {
    /// Indexes `text`; empty when it does not parse (its syntax error has its own span).
    pub(crate) fn index(text: &str) -> Spans {
        let mut spans = Spans::default();
        let Ok(root) = DeTable::parse(text) else {
            return spans;
        };
        let at = |offset: usize| Location::of_offset(text, offset);
        let table = |table: &DeTable<'_>, header: Option<Location>| TableSpans {
            header,
            keys: table
                .iter()
                .map(|(k, v)| {
                    (
                        k.get_ref().to_string(),
                        (at(k.span().start), at(v.span().start)),
                    )
                })
                .collect(),
        };
        for (name, value) in root.get_ref() {
            spans
                .top
                .insert(name.get_ref().to_string(), at(name.span().start));
            match (name.get_ref().as_ref(), value.get_ref()) {
                ("defaults", DeValue::Table(t)) => {
                    spans.defaults = table(t, Some(at(name.span().start)));
                }
                ("systems", DeValue::Table(systems)) => {
                    for (system, value) in systems {
                        let header = Some(at(system.span().start));
                        let spans_of = match value.get_ref() {
                            DeValue::Table(t) => table(t, header),
                            _ => TableSpans {
                                header,
                                keys: BTreeMap::new(),
                            },
                        };
                        spans.systems.insert(system.get_ref().to_string(), spans_of);
                    }
                }
                _ => {}
            }
        }
        spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "a\nбв = 1\n";
        assert_eq!(
            Location::of_offset(text, 0),
            Location { line: 1, column: 1 }
        );
        // `=` after two two-byte letters and a space: byte 7, character 4.
        assert_eq!(
            Location::of_offset(text, 7),
            Location { line: 2, column: 4 }
        );
        // Inside a character (`б` is bytes 2 and 3): that character's place.
        assert_eq!(
            Location::of_offset(text, 3),
            Location { line: 2, column: 1 }
        );
        assert_eq!(
            Location::of_offset(text, 1000),
            Location { line: 3, column: 1 }
        );
    }

    #[test]
    fn indexes_keys_and_values_of_each_table() {
        let text =
            "[defaults]\ncb_open_duration = \"10s\"\n\n[systems.sber]\ncb_failure_rate = 1.5\n";
        let spans = Spans::index(text);
        assert_eq!(
            spans.defaults.value("cb_open_duration"),
            Some(Location {
                line: 2,
                column: 20
            })
        );
        let sber = &spans.systems["sber"];
        assert_eq!(
            sber.header,
            Some(Location {
                line: 4,
                column: 10
            })
        );
        assert_eq!(
            sber.key("cb_failure_rate"),
            Some(Location { line: 5, column: 1 })
        );
        assert_eq!(
            sber.value("cb_failure_rate"),
            Some(Location {
                line: 5,
                column: 19
            })
        );
    }
}
