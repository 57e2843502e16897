//! Hostile ids on the public API: a client must not be able to steer the
//! service's calls to another path of the upstream, nor open a breaker for everyone
//! with requests that are its own mistakes.

mod common;

use std::collections::BTreeMap;

use outbound_guard::State;
use outbound_guard_tests::upstream::Fault;
use payments_demo::core::domain::CustomerId;
use payments_demo::core::ports::{CustomerPort, CustomerPortError};

/// Ids a client may put into `GET /customers/{id}`, as sent on the wire.
fn hostile_ids() -> Vec<String> {
    let mut ids: Vec<String> = [
        "..%2F_faults",
        "..%2f_faults",
        "%2E%2E%2F_faults",
        "..%2F..%2F_faults",
        "c-1%2F..%2F..%2F_faults",
        "%2F",
        "%2F%2F_faults",
        "%2E%2E",
        "%2E",
        "%00",
        "c-1%00",
        "c-1%3Fx%3D1",
        "c-1%23frag",
        "c-1%5C..%5C_faults",
        "c-1%20x",
        "%E2%80%AE",
        "%25",
        "%252F",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    ids.push("c-".to_owned() + &"9".repeat(10_000));
    ids
}

#[tokio::test]
async fn hostile_ids_leave_every_breaker_closed_and_reach_no_other_upstream_path() {
    let h = common::start(None).await;
    let ids = hostile_ids();
    // Three rounds: more than the customer breaker's minimum of calls.
    let mut answers = Vec::new();
    for _ in 0..3 {
        for id in &ids {
            let answer = common::raw_get(&h.url, &format!("/customers/{id}")).await;
            answers.push((id.clone(), answer));
        }
    }
    let customer = h.container.customers.system_guard().breaker().snapshot();
    let sber = h.container.sber.system_guard().breaker().snapshot();
    let paths = h.customer.faults().paths();
    eprintln!(
        "customer breaker {:?} ({} failures), sber {:?}; upstream paths: {:?}",
        customer.state,
        customer.failures,
        sber.state,
        paths
            .iter()
            .map(|p| &p[..p.len().min(60)])
            .collect::<Vec<_>>()
    );
    let statuses: BTreeMap<u16, usize> =
        answers.iter().fold(BTreeMap::default(), |mut m, (_, a)| {
            *m.entry(a.status).or_default() += 1;
            m
        });
    eprintln!("statuses: {statuses:?}");
    // A valid id still works, and its call reaches the upstream.
    let ok = common::raw_get(&h.url, "/customers/c-7").await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    for (id, answer) in &answers {
        assert!(
            matches!(answer.status, 400 | 404),
            "{id}: {} {}",
            answer.status,
            answer.body
        );
        assert!(
            !answer.body.contains("127.0.0.1") && !answer.body.contains("http://"),
            "{id}: the answer shows an internal URL: {}",
            answer.body
        );
    }
    assert_eq!((customer.state, customer.failures), (State::Closed, 0));
    assert_eq!(sber.state, State::Closed);
    for path in &paths {
        let id = path
            .strip_prefix("/customers/")
            .unwrap_or_else(|| panic!("reached {path}"));
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "reached /customers/ with {id:?}"
        );
    }
    assert!(h.sber.faults().paths().is_empty());
    assert!(paths.is_empty(), "{paths:?}");
    assert_eq!(h.customer.faults().paths(), ["/customers/c-7"]);
}

/// Behind the API's check, the adapter itself keeps whatever id it is given inside one
/// path segment: another caller of the port cannot steer it either.
#[tokio::test]
async fn the_adapter_keeps_any_id_inside_its_path_segment() {
    let h = common::start(None).await;
    let ids = [
        "../_faults",
        "..",
        ".",
        "",
        "a/b",
        "c-1?x=1",
        "c-1#f",
        "%2F",
        "c-1\0",
        "\u{0}",
    ];
    for id in ids {
        let result = h.container.customers.get(&CustomerId(id.to_owned())).await;
        // Found (the fake knows any id starting `c-`), not found, or refused before
        // the call: never an outage.
        assert!(
            matches!(
                result,
                Ok(_) | Err(CustomerPortError::NotFound | CustomerPortError::Request(_))
            ),
            "{id:?}: {result:?}"
        );
    }
    let paths = h.customer.faults().paths();
    eprintln!("upstream paths: {paths:?}");
    for path in &paths {
        let id = path
            .strip_prefix("/customers/")
            .unwrap_or_else(|| panic!("reached {path}"));
        assert!(
            !id.is_empty() && !id.contains('/') && !id.contains('?'),
            "{path}"
        );
        assert!(id != "." && id != "..", "{path}");
    }
    let snapshot = h.container.customers.system_guard().breaker().snapshot();
    assert_eq!((snapshot.state, snapshot.failures), (State::Closed, 0));
}

/// The adapters classify with `outbound_guard_reqwest` and `outbound_guard::http_status`: an upstream 4xx the adapter does
/// not expect is answered 502 (generic, no URL) and never counts; a 503 counts.
#[tokio::test]
async fn upstream_4xx_does_not_count_and_5xx_does() {
    let h = common::start(None).await;
    h.customer.always(Fault::Status(422));
    for _ in 0..15 {
        let answer = common::raw_get(&h.url, "/customers/c-1").await;
        assert_eq!(answer.status, 502, "{}", answer.body);
        assert_eq!(answer.json()["error"], "customer_system_error");
        assert!(!answer.body.contains("127.0.0.1"), "{}", answer.body);
        assert!(!answer.body.contains("422"), "{}", answer.body);
    }
    let snapshot = h.container.customers.system_guard().breaker().snapshot();
    assert_eq!((snapshot.state, snapshot.failures), (State::Closed, 0));

    h.customer.always(Fault::Status(503));
    for _ in 0..15 {
        let _ = common::raw_get(&h.url, "/customers/c-1").await;
    }
    assert_eq!(
        h.container.customers.system_guard().breaker().state(),
        State::Open
    );
}
