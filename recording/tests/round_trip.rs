//! Each kind of line, written and read back through the public API: the same line, the
//! same microseconds, and the errors a reader of a bad line is given.

use outbound_guard_recording::{Call, Cause, Cut, Line, Outcome, Start, Transition};

#[test]
fn every_kind_of_line_reads_back_as_written() {
    let lines = [
        Line::call(
            "sber",
            1_764_858_808_123_456,
            12_345,
            Outcome::Success,
            None,
            None,
        ),
        Line::call(
            "sber",
            1_764_858_808_200_000,
            0,
            Outcome::Rejected,
            None,
            Some(Cause::HalfOpenFull),
        ),
        Line::call(
            "sber",
            1_764_858_808_200_001,
            1_500_000,
            Outcome::Timeout,
            Some(Cut::ReadTimeout),
            None,
        ),
        Line::transition(
            "sber",
            1_764_858_808_190_010,
            "closed",
            "open",
            "failure_rate",
            "sber \"opened\":\n16 of 50 ≥ 30%",
            true,
        ),
        Line::limits("sber", 1_764_858_808_000_000, 1_500_000, 2_000_000),
        Line::observing("sber", 1_764_858_808_000_000, false),
        Line::bulkhead_limit("sber", 1_764_858_808_300_000, 1_500_000, 2_000_000, 3),
    ];
    let mut out = Vec::new();
    for line in &lines {
        line.write(&mut out);
    }
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), lines.len());
    for (line, written) in lines.iter().zip(text.lines()) {
        let read = Line::parse(written).unwrap();
        assert_eq!(&read, line, "{written}");
        assert_eq!(read.system(), "sber");
        // And through serde's `Deserialize`, as part of other data.
        let array = format!("[{written}]");
        let inside: Vec<Line<'_>> = serde_json::from_str(&array).unwrap();
        assert_eq!(inside, [read]);
    }
    assert!(
        text.contains(r#""outcome":"rejected","cause":"half_open_full""#),
        "{text}"
    );
    assert!(
        text.contains(r#""outcome":"timeout","cut":"read_timeout""#),
        "{text}"
    );
    assert!(
        text.contains(r#""read_timeout_ms":1500.0,"total_timeout_ms":2000.0}"#),
        "{text}"
    );
    assert!(
        text.contains(r#""why":"sber \"opened\":\n16 of 50 ≥ 30%","observing":true}"#),
        "{text}"
    );
    let Line::Limits(limits) = &lines[4] else {
        panic!("{:?}", lines[4])
    };
    assert_eq!(
        (limits.read_micros(), limits.total_micros()),
        (1_500_000, 2_000_000)
    );
    assert_eq!(limits.bulkhead_limit, None);
    assert!(
        text.contains(r#""total_timeout_ms":2000.0,"bulkhead_limit":3}"#),
        "{text}"
    );
}

/// Every microsecond of a day reads back as itself (a sample of a year's worth of
/// starts and durations up to an hour).
#[test]
fn microseconds_survive_the_trip_through_milliseconds() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let start = 1_764_000_000_000_000 + x % 31_536_000_000_000;
        let duration = x % 3_600_000_000;
        let text = Line::call("s", start, duration, Outcome::Failure, None, None).to_json();
        let read = Line::parse(&text).unwrap();
        assert_eq!(
            read.start_micros(),
            Ok(i64::try_from(start).unwrap()),
            "{text}"
        );
        let Line::Call(call) = read else {
            panic!("{text}")
        };
        assert_eq!(u64::from(call.duration_micros()), duration, "{text}");
    }
}

#[test]
fn the_older_writer_s_lines_and_converted_ones_read() {
    let older = r#"{"system":"sber","start":1764858808123.456,"duration_ms":0.000,"outcome":"rejected","cause":"open"}"#;
    let line = Line::parse(older).unwrap();
    assert_eq!(line.start_micros(), Ok(1_764_858_808_123_456));
    assert!(matches!(
        line,
        Line::Call(Call {
            cause: Some(Cause::Open),
            ..
        })
    ));
    let converted = r#"{"system":"sber","start":"1970-01-01T00:00:00.900Z","duration_ms":1,"outcome":"failure"}"#;
    let line = Line::parse(converted).unwrap();
    assert_eq!(line.start_micros(), Ok(900_000));
    assert_eq!(
        line.start(),
        &Start::Text("1970-01-01T00:00:00.900Z".into())
    );
    // A converted line written again keeps its start as it came.
    assert_eq!(line.to_json(), converted.replace(":1,", ":1.0,"));
    // A transition without the fields the recorder adds: read, and written without them.
    let bare = r#"{"system":"sber","start":1002.0,"transition":"open"}"#;
    let line = Line::parse(bare).unwrap();
    let Line::Transition(Transition {
        ref to,
        from: None,
        reason: None,
        why: None,
        observing: false,
        ..
    }) = line
    else {
        panic!("{line:?}")
    };
    assert_eq!(to, "open");
    assert_eq!(line.to_json(), bare);
}

#[test]
fn a_bad_line_says_what_is_wrong_with_it() {
    let error = |text: &str| Line::parse(text).unwrap_err();
    let unknown = error(r#"{"system":"s","start":1,"outcome":"maybe"}"#);
    assert!(
        unknown.starts_with("not a record: unknown variant `maybe`"),
        "{unknown}"
    );
    assert!(unknown.contains("`success`"), "{unknown}");
    assert!(unknown.ends_with("(column 41)"), "{unknown}");
    let cut = error(r#"{"system":"s","start":1,"outcome":"failure","cut":"read_timeout"}"#);
    assert_eq!(cut, "`cut` \"read_timeout\": expected on a `timeout` only");
    let far = error(r#"{"system":"s","start":1e30,"outcome":"failure"}"#);
    assert!(far.starts_with("`start` 1e30"), "{far}");
    assert!(error(r#"{"system":"s","start":1,"dur"#).starts_with("truncated"));
    assert_eq!(
        error(r#"{"system":"","start":1,"outcome":"success"}"#),
        "`system` is empty"
    );
    assert_eq!(
        error(r#"{"system":"s","start":1}"#),
        "neither `outcome`, `transition` nor `observing`"
    );
    let negative = error(r#"{"system":"s","start":1,"duration_ms":-0.5,"outcome":"success"}"#);
    assert_eq!(negative, "`duration_ms` -0.5: expected milliseconds ≥ 0");
    let limit = error(r#"{"system":"s","start":1,"read_timeout_ms":1,"total_timeout_ms":1e9}"#);
    assert_eq!(
        limit,
        "`total_timeout_ms` 1000000000: expected milliseconds between 0 and a day"
    );
    // Through serde, inside other data: the same words, with serde's position.
    let inside =
        serde_json::from_str::<Vec<Line<'_>>>(r#"[{"system":"","start":1,"outcome":"success"}]"#)
            .unwrap_err()
            .to_string();
    assert!(inside.starts_with("`system` is empty"), "{inside}");
}
