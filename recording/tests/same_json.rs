//! The typed `Line` writes and reads exactly what the flat one before it did
//! (`tests/flat`, kept as it was): every file written before reads as before, and what
//! is written now is, byte for byte, what was written before.

mod flat;

use std::path::Path;

use outbound_guard_recording::{Cause, Cut, Line, Outcome};

/// A file of the workspace, from its root.
fn workspace_file(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A real recording: the payments demo's (`cli/tests/data`), written by the recorder
/// before the format had a crate of its own (its numbers padded to three decimals).
fn demo_lines() -> Vec<String> {
    let demo = workspace_file("cli/tests/data/demo-recording.jsonl");
    let lines: Vec<String> = demo.lines().map(String::from).collect();
    assert!(lines.len() > 2_600, "{}", lines.len());
    lines
}

/// The format's examples in `docs/recording.md`, one of each kind, as the recorder
/// writes them now (the last, the limits' line with an adaptive bulkhead's limit).
fn docs_lines() -> Vec<String> {
    let docs = workspace_file("docs/recording.md");
    let format = docs
        .split("## The format\n\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/recording.md has its format block");
    let lines: Vec<String> = format.lines().map(String::from).collect();
    assert_eq!(lines.len(), 9, "{format}");
    lines
}

/// What a reader learns from a line, read now: its system, its start in µs and what it
/// records, or why it cannot be read (in the order `outbound-guard replay` asks).
fn read_now(text: &str) -> Result<String, String> {
    let line = Line::parse(text)?;
    let at = line.start_micros()?;
    let what = match &line {
        Line::Call(call) => format!(
            "call {} {:?} {:?} {:?}",
            call.duration_micros(),
            call.outcome,
            call.cut,
            call.cause
        ),
        Line::Transition(t) => format!(
            "transition {:?} from {:?} reason {:?} why {:?} observing {}",
            t.to,
            t.from.as_deref().unwrap_or(""),
            t.reason.as_deref().unwrap_or(""),
            t.why.as_deref().unwrap_or(""),
            t.observing
        ),
        Line::Limits(limits) => {
            format!("limits {} {}", limits.read_micros(), limits.total_micros())
        }
        Line::Observing(o) => format!("observing {}", o.observing),
    };
    Ok(format!("{:?} {at} {what}", line.system()))
}

/// The same, read by the flat `Line` as `outbound-guard replay` read it before.
fn read_before(text: &str) -> Result<String, String> {
    let line = flat::Line::parse(text)?;
    let at = line.start_micros()?;
    let what = match line.entry()? {
        flat::Entry::Call(call) => format!(
            "call {} {:?} {:?} {:?}",
            call.duration_micros, call.outcome, call.cut, line.cause
        ),
        flat::Entry::Transition(t) => format!(
            "transition {:?} from {:?} reason {:?} why {:?} observing {}",
            t.to, t.from, t.reason, t.why, t.observing
        ),
        flat::Entry::Limits {
            read_micros,
            total_micros,
        } => format!("limits {read_micros} {total_micros}"),
        flat::Entry::Observing(observing) => format!("observing {observing}"),
    };
    Ok(format!("{:?} {at} {what}", line.system))
}

#[test]
fn real_recordings_read_as_before_and_are_written_again_as_before() {
    for text in demo_lines().into_iter().chain(docs_lines()) {
        let now = Line::parse(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        let before = flat::Line::parse(&text).unwrap();
        assert_eq!(read_now(&text), read_before(&text), "{text}");
        // Written again: the same bytes as the flat `Line` wrote, and the same fields
        // and values as the line read (the demo's padded `…878.520` is `…878.52`).
        let written = now.to_json();
        assert_eq!(without_limit(&written), before.to_json(), "{text}");
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        assert_eq!(value(&written), value(&text), "{text}");
        assert_eq!(Line::parse(&written).unwrap(), now, "{text}");
    }
}

/// A line as a writer that does not know `bulkhead_limit` writes it: without it.
fn without_limit(text: &str) -> String {
    match text.split_once(r#","bulkhead_limit":"#) {
        Some((before, after)) => before.to_owned() + &after[after.find('}').unwrap()..],
        None => text.to_owned(),
    }
}

/// An adaptive bulkhead's limit, as the recorder writes it, read by the reader as it
/// was before the limit was recorded (`tests/flat`): the limits it always was, the
/// same timeouts, no line it cannot read; read now, the limit too. A limit of 0, or
/// not a whole number, is refused now; before, it was ignored.
#[test]
fn a_recorded_limit_reads_before_as_the_limits_it_always_was() {
    let text =
        Line::bulkhead_limit("sber", 1_796_395_663_120_250, 1_500_000, 2_000_000, 2).to_json();
    assert_eq!(
        text,
        r#"{"system":"sber","start":1796395663120.25,"read_timeout_ms":1500.0,"total_timeout_ms":2000.0,"bulkhead_limit":2}"#
    );
    assert_eq!(
        docs_lines().last(),
        Some(&text),
        "docs/recording.md shows it"
    );
    let before = flat::Line::parse(&text).unwrap();
    assert_eq!(
        before.entry(),
        Ok(flat::Entry::Limits {
            read_micros: 1_500_000,
            total_micros: 2_000_000
        })
    );
    assert_eq!(read_now(&text), read_before(&text));
    let Ok(Line::Limits(limits)) = Line::parse(&text) else {
        panic!("{text}")
    };
    assert_eq!(limits.bulkhead_limit, Some(2));
    for bad in [
        r#"{"system":"s","start":1,"read_timeout_ms":1,"total_timeout_ms":2,"bulkhead_limit":0}"#,
        r#"{"system":"s","start":1,"read_timeout_ms":1,"total_timeout_ms":2,"bulkhead_limit":2.5}"#,
        r#"{"system":"s","start":1,"read_timeout_ms":1,"total_timeout_ms":2,"bulkhead_limit":-1}"#,
    ] {
        assert!(Line::parse(bad).is_err(), "{bad}");
        assert!(read_before(bad).is_ok(), "{bad}");
    }
    let message = Line::parse(
        r#"{"system":"s","start":1,"read_timeout_ms":1,"total_timeout_ms":2,"bulkhead_limit":0}"#,
    );
    assert_eq!(
        message,
        Err("`bulkhead_limit` 0: expected at least 1".into())
    );
}

/// A line in the recorder's own writing reads back and is written again as the very
/// same text.
#[test]
fn the_recorders_lines_are_written_again_as_the_same_text() {
    for text in docs_lines() {
        assert_eq!(Line::parse(&text).unwrap().to_json(), text);
    }
}

/// Lines no recorder writes, read alike: fields of two kinds at once, fields missing,
/// values out of range, and every kind of bad line, with the same words for what is
/// wrong with it.
#[test]
fn odd_and_bad_lines_read_as_before() {
    let lines = [
        // Each kind, its fields in another order, with fields it ignores.
        r#"{"outcome":"failure","start":1000,"system":"sber","status":502}"#,
        r#"{"system":"s\u00e9r","start":"1970-01-01T00:00:00.900Z","duration_ms":1,"outcome":"slow"}"#,
        r#"{ "system" : "sber" , "start" : 1.0005 , "duration_ms" : null , "outcome" : "cancelled" }"#,
        r#"{"system":"sber","start":1002,"transition":"open","from":"closed","why":"sber opened"}"#,
        r#"{"system":"sber","start":1002,"transition":"closed","observing":false}"#,
        r#"{"system":"sber","start":1002,"transition":"open","observing":true,"outcome":"success"}"#,
        r#"{"system":"sber","start":1000,"observing":true,"read_timeout_ms":1,"total_timeout_ms":2}"#,
        r#"{"system":"sber","start":1000,"observing":false,"outcome":"success"}"#,
        r#"{"system":"sber","start":1000,"read_timeout_ms":100.000,"total_timeout_ms":200.000}"#,
        r#"{"system":"sber","start":1000,"read_timeout_ms":1,"total_timeout_ms":2,"outcome":"failure"}"#,
        r#"{"system":"sber","start":1000,"read_timeout_ms":1}"#,
        r#"{"system":"sber","start":1001,"duration_ms":100.5,"outcome":"timeout","cut":"read_timeout"}"#,
        r#"{"system":"sber","start":1001,"duration_ms":0,"outcome":"rejected","cause":"bulkhead_full"}"#,
        r#"{"system":"sber","start":1001,"duration_ms":1e12,"outcome":"success"}"#,
        // Values out of range, and their order: the start before the system.
        r#"{"system":"sber","start":1003,"duration_ms":1,"outcome":"failure","cut":"read_timeout"}"#,
        r#"{"system":"sber","start":1003,"duration_ms":-1,"outcome":"failure"}"#,
        r#"{"system":"sber","start":1003,"duration_ms":-1,"outcome":"success","cut":"read_timeout"}"#,
        r#"{"system":"sber","start":1000,"read_timeout_ms":-1,"total_timeout_ms":1e9}"#,
        r#"{"system":"sber","start":1000,"read_timeout_ms":1,"total_timeout_ms":1e9}"#,
        r#"{"system":"","start":1,"outcome":"success"}"#,
        r#"{"system":"","start":-1,"outcome":"success"}"#,
        r#"{"system":"s","start":1e30,"outcome":"failure"}"#,
        r#"{"system":"s","start":"yesterday","outcome":"failure"}"#,
        r#"{"system":"s","start":1}"#,
        r#"{"system":"s","start":-5}"#,
        // Not a line of this shape.
        r#"{"system":"s","start":1,"outcome":"maybe"}"#,
        r#"{"system":"s","start":1,"outcome":"failure","cut":"connect"}"#,
        r#"{"system":"s","start":1,"observing":"yes"}"#,
        r#"{"system":"s","system":"t","start":1,"outcome":"failure"}"#,
        r#"{"system":"s","start":null,"outcome":"failure"}"#,
        r#"{"start":1,"outcome":"failure"}"#,
        r#"{"system":"s","outcome":"failure"}"#,
        r#"{"system":"s","start":1,"duration_ms":1e400,"outcome":"failure"}"#,
        "[1, 2]",
        "not json",
        r#"{"system":"s","start":1,"dur"#,
        "",
    ];
    for text in lines {
        assert_eq!(read_now(text), read_before(text), "{text}");
    }
}

/// A small generator of test inputs (xorshift), so that a failure repeats.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }

    /// Microseconds: round ones, today's, the extremes.
    fn micros(&mut self) -> u64 {
        match self.next() % 4 {
            0 => self.pick(&[0, 1, 999, 1_000, 1_764_858_808_000_000, u64::MAX]),
            1 => self.next() % 3_600_000_000,
            2 => 1_764_000_000_000_000 + self.next() % 31_536_000_000_000,
            _ => self.next(),
        }
    }
}

/// What the recorder writes, through every constructor: the same bytes as the flat
/// `Line` wrote for the same record, strings that need escaping included.
#[test]
fn every_constructor_writes_the_bytes_it_wrote_before() {
    let names = [
        "sber",
        "",
        "s\"q\n\\",
        "сбер ≥ 30%",
        "\u{7}\u{1F600}",
        "</script>",
    ];
    let mut draws = Draws(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let system = draws.pick(&names);
        let (start, duration) = (draws.micros(), draws.micros());
        let outcome = draws.pick(&Outcome::ALL);
        let cut = draws.pick(&[None, Some(Cut::ReadTimeout)]);
        let cause = draws.pick(&Cause::ALL);
        let cause = draws.pick(&[None, Some(cause)]);
        let (from, to, reason, why) = (
            draws.pick(&names),
            draws.pick(&names),
            draws.pick(&names),
            draws.pick(&names),
        );
        let observing = draws.next() % 2 == 0;
        let total = draws.micros();
        let pairs = [
            (
                Line::call(system, start, duration, outcome, cut, cause),
                flat::Line::call(system, start, duration, outcome, cut, cause),
            ),
            (
                Line::transition(system, start, from, to, reason, why, observing),
                flat::Line::transition(system, start, from, to, reason, why, observing),
            ),
            (
                Line::limits(system, start, duration, total),
                flat::Line::limits(system, start, duration, total),
            ),
            (
                Line::observing(system, start, observing),
                flat::Line::observing(system, start, observing),
            ),
        ];
        for (now, before) in pairs {
            let mut written = Vec::new();
            now.write(&mut written);
            assert_eq!(now.to_json(), before.to_json());
            assert_eq!(written, format!("{}\n", before.to_json()).into_bytes());
        }
    }
}
