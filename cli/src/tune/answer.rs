//! `tune`'s answer: per system, the recommended setting and the alternatives that trade
//! one objective for another, each beside the settings it ran with, how sure each figure
//! is, and the incidents that decided it; as a screen within 100 columns, or JSON.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::objectives::{healthy_cap, Meets, Objective, Objectives};
use super::search::{front, Tried};
use super::space::label;
use crate::output::{counted, thousands};
use crate::replay::recording::Recording;
use crate::replay::{compare, span, when, wrap, FigureKind, Judge, Known, Prepared, Verdict};

/// One system's search and what it chose.
pub(crate) struct Tuned<'a> {
    pub(crate) name: String,
    pub(crate) prepared: Prepared<'a>,
    /// Every setting tried, the settings it ran with first.
    pub(crate) tried: Vec<Tried>,
    /// The best that meets every objective, if one does (0: the settings it ran with).
    pub(crate) recommended: Option<usize>,
    /// Up to three on the front that each do better than it on one figure.
    pub(crate) alternatives: Vec<usize>,
    pub(crate) interrupted: bool,
    /// The recording's healthy calls.
    pub(crate) healthy: usize,
    /// The keys searched.
    pub(crate) keys: Vec<&'static str>,
    /// Why it cannot be tuned at all, if it cannot.
    pub(crate) cannot: Option<String>,
}

/// The `n`-th alternative's name: `A`, `B`, `C`.
fn letter(n: usize) -> char {
    char::from(b'A' + u8::try_from(n % 26).unwrap_or(0))
}

/// A row of the table: its name, then each column's cell.
fn row(out: &mut String, name: &str, cells: Vec<String>) {
    let mut line = format!("  {name:<28}");
    for c in cells {
        let _ = write!(line, "{c:<13} ");
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

/// The incidents shown on a screen, the first of them.
const SHOWN: usize = 6;

/// `text` as lines of `out` within 100 columns, the first indented by `indent`, the
/// rest by two more.
fn say(out: &mut String, indent: usize, text: &str) {
    let _ = writeln!(out, "{:indent$}{}", "", wrap(text, indent, indent + 2, 100));
}

/// The recommended setting and the alternatives of `tried`.
pub(crate) fn choose(tried: &[Tried]) -> (Option<usize>, Vec<usize>) {
    let recommended = (0..tried.len())
        .filter(|&i| tried[i].judged.missed() == 0)
        .min_by_key(|&i| tried[i].rank());
    let front = front(tried);
    let mut alternatives: Vec<usize> = Vec::new();
    for figure in 0..3 {
        let pick = front
            .iter()
            .copied()
            .filter(|&i| i != 0 && Some(i) != recommended && !alternatives.contains(&i))
            .min_by_key(|&i| (tried[i].judged.front[figure], tried[i].rank()));
        let Some(i) = pick else { continue };
        // An alternative trades: better than the recommended on the figure it is best at.
        let better = recommended
            .is_none_or(|r| tried[i].judged.front[figure] < tried[r].judged.front[figure]);
        if better {
            alternatives.push(i);
        }
    }
    (recommended, alternatives)
}

/// A figure as a cell: `120`, `≈120±30` (estimated, and its error where it fits), `?`
/// (cannot tell).
fn cell(known: &Known, words: impl Fn(u64) -> String) -> String {
    match known {
        Known::Told(t) if t.exact() => words(t.value),
        Known::Told(t) => {
            let error = t
                .high
                .saturating_sub(t.value)
                .max(t.value.saturating_sub(t.low));
            let with = format!("≈{}±{}", words(t.value), words(error));
            if with.chars().count() <= 13 {
                with
            } else {
                format!("≈{}", words(t.value))
            }
        }
        Known::CannotTell(_) => "?".to_owned(),
    }
}

fn count(n: u64) -> String {
    thousands(usize::try_from(n).unwrap_or(usize::MAX))
}

/// An incident's time to fast fail in words: `310 ms`, `never`.
fn fast_fail_words(micros: u64) -> String {
    if micros == u64::MAX {
        "never".to_owned()
    } else {
        span(micros)
    }
}

fn meets_words(m: &Meets) -> &'static str {
    match m {
        Meets::Yes => "yes",
        Meets::No => "no",
        Meets::Likely(true) => "likely",
        Meets::Likely(false) => "likely not",
        Meets::Unknown(_) => "?",
        Meets::NotJudged(_) => "not judged",
    }
}

/// The objectives in words.
fn objective_words(o: Objectives, objective: Objective, healthy: usize) -> String {
    match objective {
        Objective::HealthyRefused => format!(
            "refuse at most {}% of healthy calls ({} of {})",
            percent(o.healthy_refused),
            count(healthy_cap(o.healthy_refused, healthy)),
            thousands(healthy)
        ),
        Objective::FailFast => format!(
            "fail fast within {} in every incident",
            span(u64::try_from(o.fail_fast_within.as_micros()).unwrap_or(u64::MAX))
        ),
        Objective::FailingThrough => match o.failing_through {
            Some(n) => format!("let at most {} failing calls through", count(n)),
            None => "let as few failing calls through as can be".to_owned(),
        },
    }
}

fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{}", p.round())
    } else {
        format!("{p:.2}").trim_end_matches('0').to_owned()
    }
}

