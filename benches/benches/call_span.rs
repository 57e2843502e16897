//! What the `guarded_call` span costs: the full guard with no `tracing` subscriber, with
//! one that does not want the span (an application logging at WARN), and with one that
//! takes it (the cheapest possible: it records nothing). The span must cost next to
//! nothing when no subscriber wants it.
//!
//! `cargo bench -p outbound-guard-benches --bench call_span`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use outbound_guard::Guard;
use outbound_guard_benches::{op_async, runtime, settings, Mix};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// A subscriber that records nothing; `spans` says whether it wants INFO spans.
struct Quiet {
    spans: bool,
}

impl Subscriber for Quiet {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN || (self.spans && metadata.is_span())
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

fn call_span(c: &mut Criterion) {
    let mut g = c.benchmark_group("call_span/1_thread");
    let rt = runtime();
    let guard = Guard::new(&settings());
    let subjects = [
        ("no_subscriber", None),
        ("subscriber_not_wanting_it", Some(Quiet { spans: false })),
        ("subscriber_taking_it", Some(Quiet { spans: true })),
    ];
    for (name, subscriber) in subjects {
        let dispatch = subscriber.map(tracing::Dispatch::new);
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let run = || {
                    rt.block_on(async {
                        let start = std::time::Instant::now();
                        for i in 0..iters {
                            let _ = black_box(guard.call(op_async(Mix::AllOk, black_box(i))).await);
                        }
                        start.elapsed()
                    })
                };
                match &dispatch {
                    None => run(),
                    Some(dispatch) => tracing::dispatcher::with_default(dispatch, run),
                }
            });
        });
    }
    g.finish();
}

criterion_group! {
    name = span;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    targets = call_span
}
criterion_main!(span);
