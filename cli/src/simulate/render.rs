//! The figures of `simulate` as text: aligned tables, or JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use outbound_guard_settings::SystemSettings;
use serde_json::json;

use super::engine::{Figures, Run, Script};
use crate::args::ScenarioKind;
use crate::args::SimulateArgs;

/// One scenario's figures for one system, with the settings as written and, when
/// comparing, with each alternative's changed key.
pub(crate) struct Scenario {
    pub(crate) kind: ScenarioKind,
    pub(crate) warm: u32,
    /// The script the settings as written ran with.
    pub(crate) script: Script,
    /// The settings as written, then each alternative in the order given.
    pub(crate) runs: Vec<Run>,
}

/// A duration as a table shows it: `15.1 s`, `500 ms`.
pub fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) && !d.is_zero() {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

fn ms(d: Option<Duration>) -> serde_json::Value {
    d.map_or(serde_json::Value::Null, |d| {
        json!(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    })
}

fn figures_json(f: &Figures) -> serde_json::Value {
    json!({
        "first_refusal_ms": ms(f.first_refusal),
        "breaker_opened_ms": ms(f.breaker_opened),
        "first_zero_wait_refusal_ms": ms(f.first_zero_wait_refusal),
        "upstream_calls_until_fast_fail": f.upstream_calls_until_fast_fail,
        "upstream_calls": f.upstream_calls,
        "most_callers_alive": f.most_callers_alive,
        "most_in_flight": f.most_in_flight,
        "callers": f.callers,
        "refused": f.refused,
        "recovered_after_ms": ms(f.recovered_after),
        "open_cycles": f.open_cycles,
        "trial_calls": f.trial_calls,
        "open_periods_ms": f.open_periods.iter().map(std::time::Duration::as_millis).collect::<Vec<_>>(),
    })
}

/// The figures as JSON: per system, per scenario, with the compared runs beside.
pub(crate) fn to_json(
    args: &SimulateArgs,
    systems: &[&SystemSettings],
    report: &BTreeMap<String, Vec<Scenario>>,
    compared: &[&str],
) -> String {
    let systems: Vec<serde_json::Value> = systems
        .iter()
        .map(|system| {
            let outcomes = report.get(system.name()).map_or(&[][..], Vec::as_slice);
            let scenarios: Vec<serde_json::Value> = outcomes
                .iter()
                .map(|o| {
                    let s = &o.script;
                    let mut value = json!({
                        "scenario": o.kind.name(),
                        "warm": o.warm,
                        "figures": figures_json(&o.runs[0].figures),
                    });
                    match o.kind {
                        ScenarioKind::Errors => value["rate"] = json!(s.rate),
                        ScenarioKind::Slow => value["slow_ms"] = ms(Some(s.slow)),
                        ScenarioKind::Recovery => value["fault_for_ms"] = ms(Some(s.fault_for)),
                        ScenarioKind::RateLimited => {
                            value["retry_after_ms"] = ms(Some(s.retry_after));
                        }
                        ScenarioKind::Hang | ScenarioKind::Queue => {}
                    }
                    let alternatives: Vec<serde_json::Value> = compared
                        .iter()
                        .zip(o.runs.iter().skip(1))
                        .map(|(label, other)| {
                            json!({
                                "change": label,
                                "figures": figures_json(&other.figures),
                            })
                        })
                        .collect();
                    // One comparison is an object, several an array in the order given.
                    match <[_; 1]>::try_from(alternatives) {
                        Ok([one]) => value["compared"] = one,
                        Err(several) if !several.is_empty() => {
                            value["compared"] = serde_json::Value::Array(several);
                        }
                        Err(_) => {}
                    }
                    value
                })
                .collect();
            json!({
                "system": system.name(),
                "bulkhead_permits": system.bulkhead_permits(),
                "scenarios": scenarios,
            })
        })
        .collect();
    let value = json!({
        "file": args.file.display().to_string(),
        "every_ms": ms(Some(args.every)),
        "duration_ms": ms(Some(args.duration)),
        "systems": systems,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

fn opt(d: Option<Duration>) -> String {
    d.map_or_else(|| "—".to_owned(), seconds)
}

/// The figures of one run as table cells, in the header's order.
fn cells(f: &Figures, kind: ScenarioKind) -> Vec<String> {
    vec![
        opt(f.first_refusal),
        opt(f.breaker_opened),
        opt(f.first_zero_wait_refusal),
        f.upstream_calls_until_fast_fail.to_string(),
        f.upstream_calls.to_string(),
        f.most_callers_alive.to_string(),
        if kind == ScenarioKind::Recovery {
            opt(f.recovered_after)
        } else {
            "n/a".to_owned()
        },
        f.open_cycles.to_string(),
    ]
}

const HEADER: [&str; 8] = [
    "first refusal",
    "opened",
    "fast-fail",
    "calls to ff",
    "calls",
    "most alive",
    "recovered",
    "opens",
];

/// The figures as tables: per system, its settings in a sentence, then one row per
/// scenario (and one per compared run under it).
pub(crate) fn to_tables(
    args: &SimulateArgs,
    systems: &[&SystemSettings],
    report: &BTreeMap<String, Vec<Scenario>>,
    compared: &[&str],
) -> String {
    let mut out = String::new();
    for (index, system) in systems.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{}: {} permits (bulkhead_wait {}), breaker opens at {}% of ≥ {} calls in {}, slow after {}, timeout {}, open for {}{}",
            system.name(),
            system.bulkhead_permits(),
            seconds(system.bulkhead_wait()),
            percent(system.cb_failure_rate()),
            system.cb_min_calls(),
            system.cb_window_size(),
            seconds(system.cb_slow_threshold()),
            seconds(system.total_timeout()),
            seconds(system.cb_open_duration()),
            open_extras(system),
        );
        let _ = writeln!(
            out,
            "  one caller every {}; times since the fault started; — never",
            seconds(args.every)
        );
        let mut rows = vec![{
            let mut header = vec!["scenario".to_owned()];
            header.extend(HEADER.iter().map(|h| (*h).to_owned()));
            header
        }];
        for o in report.get(system.name()).map_or(&[][..], Vec::as_slice) {
            let name = scenario_name(o);
            let mut row = vec![name.clone()];
            row.extend(cells(&o.runs[0].figures, o.kind));
            rows.push(row);
            for (label, other) in compared.iter().zip(o.runs.iter().skip(1)) {
                let mut row = vec![format!("  with {label}")];
                row.extend(cells(&other.figures, o.kind));
                rows.push(row);
            }
        }
        out.push_str(&table(&rows));
    }
    out
}

fn scenario_name(o: &Scenario) -> String {
    let s = &o.script;
    let what = match o.kind {
        ScenarioKind::Hang => "hang".to_owned(),
        ScenarioKind::Errors => format!("errors {}%", percent(s.rate)),
        ScenarioKind::Slow => format!("slow {}", seconds(s.slow)),
        ScenarioKind::Recovery => format!("recovery after {}", seconds(s.fault_for)),
        ScenarioKind::RateLimited => format!("429, Retry-After {}", seconds(s.retry_after)),
        ScenarioKind::Queue => "queue".to_owned(),
    };
    if o.warm == 0 {
        format!("{what}, cold")
    } else {
        format!("{what}, warm {}", o.warm)
    }
}

/// A share as a percentage, to two decimals at most: `60`, `0.01`.
/// How the open period may grow: backoff, jitter and the cap (empty when neither is on
/// and the cap only bounds retry hints).
fn open_extras(system: &SystemSettings) -> String {
    let mut parts = Vec::new();
    if system.cb_open_backoff() > 1.0 {
        parts.push(format!("×{} per re-opening", system.cb_open_backoff()));
    }
    if system.cb_open_jitter() > 0.0 {
        parts.push(format!(
            "+ up to {}% jitter",
            percent(system.cb_open_jitter())
        ));
    }
    parts.push(format!("at most {}", seconds(system.cb_open_max())));
    format!(" ({})", parts.join(", "))
}

fn percent(rate: f64) -> String {
    let text = format!("{:.2}", rate * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Rows as aligned columns: the first left-aligned, the others right-aligned.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        out.push_str("  ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            if c == 0 {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str("  ");
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_show_as_percentages() {
        assert_eq!(percent(0.6), "60");
        assert_eq!(percent(0.3), "30");
        assert_eq!(percent(0.125), "12.5");
        assert_eq!(percent(0.0001), "0.01");
        assert_eq!(percent(1.0), "100");
    }

    #[test]
    fn tables_align_their_columns() {
        let rows = vec![
            vec!["a".to_owned(), "1".to_owned()],
            vec!["long name".to_owned(), "100".to_owned()],
        ];
        assert_eq!(table(&rows), "  a            1\n  long name  100\n");
    }
}