/// The objectives a setting meets and misses, in words.
fn meets_line(t: &Tried) -> String {
    let missed: Vec<&str> = Objective::ALL
        .iter()
        .zip(&t.judged.meets)
        // Without a cap, the failing calls' objective is always met.
        .filter(|(_, m)| !m.by_estimate())
        .map(|(o, _)| match o {
            Objective::HealthyRefused => "the healthy calls' cap",
            Objective::FailFast => "the time to fail fast",
            Objective::FailingThrough => "the failing calls' cap",
        })
        .collect();
    if missed.is_empty() {
        "meets every objective".to_owned()
    } else {
        format!("misses {}", missed.join(" and "))
    }
}

/// How `t` trades against `against`, figure by figure of the front: a difference within
/// the figures' error is none, and one the recording cannot tell is said so.
fn trade(t: &Tried, against: &Tried, against_name: &str) -> String {
    let words = [
        (
            "refuses fewer healthy calls",
            "refuses more healthy calls",
            "healthy calls refused",
        ),
        (
            "lets fewer failing calls through",
            "lets more failing calls through",
            "failing calls let through",
        ),
        (
            "fails fast sooner",
            "fails fast later",
            "the time to fail fast",
        ),
    ];
    let mut parts = Vec::new();
    let mut unknown = Vec::new();
    for ((ours, theirs), (better, worse, figure)) in
        t.judged.known.iter().zip(&against.judged.known).zip(words)
    {
        match compare(theirs, ours) {
            Verdict::Better => parts.push(better),
            Verdict::Worse => parts.push(worse),
            Verdict::Same => {}
            Verdict::Apart | Verdict::CannotTell => unknown.push(figure),
        }
    }
    let mut out = if parts.is_empty() {
        format!("the same as {against_name} on each figure it can be told")
    } else {
        format!("{} than {against_name}", parts.join(", "))
    };
    if !unknown.is_empty() {
        let _ = write!(out, " (cannot tell: {})", unknown.join(", "));
    }
    out
}

