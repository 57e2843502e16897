//! `tune`'s answer: per system, the recommended setting and the alternatives that trade
//! one objective for another, each beside the settings it ran with, how sure each figure
//! is, and the incidents that decided it; as a screen within 100 columns, or JSON.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::output::span;
use crate::output::{counted, thousands};
use crate::replay::wrap;
use outbound_guard_replay::Recording;
use outbound_guard_replay::{
    Candidate, Difference, FigureKind, Known, Meets, Objectives, Prepared, Subject, Told,
};

/// One objective, in the order [`Candidate::meets`] gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Objective {
    HealthyRefused,
    FailFast,
    FailingThrough,
}

impl Objective {
    const ALL: [Objective; 3] = [
        Objective::HealthyRefused,
        Objective::FailFast,
        Objective::FailingThrough,
    ];

    /// Its JSON key.
    fn key(self) -> &'static str {
        match self {
            Objective::HealthyRefused => "healthy_refused",
            Objective::FailFast => "fail_fast_within",
            Objective::FailingThrough => "failing_through",
        }
    }
}

/// One system's search and what it chose.
pub(crate) struct Tuned<'a> {
    pub(crate) name: String,
    pub(crate) prepared: Prepared<'a>,
    /// Every setting tried, the settings it ran with first.
    pub(crate) tried: Vec<Candidate>,
    /// The recommended setting and the alternatives.
    pub(crate) chosen: Chosen,
    pub(crate) interrupted: bool,
    /// The recording's healthy calls, and its failing calls (all let through with no
    /// breaker), as far as it tells them.
    pub(crate) healthy: Told,
    pub(crate) failing: Told,
    /// The keys searched.
    pub(crate) keys: Vec<&'static str>,
    /// Why it cannot be tuned at all, if it cannot.
    pub(crate) cannot: Option<String>,
}

/// The `n`-th alternative's name: `A`, `B`, `C`.
fn letter(n: usize) -> char {
    char::from(b'A' + u8::try_from(n % 26).unwrap_or(0))
}

/// A column's width: the name's 30 and five columns fit 100.
const COLUMN: usize = 13;

/// A row of the table: its name, then each column's cell.
fn row(out: &mut String, name: &str, cells: Vec<String>) {
    let mut line = format!("  {name:<28}");
    for c in cells {
        let _ = write!(line, "{c:<COLUMN$} ");
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

/// Why a setting is recommended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Because {
    /// It meets every objective (the best of those that do).
    MeetsEvery,
    /// None tried meets every objective; it is known no worse than the settings it ran
    /// with on any figure and known better on at least one.
    BetterThanAsSet,
}

/// The recommended setting, why, and the alternatives.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chosen {
    /// The recommended one, if any (0: the settings it ran with), and why.
    pub(crate) recommended: Option<(usize, Because)>,
    /// Up to three on the front that each trade: known better than the recommended
    /// (or the settings it ran with) on a figure, told apart from the settings it ran
    /// with, and known to let fewer failing calls through than no breaker at all.
    pub(crate) alternatives: Vec<usize>,
}

impl Chosen {
    pub(crate) fn index(&self) -> Option<usize> {
        self.recommended.map(|(r, _)| r)
    }
}

/// `t`'s figures of the front against `base`'s (the lower the better): the counts
/// compared on the same draws of the answers the recording lacks (paired), the slowest
/// incident interval against interval.
fn versus(base: &Candidate, t: &Candidate) -> [Difference; 3] {
    let subjects = [
        Some(Subject::Figure(FigureKind::HealthyRefused)),
        Some(Subject::Figure(FigureKind::FailingLetThrough)),
        None,
    ];
    std::array::from_fn(|k| {
        let (b, a) = (&base.known()[k], &t.known()[k]);
        match subjects[k] {
            Some(subject) => base.variant.paired(&t.variant, (b, a), subject).verdict,
            None => b.compare(a),
        }
    })
}

/// Whether `t` is known no worse than `base` on every figure of the front and known
/// better on one.
fn known_better(t: &Candidate, base: &Candidate) -> bool {
    let v = versus(base, t);
    v.iter()
        .all(|v| matches!(v, Difference::Better | Difference::Same))
        && v.contains(&Difference::Better)
}

