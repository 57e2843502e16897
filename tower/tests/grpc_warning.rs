//! The generic layer over a gRPC channel counts none of gRPC's errors (they arrive as
//! HTTP 200 with a `grpc-status`): with an HTTP classifier it says so, once per layer, in
//! a `tracing` warning naming the system and the gRPC layer.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use outbound_guard::{Guard, Settings};
use outbound_guard_tower::{GuardLayer, TransientHttp};
use tower::{service_fn, Layer, Service, ServiceExt};

/// Every event's level and fields, as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<String>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = write!(self.0, " {}={value}", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut log = self.0.lock().unwrap();
        let _ = write!(log, "\n{}:", event.metadata().level());
        event.record(&mut Fields(&mut log));
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

fn guard(system: &str) -> Guard {
    let settings = Settings::parse(&format!("[systems.{system}]"), "inline").unwrap();
    Guard::new(settings.system(system).unwrap())
}

/// An answer with `content_type`, status 200: what a tonic server sends, errors included.
fn answer(content_type: &'static str) -> http::Response<()> {
    http::Response::builder()
        .header(http::header::CONTENT_TYPE, content_type)
        .header("grpc-status", "14")
        .body(())
        .unwrap()
}

fn warnings(log: &str) -> usize {
    log.matches("WARN:").count()
}

#[test]
fn an_http_classifier_shown_grpc_answers_warns_once_per_layer() {
    let capture = Capture::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    tracing::subscriber::with_default(capture.clone(), || {
        runtime.block_on(async {
            let echo = guard("echo");
            let layer = GuardLayer::new(echo.clone()).failure_if(TransientHttp);
            let channel = service_fn(|content_type: &'static str| async move {
                Ok::<_, std::io::Error>(answer(content_type))
            });
            // Two services of one layer (a clone each, as tower's stacks make them).
            let mut first = layer.layer(channel);
            let mut second = layer.layer(channel);
            for _ in 0..3 {
                for service in [&mut first, &mut second] {
                    let response = service.ready().await.unwrap().call("application/grpc");
                    response.await.unwrap();
                }
            }
            // Six `Unavailable`s, none counted: why the warning exists.
            assert_eq!(echo.breaker().snapshot().failures, 0);
        });
    });
    let log = capture.0.lock().unwrap().clone();
    assert_eq!(warnings(&log), 1, "{log}");
    assert!(log.contains("system=echo"), "{log}");
    assert!(log.contains("echo answered gRPC"), "{log}");
    assert!(
        log.contains("outbound_guard_tonic::GrpcGuardLayer"),
        "{log}"
    );
}

#[test]
fn http_answers_and_a_second_layer_are_judged_on_their_own() {
    let capture = Capture::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    tracing::subscriber::with_default(capture.clone(), || {
        runtime.block_on(async {
            let channel = service_fn(|content_type: &'static str| async move {
                Ok::<_, std::io::Error>(answer(content_type))
            });
            let mut http = GuardLayer::new(guard("sber"))
                .failure_if(TransientHttp)
                .layer(channel);
            for content_type in ["application/json", "text/html; charset=utf-8"] {
                let response = http.ready().await.unwrap().call(content_type);
                response.await.unwrap();
            }
            assert_eq!(warnings(&capture.0.lock().unwrap()), 0);
            // `application/grpc+proto` is gRPC too; another layer warns for its own system.
            let mut grpc = GuardLayer::new(guard("fiscal"))
                .failure_if(TransientHttp)
                .layer(channel);
            let response = grpc.ready().await.unwrap().call("application/grpc+proto");
            response.await.unwrap();
        });
    });
    let log = capture.0.lock().unwrap().clone();
    assert_eq!(warnings(&log), 1, "{log}");
    assert!(log.contains("system=fiscal"), "{log}");
}