impl Tuned<'_> {
    fn judge<'p>(&'p self, t: &'p Tried) -> Judge<'p> {
        self.prepared.judge(&t.variant)
    }

    /// The columns: the settings it ran with, the recommended, the alternatives.
    fn columns(&self) -> Vec<(String, usize)> {
        let mut columns = vec![("as set".to_owned(), 0)];
        if let Some(r) = self.recommended.filter(|&r| r != 0) {
            columns.push(("recommended".to_owned(), r));
        }
        for (n, &i) in self.alternatives.iter().enumerate() {
            columns.push((letter(n).to_string(), i));
        }
        columns
    }

    /// The system's screen.
    pub(crate) fn screen(&self, recording: &Recording, objectives: Objectives) -> String {
        let mut out = String::new();
        let calls = self.prepared.calls();
        let incidents: Vec<(u64, u64)> = self.prepared.incidents().collect();
        let _ = writeln!(
            out,
            "{}: {}, {}; {} tried{}",
            self.name,
            counted(calls, "call", "calls"),
            counted(incidents.len(), "incident", "incidents"),
            counted(self.tried.len(), "setting", "settings"),
            if self.interrupted {
                " (interrupted: the best of those)"
            } else {
                ""
            }
        );
        if let Some(why) = &self.cannot {
            say(&mut out, 2, &format!("cannot be tuned: {why}"));
            return out;
        }
        say(&mut out, 2, &format!("searched: {}", self.keys.join(", ")));
        let _ = writeln!(out, "  objectives:");
        for objective in Objective::ALL {
            say(
                &mut out,
                4,
                &objective_words(objectives, objective, self.healthy),
            );
        }
        self.choices(&mut out, recording, objectives);
        out.push('\n');
        self.table(&mut out, recording, objectives, &incidents);
        out
    }

    /// The settings it ran with, the recommended and the alternatives, each with the
    /// objectives it meets and how it trades; the objectives nothing judges.
    fn choices(&self, out: &mut String, recording: &Recording, objectives: Objectives) {
        let base = &self.tried[0];
        say(out, 2, &format!("as set: {}", meets_line(base)));
        match self.recommended {
            Some(0) => {
                say(
                    out,
                    2,
                    "recommended: the settings it ran with: no setting tried does better and meets every objective",
                );
            }
            Some(r) => {
                let t = &self.tried[r];
                say(out, 2, &format!("recommended: {}", label(&t.change)));
                say(
                    out,
                    4,
                    &format!("{}; {}", meets_line(t), trade(t, base, "as set")),
                );
                if let Some(line) = self.decided(recording, r) {
                    say(out, 4, &line);
                }
            }
            None => {
                say(
                    out,
                    2,
                    "recommended: none: no setting tried meets every objective; the alternatives trade one for another",
                );
                for line in self.unmet(objectives) {
                    say(out, 4, &line);
                }
            }
        }
        let against = self.recommended.unwrap_or(0);
        let against_name = if self.recommended.is_some_and(|r| r != 0) {
            "the recommended"
        } else {
            "as set"
        };
        for (n, &i) in self.alternatives.iter().enumerate() {
            let t = &self.tried[i];
            say(out, 2, &format!("{}: {}", letter(n), label(&t.change)));
            say(
                out,
                4,
                &format!(
                    "{}; {}",
                    meets_line(t),
                    trade(t, &self.tried[against], against_name)
                ),
            );
        }
        for (objective, meets) in Objective::ALL.iter().zip(&self.tried[against].judged.meets) {
            if let Meets::Unknown(why) | Meets::NotJudged(why) = meets {
                say(
                    out,
                    2,
                    &format!(
                        "not judged: {}: {why}",
                        objective_words(objectives, *objective, self.healthy)
                    ),
                );
            }
        }
    }

    /// The figures side by side.
    fn table(
        &self,
        out: &mut String,
        recording: &Recording,
        objectives: Objectives,
        incidents: &[(u64, u64)],
    ) {
        let columns = self.columns();
        row(out, "", columns.iter().map(|(n, _)| n.clone()).collect());
        let figure = |f: FigureKind, words: fn(u64) -> String| -> Vec<String> {
            columns
                .iter()
                .map(|(_, i)| cell(&self.judge(&self.tried[*i]).figure(f), words))
                .collect()
        };
        let healthy = self.healthy.max(1) as f64;
        let shares: Vec<String> = columns
            .iter()
            .map(|(_, i)| {
                let known = self
                    .judge(&self.tried[*i])
                    .figure(FigureKind::HealthyRefused);
                cell(&known, |v| {
                    format!("{} ({:.1}%)", count(v), v as f64 * 100.0 / healthy)
                })
            })
            .collect();
        row(out, "healthy calls refused", shares);
        row(
            out,
            "failing calls let through",
            figure(FigureKind::FailingLetThrough, count),
        );
        row(out, "time callers waited", figure(FigureKind::Waited, span));
        row(out, "openings", figure(FigureKind::Openings, count));
        self.incident_rows(out, recording, &columns, incidents);
        for (k, objective) in Objective::ALL.iter().enumerate() {
            if *objective == Objective::FailingThrough && objectives.failing_through.is_none() {
                continue;
            }
            let name = match objective {
                Objective::HealthyRefused => "meets healthy calls' cap",
                Objective::FailFast => "meets time to fail fast",
                Objective::FailingThrough => "meets failing calls' cap",
            };
            row(
                out,
                name,
                columns
                    .iter()
                    .map(|(_, i)| meets_words(&self.tried[*i].judged.meets[k]).to_owned())
                    .collect(),
            );
        }
    }

    /// Each incident's time to fast fail, side by side: the first [`SHOWN`].
    fn incident_rows(
        &self,
        out: &mut String,
        recording: &Recording,
        columns: &[(String, usize)],
        incidents: &[(u64, u64)],
    ) {
        if !incidents.is_empty() {
            let _ = writeln!(out, "  fails fast after, in incident");
        }
        for (n, (start, length)) in incidents.iter().take(SHOWN).enumerate() {
            let cells = columns
                .iter()
                .map(|(_, i)| cell(&self.judge(&self.tried[*i]).fast_fail(n), fast_fail_words))
                .collect();
            // `2026-12-06 03:12:05.123 UTC`: its time of day to the second.
            let at = when(recording, *start);
            let time: String = at
                .split(' ')
                .nth(1)
                .unwrap_or(&at)
                .chars()
                .take(8)
                .collect();
            row(
                out,
                &format!("  {} at {time}, {}", n + 1, span(*length)),
                cells,
            );
        }
        if incidents.len() > SHOWN {
            let _ = writeln!(
                out,
                "  … and {} more (--json)",
                counted(incidents.len() - SHOWN, "incident", "incidents")
            );
        }
    }

    /// The incident that decided `tried[r]`: where it goes longest before failing fast
    /// (or the incident ends), beside the settings it ran with there.
    fn decided(&self, recording: &Recording, r: usize) -> Option<String> {
        let incidents: Vec<(u64, u64)> = self.prepared.incidents().collect();
        let went = |t: &Tried, i: usize| match self.judge(t).fast_fail(i) {
            Known::Told(told) => told.value.min(incidents[i].1),
            Known::CannotTell(_) => 0,
        };
        let t = &self.tried[r];
        let i = (0..incidents.len()).max_by_key(|&i| went(t, i))?;
        let words = |t: &Tried| match self.judge(t).fast_fail(i) {
            Known::Told(told) if told.value <= incidents[i].1 => {
                format!("fails fast after {}", fast_fail_words(told.value))
            }
            Known::Told(_) => "does not fail fast before it ends".to_owned(),
            Known::CannotTell(_) => "cannot tell when it fails fast".to_owned(),
        };
        Some(format!(
            "decided by incident {} ({}, {}): it {}; as set, it {}",
            i + 1,
            when(recording, incidents[i].0),
            span(incidents[i].1),
            words(t),
            words(&self.tried[0])
        ))
    }

    /// Of each objective no setting tried meets, the closest any came.
    fn unmet(&self, objectives: Objectives) -> Vec<String> {
        let mut lines = Vec::new();
        for (k, objective) in Objective::ALL.iter().enumerate() {
            if self.tried.iter().any(|t| t.judged.meets[k].by_estimate()) {
                continue;
            }
            let closest = (0..self.tried.len()).min_by_key(|&i| {
                let j = &self.tried[i].judged;
                (
                    [j.front[0], j.front[2], j.front[1]][k],
                    self.tried[i].rank(),
                )
            });
            let Some(i) = closest else { continue };
            let j = &self.tried[i].judged;
            let best = match objective {
                Objective::HealthyRefused => {
                    format!("{} healthy calls refused", count(j.front[0]))
                }
                Objective::FailFast => format!(
                    "an incident {} before it failed fast or ended",
                    span(j.front[2])
                ),
                Objective::FailingThrough => {
                    format!("{} failing calls let through", count(j.front[1]))
                }
            };
            lines.push(format!(
                "no setting tried can {}: the closest, {}, has {best}",
                objective_words(objectives, *objective, self.healthy),
                label(&self.tried[i].change)
            ));
        }
        lines
    }

    /// One setting as JSON.
    fn setting_json(&self, t: &Tried) -> Value {
        let judge = self.judge(t);
        let known = |k: Known| match k {
            Known::Told(t) => {
                json!({"value": t.value, "low": t.low, "high": t.high, "exact": t.exact()})
            }
            Known::CannotTell(why) => json!({"cannot_tell": why}),
        };
        let figures: serde_json::Map<String, Value> = [
            FigureKind::HealthyRefused,
            FigureKind::FailingLetThrough,
            FigureKind::BulkheadRefused,
            FigureKind::Openings,
            FigureKind::Waited,
        ]
        .into_iter()
        .map(|f| (f.key().to_owned(), known(judge.figure(f))))
        .collect();
        let fast_fail: Vec<Value> = (0..self.prepared.incidents().count())
            .map(|i| match judge.fast_fail(i) {
                Known::Told(t) if t.value == u64::MAX => json!({"never": true, "exact": t.exact()}),
                Known::Told(t) => json!({"ms": t.value as f64 / 1000.0, "exact": t.exact()}),
                Known::CannotTell(why) => json!({"cannot_tell": why}),
            })
            .collect();
        let objectives: serde_json::Map<String, Value> = Objective::ALL
            .iter()
            .zip(&t.judged.meets)
            .map(|(o, m)| {
                let v = match m {
                    Meets::Unknown(why) => json!({"unknown": why}),
                    Meets::NotJudged(why) => json!({"not_judged": why}),
                    other => json!(meets_words(other)),
                };
                (o.key().to_owned(), v)
            })
            .collect();
        json!({
            "label": label(&t.change),
            "change": t.change.iter().map(|(k, v)| (k.name().to_owned(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "figures": figures,
            "waited_ms": t.judged.waited as f64 / 1000.0,
            "fast_fail": fast_fail,
            "slowest_incident_ms": t.judged.front[2] as f64 / 1000.0,
            "objectives": objectives,
            "meets_every_objective": t.judged.missed() == 0,
        })
    }

    /// The system as JSON.
    pub(crate) fn json(&self, recording: &Recording) -> Value {
        let incidents: Vec<Value> = self
            .prepared
            .incidents()
            .map(|(start, length)| {
                json!({"at": when(recording, start), "start_ms": start as f64 / 1000.0, "length_ms": length as f64 / 1000.0})
            })
            .collect();
        json!({
            "calls": self.prepared.calls(),
            "healthy_calls": self.healthy,
            "incidents": incidents,
            "holes": self.prepared.has_holes(),
            "cannot_tune": self.cannot,
            "searched": self.keys,
            "tried": self.tried.len(),
            "interrupted": self.interrupted,
            "as_set": self.setting_json(&self.tried[0]),
            "recommended": self.recommended.map(|r| self.setting_json(&self.tried[r])),
            "alternatives": self.alternatives.iter().map(|&i| self.setting_json(&self.tried[i])).collect::<Vec<_>>(),
            "front": front(&self.tried).into_iter().map(|i| self.setting_json(&self.tried[i])).collect::<Vec<_>>(),
        })
    }
}