/// Whether `t` is known to let fewer failing calls through than no breaker at all
/// (`no_breaker`'s figure; `failing_drawn`: every failing call, on each draw of the
/// answers the recording lacks): on the same draws where drawn (fewer on every one),
/// else interval against interval.
fn fewer_than_none(t: &Candidate, no_breaker: &Known, failing_drawn: &[u64]) -> bool {
    let through = t.variant.drawn_counts(FigureKind::FailingLetThrough);
    if !failing_drawn.is_empty() && through.len() == failing_drawn.len() {
        let Known::Told(_) = &t.known()[1] else {
            return false;
        };
        return through.zip(failing_drawn).all(|(d, &all)| (d as u64) < all);
    }
    no_breaker.compare(&t.known()[1]) == Difference::Better
}

/// The recommended setting and the alternatives of `tried` (the settings it ran with
/// at 0); `no_breaker` the figures of the front with no breaker, and its failing calls
/// let through on each draw.
pub(crate) fn choose(
    tried: &[Candidate],
    (no_breaker, failing_drawn): (&[Known; 3], &[u64]),
) -> Chosen {
    let best = |keep: &dyn Fn(usize) -> bool| {
        (0..tried.len())
            .filter(|&i| keep(i))
            .min_by_key(|&i| tried[i].rank())
    };
    let as_set = &tried[0];
    let recommended = best(&|i| tried[i].missed() == 0)
        .map(|r| (r, Because::MeetsEvery))
        .or_else(|| {
            best(&|i| i != 0 && known_better(&tried[i], as_set))
                .map(|r| (r, Because::BetterThanAsSet))
        });
    let reference = &tried[recommended.map_or(0, |(r, _)| r)];
    let trades = |i: usize| {
        let t = &tried[i];
        versus(reference, t).contains(&Difference::Better)
            && versus(as_set, t)
                .iter()
                .any(|v| matches!(v, Difference::Better | Difference::Worse))
            && fewer_than_none(t, &no_breaker[1], failing_drawn)
    };
    let front = Candidate::front(tried);
    let mut alternatives: Vec<usize> = Vec::new();
    for figure in 0..3 {
        let pick = front
            .iter()
            .copied()
            .filter(|&i| {
                i != 0
                    && Some(i) != recommended.map(|(r, _)| r)
                    && !alternatives.contains(&i)
                    && trades(i)
            })
            .min_by_key(|&i| (tried[i].estimates()[figure], tried[i].rank()));
        alternatives.extend(pick);
    }
    Chosen {
        recommended,
        alternatives,
    }
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
            if with.chars().count() <= COLUMN {
                with
            } else {
                format!("≈{}", words(t.value))
            }
        }
        Known::CannotTell(_) => "?".to_owned(),
    }
}

/// A figure in words: `120` where exact, `≈120 (90 to 150)` where estimated, `cannot be
/// told`.
fn told_words(known: &Known, words: impl Fn(u64) -> String) -> String {
    match known {
        Known::Told(t) if t.exact() => words(t.value),
        Known::Told(t) => format!(
            "≈{} ({} to {})",
            words(t.value),
            words(t.low),
            words(t.high)
        ),
        Known::CannotTell(_) => "cannot be told".to_owned(),
    }
}

/// A total as JSON: its estimate and interval.
fn interval(t: Told) -> Value {
    json!({"value": t.value, "low": t.low, "high": t.high, "exact": t.exact()})
}

/// Microseconds as milliseconds.
fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
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
        Meets::Met => "met",
        Meets::Missed(_) => "missed",
        Meets::CannotTell(_) => "cannot tell",
        Meets::NotJudged(_) => "not judged",
    }
}

/// An estimate and its interval in words: `1,234`, or `≈1,234 (1,000 to 1,500)`.
fn estimated(value: u64, low: u64, high: u64) -> String {
    if low == high {
        count(value)
    } else {
        format!("≈{} ({} to {})", count(value), count(low), count(high))
    }
}

/// The objectives in words.
fn objective_words(o: Objectives, objective: Objective, healthy: Told) -> String {
    match objective {
        Objective::HealthyRefused => {
            let cap = healthy.share(o.healthy_refused);
            format!(
                "refuse at most {}% of healthy calls ({} of {})",
                percent(o.healthy_refused),
                estimated(cap.value, cap.low, cap.high),
                estimated(healthy.value, healthy.low, healthy.high)
            )
        }
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

/// An objective's name in a sentence.
fn objective_name(o: Objective) -> &'static str {
    match o {
        Objective::HealthyRefused => "the healthy calls' cap",
        Objective::FailFast => "the time to fail fast",
        Objective::FailingThrough => "the failing calls' cap",
    }
}

/// The objectives a setting meets, misses and cannot be told to meet, in words.
fn meets_line(t: &Candidate) -> String {
    let which = |missed: bool| -> Vec<&str> {
        Objective::ALL
            .iter()
            .zip(t.meets())
            .filter(|(_, m)| {
                if missed {
                    matches!(m, Meets::Missed(_))
                } else {
                    matches!(m, Meets::CannotTell(_))
                }
            })
            .map(|(o, _)| objective_name(*o))
            .collect()
    };
    let (missed, untold) = (which(true), which(false));
    let mut parts = Vec::new();
    if !missed.is_empty() {
        parts.push(format!("misses {}", missed.join(" and ")));
    }
    if !untold.is_empty() {
        parts.push(format!(
            "cannot tell whether it meets {}",
            untold.join(" and ")
        ));
    }
    if parts.is_empty() {
        "meets every objective".to_owned()
    } else {
        parts.join("; ")
    }
}

/// How `t` trades against `against`, figure by figure of the front: better or worse
/// where told, the figures whose difference is within their error said "cannot tell
/// apart", and those the recording cannot tell said so.
fn trade(t: &Candidate, against: &Candidate, against_name: &str) -> String {
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
    let mut apart = Vec::new();
    let mut unknown = Vec::new();
    let mut same = Vec::new();
    for (verdict, (better, worse, figure)) in versus(against, t).into_iter().zip(words) {
        match verdict {
            Difference::Better => parts.push(better),
            Difference::Worse => parts.push(worse),
            Difference::Same => same.push(figure),
            Difference::Apart => apart.push(figure),
            Difference::CannotTell => unknown.push(figure),
        }
    }
    let mut out = if parts.is_empty() {
        format!("known better or worse than {against_name} on no figure")
    } else {
        format!("{} than {against_name}", parts.join(", "))
    };
    for (list, words) in [
        (same, "the same"),
        (apart, "cannot tell apart"),
        (unknown, "cannot tell"),
    ] {
        if !list.is_empty() {
            let _ = write!(out, "; {words}: {}", list.join(", "));
        }
    }
    out
}

impl Tuned<'_> {
    fn known(&self, t: &Candidate, subject: Subject) -> Known {
        self.prepared.known(&t.variant, subject)
    }

    /// The columns: the settings it ran with, the recommended, the alternatives.
    fn columns(&self) -> Vec<(String, usize)> {
        let mut columns = vec![("as set".to_owned(), 0)];
        if let Some(r) = self.chosen.index().filter(|&r| r != 0) {
            columns.push(("recommended".to_owned(), r));
        }
        for (n, &i) in self.chosen.alternatives.iter().enumerate() {
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

    /// The recommended setting, why, and how it trades against the settings it ran
    /// with; or why there is none.
    fn recommendation(&self, out: &mut String, recording: &Recording, objectives: Objectives) {
        let base = &self.tried[0];
        match self.chosen.recommended {
            Some((0, _)) => {
                say(
                    out,
                    2,
                    "recommended: the settings it ran with: no setting tried does better and meets every objective",
                );
            }
            Some((r, because)) => {
                let t = &self.tried[r];
                say(out, 2, &format!("recommended: {}", t.label()));
                if because == Because::BetterThanAsSet {
                    say(
                        out,
                        4,
                        "no setting tried meets every objective: this one is known no worse than as set on any figure and better on at least one",
                    );
                    for line in self.shortfalls(t, objectives) {
                        say(out, 4, &line);
                    }
                    say(out, 4, &trade(t, base, "as set"));
                } else {
                    say(
                        out,
                        4,
                        &format!("{}; {}", meets_line(t), trade(t, base, "as set")),
                    );
                }
                if let Some(line) = self.decided(recording, r) {
                    say(out, 4, &line);
                }
            }
            None => {
                let then = if self.chosen.alternatives.is_empty() {
                    "none is told apart from as set and from no breaker as a trade"
                } else {
                    "the alternatives trade one for another"
                };
                say(
                    out,
                    2,
                    &format!("recommended: none: no setting tried meets every objective, and none is known no worse than as set on any figure and better on one; {then}"),
                );
                for line in self.unmet(objectives) {
                    say(out, 4, &line);
                }
            }
        }
    }

    /// The settings it ran with, the recommended and the alternatives, each with the
    /// objectives it meets and how it trades; the objectives nothing judges.
    fn choices(&self, out: &mut String, recording: &Recording, objectives: Objectives) {
        let base = &self.tried[0];
        say(out, 2, &format!("as set: {}", meets_line(base)));
        self.recommendation(out, recording, objectives);
        let against = self.chosen.index().unwrap_or(0);
        let against_name = if against != 0 {
            "the recommended"
        } else {
            "as set"
        };
        for (n, &i) in self.chosen.alternatives.iter().enumerate() {
            let t = &self.tried[i];
            say(out, 2, &format!("{}: {}", letter(n), t.label()));
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
        for (objective, meets) in Objective::ALL.iter().zip(self.tried[against].meets()) {
            if let Meets::NotJudged(why) = meets {
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
                .map(|(_, i)| cell(&self.known(&self.tried[*i], Subject::Figure(f)), words))
                .collect()
        };
        let healthy = self.healthy.value.max(1) as f64;
        let shares: Vec<String> = columns
            .iter()
            .map(|(_, i)| {
                let known =
                    self.known(&self.tried[*i], Subject::Figure(FigureKind::HealthyRefused));
                // The share where it fits the column.
                let share = cell(&known, |v| {
                    format!("{} ({:.1}%)", count(v), v as f64 * 100.0 / healthy)
                });
                if share.chars().count() <= COLUMN {
                    share
                } else {
                    cell(&known, count)
                }
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
                    .map(|(_, i)| meets_words(&self.tried[*i].meets()[k]).to_owned())
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
                .map(|(_, i)| {
                    cell(
                        &self.known(&self.tried[*i], Subject::FastFail(n)),
                        fast_fail_words,
                    )
                })
                .collect();
            // `2026-12-06 03:12:05.123 UTC`: its time of day to the second.
            let at = recording.when(*start);
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
        let went = |t: &Candidate, i: usize| match self.known(t, Subject::FastFail(i)) {
            Known::Told(told) => told.value.min(incidents[i].1),
            Known::CannotTell(_) => 0,
        };
        let t = &self.tried[r];
        let i = (0..incidents.len()).max_by_key(|&i| went(t, i))?;
        let words = |t: &Candidate| match self.known(t, Subject::FastFail(i)) {
            Known::Told(told) if told.value <= incidents[i].1 => {
                format!("fails fast after {}", fast_fail_words(told.value))
            }
            Known::Told(_) => "does not fail fast before it ends".to_owned(),
            Known::CannotTell(_) => "cannot tell when it fails fast".to_owned(),
        };
        Some(format!(
            "decided by incident {} ({}, {}): it {}; as set, it {}",
            i + 1,
            recording.when(incidents[i].0),
            span(incidents[i].1),
            words(t),
            words(&self.tried[0])
        ))
    }

    /// Of each objective no setting tried meets, the closest any came.
    fn unmet(&self, objectives: Objectives) -> Vec<String> {
        let mut lines = Vec::new();
        for (k, objective) in Objective::ALL.iter().enumerate() {
            if self.tried.iter().any(|t| t.meets()[k].met()) {
                continue;
            }
            let closest = (0..self.tried.len()).min_by_key(|&i| {
                let j = self.tried[i].estimates();
                ([j[0], j[2], j[1]][k], self.tried[i].rank())
            });
            let Some(i) = closest else { continue };
            let j = self.tried[i].known();
            let best = match objective {
                Objective::HealthyRefused => {
                    format!("{} healthy calls refused", told_words(&j[0], count))
                }
                Objective::FailFast => format!(
                    "an incident {} before it failed fast or ended",
                    told_words(&j[2], span)
                ),
                Objective::FailingThrough => {
                    format!("{} failing calls let through", told_words(&j[1], count))
                }
            };
            lines.push(format!(
                "no setting tried is known to {}: the closest, {}, has {best}",
                objective_words(objectives, *objective, self.healthy),
                self.tried[i].label()
            ));
        }
        lines
    }

    /// What `t` misses of each objective it is not known to meet, and by how much
    /// (its estimate against the cap).
    fn shortfalls(&self, t: &Candidate, objectives: Objectives) -> Vec<String> {
        let within = u64::try_from(objectives.fail_fast_within.as_micros()).unwrap_or(u64::MAX);
        let exact = |value| Told {
            value,
            low: value,
            high: value,
            guessed: 0,
        };
        let caps = [
            self.healthy.share(objectives.healthy_refused),
            exact(within),
            exact(objectives.failing_through.unwrap_or(u64::MAX)),
        ];
        let mut lines = Vec::new();
        for (k, objective) in Objective::ALL.iter().enumerate() {
            let meets = &t.meets()[k];
            if meets.met() {
                continue;
            }
            // The front's figure each objective rests on.
            let f = [0, 2, 1][k];
            let (value, cap) = (t.estimates()[f], caps[k]);
            let words = |v: u64| {
                if *objective == Objective::FailFast {
                    span(v)
                } else {
                    count(v)
                }
            };
            let figure = match objective {
                Objective::HealthyRefused => "healthy calls refused",
                Objective::FailFast => "the longest an incident goes before it fails fast",
                Objective::FailingThrough => "failing calls let through",
            };
            let cap_words = if cap.low == cap.high {
                words(cap.value)
            } else {
                format!(
                    "≈{} ({} to {})",
                    words(cap.value),
                    words(cap.low),
                    words(cap.high)
                )
            };
            let estimate = told_words(&t.known()[f], words);
            lines.push(match meets {
                Meets::Missed(_) => format!(
                    "misses {} by {}: {figure} {estimate}, the cap {cap_words}",
                    objective_name(*objective),
                    words(value.saturating_sub(cap.value))
                ),
                Meets::CannotTell(why) => format!(
                    "cannot tell whether it meets {}: {figure} {estimate}, the cap {cap_words} ({why})",
                    objective_name(*objective)
                ),
                _ => continue,
            });
        }
        lines
    }

    /// One setting as JSON.
    fn setting_json(&self, t: &Candidate) -> Value {
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
        .map(|f| {
            let mut k = self.known(t, Subject::Figure(f));
            // `_ms`: the time callers waited in milliseconds, as every `_ms` key.
            if let (true, Known::Told(t)) = (f.is_time(), &k) {
                return (
                    f.key().to_owned(),
                    json!({"value": ms(t.value), "low": ms(t.low), "high": ms(t.high), "exact": t.exact()}),
                );
            }
            if let Known::CannotTell(why) = &mut k {
                return (f.key().to_owned(), json!({"cannot_tell": why}));
            }
            (f.key().to_owned(), known(k))
        })
        .collect();
        let fast_fail: Vec<Value> = (0..self.prepared.incidents().count())
            .map(|i| match self.known(t, Subject::FastFail(i)) {
                Known::Told(t) if t.value == u64::MAX => json!({"never": true, "exact": t.exact()}),
                Known::Told(t) => json!({"ms": t.value as f64 / 1000.0, "exact": t.exact()}),
                Known::CannotTell(why) => json!({"cannot_tell": why}),
            })
            .collect();
        let objectives: serde_json::Map<String, Value> = Objective::ALL
            .iter()
            .zip(t.meets())
            .map(|(o, m)| {
                let v = match m {
                    Meets::Met => json!("met"),
                    Meets::Missed(_) => json!("missed"),
                    Meets::CannotTell(why) => json!({"cannot_tell": why}),
                    Meets::NotJudged(why) => json!({"not_judged": why}),
                };
                (o.key().to_owned(), v)
            })
            .collect();
        json!({
            "label": t.label(),
            "change": t.change.iter().map(|(k, v)| (k.name().to_owned(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "figures": figures,
            // `null` where the time callers waited cannot be told.
            "waited_ms": (t.waited() != u64::MAX).then(|| t.waited() as f64 / 1000.0),
            "fast_fail": fast_fail,
            "slowest_incident_ms": t.estimates()[2] as f64 / 1000.0,
            "objectives": objectives,
            "meets_every_objective": t.missed() == 0,
        })
    }

    /// The system as JSON.
    pub(crate) fn json(&self, recording: &Recording, objectives: Objectives) -> Value {
        let incidents: Vec<Value> = self
            .prepared
            .incidents()
            .map(|(start, length)| {
                json!({"at": recording.when(start), "start_ms": start as f64 / 1000.0, "length_ms": length as f64 / 1000.0})
            })
            .collect();
        json!({
            "calls": self.prepared.calls(),
            "healthy_calls": interval(self.healthy),
            "failing_calls": interval(self.failing),
            "incidents": incidents,
            "holes": self.prepared.has_holes(),
            "cannot_tune": self.cannot,
            "searched": self.keys,
            "tried": self.tried.len(),
            "interrupted": self.interrupted,
            "as_set": self.setting_json(&self.tried[0]),
            "recommended": self.chosen.index().map(|r| self.setting_json(&self.tried[r])),
            "recommended_because": self.chosen.recommended.map(|(_, b)| match b {
                Because::MeetsEvery => "meets_every_objective",
                Because::BetterThanAsSet => "better_than_as_set",
            }),
            "recommended_misses": self.chosen.recommended
                .filter(|(_, b)| *b == Because::BetterThanAsSet)
                .map(|(r, _)| self.shortfalls(&self.tried[r], objectives)),
            "alternatives": self.chosen.alternatives.iter().map(|&i| self.setting_json(&self.tried[i])).collect::<Vec<_>>(),
            "front": Candidate::front(&self.tried).into_iter().map(|i| self.setting_json(&self.tried[i])).collect::<Vec<_>>(),
        })
    }
}
