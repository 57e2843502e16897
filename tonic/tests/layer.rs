//! The gRPC layer's rules, on paused time, over a service that answers as a gRPC
//! server would (statuses in headers or trailers, bodies that stream or hang): what
//! counts, what a refused or timed-out client sees, whose deadline ends a call, and how
//! long a call holds its permit. The same rules against a real tonic server over
//! loopback: `examples/grpc-echo/tests`.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use outbound_guard::{Cause, CircuitBreakerError, Guard, State};
use outbound_guard_tonic::{GrpcBody, GrpcGuardLayer, GrpcGuardService};
use tokio::sync::mpsc;
use tonic::{Code, Status};
use tower::{service_fn, Layer, Service, ServiceExt};

mod common;
use common::{counts, MS, S};

/// A response body fed by the test: frames as they are sent, its end when the sender
/// is dropped.
struct Feed(mpsc::UnboundedReceiver<Result<Frame<Bytes>, std::io::Error>>);

impl Body for Feed {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx)
    }
}

type Sender = mpsc::UnboundedSender<Result<Frame<Bytes>, std::io::Error>>;

/// How the fake server answers one call.
#[derive(Clone, Copy)]
enum Answer {
    /// A trailers-only answer: `grpc-status` in the headers.
    HeadersOnly(Code),
    /// One message, then `grpc-status` in the trailers.
    Trailers(Code),
    /// Headers, then a body the test feeds through the sender it gets.
    Stream,
    /// An HTTP status that is not 200, without gRPC headers (a proxy's answer).
    Http(u16),
    /// A trailers-only answer with `grpc-retry-pushback-ms` in the headers.
    HeadersPushback(Code, &'static str),
    /// One message, then the status and `grpc-retry-pushback-ms` in the trailers.
    TrailersPushback(Code, &'static str),
    /// A proxy's HTTP answer with `Retry-After`.
    HttpRetryAfter(u16, &'static str),
    /// Never answers.
    Hang,
    /// tonic's own timeout error (from the `grpc-timeout` it was sent), after `after`.
    TonicTimeout(Duration),
}

#[derive(Default)]
struct Seen {
    /// The `grpc-timeout` each call carried when it reached the server.
    timeouts: Vec<Option<String>>,
    /// The senders of the `Stream` answers' bodies.
    streams: Vec<Sender>,
}

type Fake = tower::util::BoxCloneSyncService<
    http::Request<()>,
    http::Response<Feed>,
    Box<dyn std::error::Error + Send + Sync>,
>;

fn fake(answer: Arc<Mutex<Answer>>, seen: Arc<Mutex<Seen>>) -> Fake {
    tower::util::BoxCloneSyncService::new(service_fn(move |request: http::Request<()>| {
        let answer = *answer.lock().unwrap();
        let seen = seen.clone();
        async move {
            let timeout = request.headers().get("grpc-timeout");
            let timeout = timeout.map(|v| v.to_str().unwrap().to_owned());
            seen.lock().unwrap().timeouts.push(timeout);
            let (tx, rx) = mpsc::unbounded_channel();
            let mut response = http::Response::builder().status(200);
            match answer {
                Answer::HeadersOnly(code) => {
                    response = response.header("grpc-status", (code as i32).to_string());
                }
                Answer::Trailers(code) => {
                    tx.send(Ok(Frame::data(Bytes::from_static(b"message"))))
                        .unwrap();
                    let mut trailers = http::HeaderMap::new();
                    trailers.insert("grpc-status", (code as i32).to_string().parse().unwrap());
                    tx.send(Ok(Frame::trailers(trailers))).unwrap();
                }
                Answer::Stream => seen.lock().unwrap().streams.push(tx.clone()),
                Answer::Http(status) => response = response.status(status),
                Answer::HeadersPushback(code, ms) => {
                    response = response
                        .header("grpc-status", (code as i32).to_string())
                        .header("grpc-retry-pushback-ms", ms);
                }
                Answer::TrailersPushback(code, ms) => {
                    tx.send(Ok(Frame::data(Bytes::from_static(b"message"))))
                        .unwrap();
                    let mut trailers = http::HeaderMap::new();
                    trailers.insert("grpc-status", (code as i32).to_string().parse().unwrap());
                    trailers.insert("grpc-retry-pushback-ms", ms.parse().unwrap());
                    tx.send(Ok(Frame::trailers(trailers))).unwrap();
                }
                Answer::HttpRetryAfter(status, after) => {
                    response = response.status(status).header("retry-after", after);
                }
                Answer::Hang => std::future::pending::<()>().await,
                Answer::TonicTimeout(after) => {
                    tokio::time::sleep(after).await;
                    return Err(tonic::TimeoutExpired(()).into());
                }
            }
            drop(tx);
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response.body(Feed(rx)).unwrap())
        }
    }))
}

struct Rig {
    guard: Guard,
    answer: Arc<Mutex<Answer>>,
    seen: Arc<Mutex<Seen>>,
    client: GrpcGuardService<Fake>,
}

impl Rig {
    fn new(extra: &str) -> Self {
        Self::with_layer(extra, |layer| layer)
    }

    fn with_layer(extra: &str, configure: impl FnOnce(GrpcGuardLayer) -> GrpcGuardLayer) -> Self {
        // The rig's defaults, unless `extra` sets the key.
        let defaults = [
            "cb_min_calls = 4",
            "cb_window_size = 4",
            "cb_open_duration = 10.0",
            "read_timeout = 4.0",
            "total_timeout = 5.0",
        ];
        let mut table = extra.to_owned();
        for line in defaults {
            let key = line.split(' ').next().unwrap();
            if !extra.contains(key) {
                table = format!("{table}\n{line}");
            }
        }
        let guard = common::guard(&table);
        let answer = Arc::new(Mutex::new(Answer::HeadersOnly(Code::Ok)));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let layer = configure(GrpcGuardLayer::new(guard.clone()));
        let client = layer.layer(fake(answer.clone(), seen.clone()));
        Rig {
            guard,
            answer,
            seen,
            client,
        }
    }

    fn answer(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    fn request(timeout: Option<&str>) -> http::Request<()> {
        let mut request = http::Request::builder().uri("http://echo/echo.Echo/Echo");
        if let Some(timeout) = timeout {
            request = request.header("grpc-timeout", timeout);
        }
        request.body(()).unwrap()
    }

    /// One whole call as tonic makes it: the response, then its body to the end; the
    /// status the client would see (from the headers, the trailers, or an error).
    async fn call(&mut self, timeout: Option<&str>) -> Result<Code, Status> {
        let response = self
            .client
            .ready()
            .await?
            .call(Self::request(timeout))
            .await?;
        let (parts, body) = response.into_parts();
        if let Some(code) = parts.headers.get("grpc-status") {
            return Ok(code_of(code));
        }
        let collected = body.collect().await?;
        Ok(collected
            .trailers()
            .and_then(|t| t.get("grpc-status"))
            .map_or(Code::Ok, code_of))
    }

    /// A call answered with headers and a body the test feeds: the body (pinned, as
    /// tonic's client pins it), its feed.
    async fn stream(&mut self, timeout: Option<&str>) -> (Pin<Box<GrpcBody<Feed>>>, Sender) {
        self.answer(Answer::Stream);
        let client = self.client.ready().await.unwrap();
        let response = client.call(Self::request(timeout)).await.unwrap();
        let feed = self.seen.lock().unwrap().streams.pop().unwrap();
        (Box::pin(response.into_body()), feed)
    }

    fn failures(&self) -> u32 {
        self.guard.breaker().snapshot().failures
    }
}

fn code_of(value: &http::HeaderValue) -> Code {
    Code::from_i32(value.to_str().unwrap().parse().unwrap())
}

fn guard_error(status: &Status) -> &CircuitBreakerError {
    std::error::Error::source(status)
        .and_then(|source| source.downcast_ref::<CircuitBreakerError>())
        .unwrap_or_else(|| panic!("no CircuitBreakerError behind {status:?}"))
}

#[tokio::test(start_paused = true)]
async fn transient_statuses_open_the_breaker_from_headers_and_from_trailers() {
    for answer in [Answer::HeadersOnly as fn(Code) -> Answer, Answer::Trailers] {
        let mut rig = Rig::new("");
        for code in [Code::Unavailable, Code::Internal, Code::Unknown] {
            rig.answer(answer(code));
            assert_eq!(rig.call(None).await.unwrap(), code);
        }
        assert_eq!(counts(rig.guard.breaker()), (State::Closed, 3, 3));
        rig.answer(answer(Code::DeadlineExceeded));
        rig.call(None).await.unwrap();
        assert_eq!(rig.guard.breaker().snapshot().state, State::Open);
        assert_eq!(rig.seen.lock().unwrap().timeouts.len(), 4);
        // Open: refused without reaching the server.
        let refused = rig.call(None).await.unwrap_err();
        assert_eq!(refused.code(), Code::Unavailable);
        assert_eq!(rig.seen.lock().unwrap().timeouts.len(), 4);

        let mut rig = Rig::new("");
        rig.answer(answer(Code::ResourceExhausted));
        rig.call(None).await.unwrap();
        assert_eq!(rig.failures(), 1);
    }
}

#[tokio::test(start_paused = true)]
async fn statuses_about_the_request_do_not_count() {
    for answer in [Answer::HeadersOnly as fn(Code) -> Answer, Answer::Trailers] {
        let mut rig = Rig::new("");
        for code in [
            Code::Ok,
            Code::InvalidArgument,
            Code::NotFound,
            Code::AlreadyExists,
            Code::PermissionDenied,
            Code::Unauthenticated,
            Code::FailedPrecondition,
            Code::OutOfRange,
            Code::Aborted,
            Code::Unimplemented,
        ] {
            rig.answer(answer(code));
            assert_eq!(rig.call(None).await.unwrap(), code);
        }
        assert_eq!(counts(rig.guard.breaker()), (State::Closed, 0, 4));
    }
}

#[tokio::test(start_paused = true)]
async fn a_proxys_http_error_counts_as_its_grpc_code_does() {
    let mut rig = Rig::new("cb_window_size = 10\ncb_min_calls = 10");
    for (status, counted) in [(503, 1), (502, 2), (404, 2), (401, 2), (500, 3), (400, 4)] {
        rig.answer(Answer::Http(status));
        rig.call(None).await.unwrap();
        assert_eq!(rig.failures(), counted, "HTTP {status}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_refusal_is_unavailable_with_the_pushback_and_the_guards_error_as_source() {
    let mut rig = Rig::new("");
    rig.answer(Answer::HeadersOnly(Code::Unavailable));
    for _ in 0..4 {
        rig.call(None).await.unwrap();
    }
    tokio::time::advance(4 * S).await;
    let refused = rig.call(None).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable);
    assert_eq!(refused.message(), "sber: circuit open, trial calls in 6.0s");
    let pushback = refused.metadata().get("grpc-retry-pushback-ms").unwrap();
    assert_eq!(pushback.to_str().unwrap(), "6000");
    assert_eq!(guard_error(&refused).retry_after(), Some(6 * S));

    rig.guard
        .breaker()
        .act(outbound_guard::ManualAction::ForceOpen);
    let forced = rig.call(None).await.unwrap_err();
    assert_eq!(forced.code(), Code::Unavailable);
    assert_eq!(guard_error(&forced).cause(), &Cause::ForcedOpen);
    assert!(forced.metadata().get("grpc-retry-pushback-ms").is_none());
}

#[tokio::test(start_paused = true)]
async fn the_guards_timeout_is_deadline_exceeded_and_counts() {
    let mut rig = Rig::new("");
    rig.answer(Answer::Hang);
    let started = tokio::time::Instant::now();
    let cut = rig.call(None).await.unwrap_err();
    assert_eq!(started.elapsed(), 5 * S);
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    assert!(matches!(guard_error(&cut).cause(), Cause::Timeout { .. }));
    assert_eq!(rig.failures(), 1);
    // The server was told the whole budget.
    assert_eq!(
        rig.seen.lock().unwrap().timeouts,
        [Some("5000000u".to_owned())]
    );
}

#[tokio::test(start_paused = true)]
async fn the_callers_shorter_deadline_ends_the_call_uncounted_and_is_sent_on() {
    let mut rig = Rig::new("");
    rig.answer(Answer::Hang);
    let started = tokio::time::Instant::now();
    let cut = rig.call(Some("1500m")).await.unwrap_err();
    assert_eq!(started.elapsed(), 1500 * MS);
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    assert!(std::error::Error::source(&cut).is_none(), "{cut:?}");
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 0, 0));
    assert_eq!(rig.guard.in_flight(), 0);
    assert_eq!(
        rig.seen.lock().unwrap().timeouts,
        [Some("1500000u".to_owned())]
    );

    // tonic's own timeout, set from the header sent, fires at the same deadline: the
    // caller's, not counted either.
    rig.answer(Answer::TonicTimeout(1500 * MS));
    let cut = rig.call(Some("1500m")).await.unwrap_err();
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 0, 0));

    // A longer one leaves the guard's deadline in charge.
    rig.answer(Answer::Hang);
    let cut = rig.call(Some("60S")).await.unwrap_err();
    assert!(matches!(guard_error(&cut).cause(), Cause::Timeout { .. }));
    assert_eq!(rig.failures(), 1);
    assert_eq!(
        rig.seen.lock().unwrap().timeouts[2].as_deref(),
        Some("5000000u")
    );
}

#[tokio::test(start_paused = true)]
async fn tonics_timeout_from_the_header_we_sent_is_the_guards_timeout() {
    // The channel's timer, set from our `grpc-timeout`, fires on the guard's own tick
    // and its future is polled first: still the guard's timeout, with its error.
    let mut rig = Rig::new("");
    rig.answer(Answer::TonicTimeout(5 * S));
    let cut = rig.call(None).await.unwrap_err();
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    assert!(
        matches!(guard_error(&cut).cause(), Cause::Timeout { .. }),
        "{cut:?}"
    );
    assert_eq!(rig.failures(), 1);
}

#[tokio::test(start_paused = true)]
async fn tonics_own_timeout_before_the_callers_deadline_counts() {
    // A channel timeout shorter than any deadline the layer sent (`Endpoint::timeout`):
    // the system's failure, at once, as the channel's error.
    let mut rig = Rig::new("");
    rig.answer(Answer::TonicTimeout(3 * S));
    let started = tokio::time::Instant::now();
    let cut = rig.call(None).await.unwrap_err();
    assert_eq!(started.elapsed(), 3 * S);
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    let source = std::error::Error::source(&cut).expect("the channel's error");
    assert!(source.is::<tonic::TimeoutExpired>(), "{cut:?}");
    assert_eq!(rig.failures(), 1);
    // Under a longer caller's deadline too.
    let cut = rig.call(Some("4S")).await.unwrap_err();
    assert!(std::error::Error::source(&cut)
        .unwrap()
        .is::<tonic::TimeoutExpired>());
    assert_eq!(rig.failures(), 2);
}

/// A service that cannot take calls: its `poll_ready` fails.
#[derive(Clone, Debug)]
struct Broken;

impl Service<http::Request<()>> for Broken {
    type Response = http::Response<Feed>;
    type Error = std::io::Error;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Err(std::io::Error::other("connection pool closed")))
    }

    fn call(&mut self, _: http::Request<()>) -> Self::Future {
        unreachable!("never ready")
    }
}

#[tokio::test(start_paused = true)]
async fn a_service_that_is_not_ready_says_so_as_a_status() {
    let guard = common::guard("");
    let mut client = GrpcGuardLayer::new(guard).layer(Broken);
    let error = client.ready().await.unwrap_err();
    assert_eq!(error.code(), Code::Unknown);
    assert_eq!(error.message(), "connection pool closed");
}

#[tokio::test(start_paused = true)]
async fn the_bulkhead_wait_counts_against_the_callers_deadline() {
    let mut rig = Rig::new("max_connections = 1\nbulkhead_wait = 1.0\nconnect_timeout = 1.0");
    let (body, _feed) = rig.stream(None).await;
    assert_eq!(rig.guard.in_flight(), 1);
    let started = tokio::time::Instant::now();
    let cut = rig.call(Some("300m")).await.unwrap_err();
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    assert_eq!(started.elapsed(), 300 * MS);
    drop(body);
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_stream_holds_its_permit_until_its_status_and_is_judged_by_it() {
    let mut rig = Rig::new("");
    let (mut body, feed) = rig.stream(None).await;
    for _ in 0..3 {
        tokio::time::advance(S).await;
        feed.send(Ok(Frame::data(Bytes::from_static(b"tick"))))
            .unwrap();
        let frame = body.frame().await.unwrap().unwrap();
        assert!(frame.is_data());
        assert_eq!(
            rig.guard.in_flight(),
            1,
            "the permit is held while the stream runs"
        );
    }
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", "14".parse().unwrap());
    feed.send(Ok(Frame::trailers(trailers))).unwrap();
    assert!(body.frame().await.unwrap().unwrap().is_trailers());
    assert_eq!(rig.guard.in_flight(), 0);
    // An error status after messages; 3 s is past the slow threshold (2 s): one failure.
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_stream_longer_than_total_timeout_is_cut_and_counted() {
    let mut rig = Rig::new("");
    let (mut body, feed) = rig.stream(None).await;
    feed.send(Ok(Frame::data(Bytes::from_static(b"tick"))))
        .unwrap();
    body.frame().await.unwrap().unwrap();
    let cut = body.frame().await.unwrap().unwrap_err();
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    assert!(matches!(guard_error(&cut).cause(), Cause::Timeout { .. }));
    assert!(body.frame().await.is_none());
    assert_eq!(rig.failures(), 1);
    assert_eq!(rig.guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_broken_stream_counts_and_a_dropped_one_does_not() {
    let mut rig = Rig::new("");
    let (mut body, feed) = rig.stream(None).await;
    feed.send(Err(std::io::ErrorKind::ConnectionReset.into()))
        .unwrap();
    let broken = body.frame().await.unwrap().unwrap_err();
    assert_eq!(broken.code(), Code::Unknown);
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 1, 1));

    let (body, _feed) = rig.stream(None).await;
    assert_eq!(rig.guard.in_flight(), 1);
    drop(body);
    assert_eq!(rig.guard.in_flight(), 0);
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn the_callers_deadline_cuts_a_stream_uncounted() {
    let mut rig = Rig::new("");
    let (mut body, _feed) = rig.stream(Some("2S")).await;
    let cut = body.frame().await.unwrap().unwrap_err();
    assert_eq!(cut.code(), Code::DeadlineExceeded);
    assert!(std::error::Error::source(&cut).is_none());
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 0, 0));
    assert_eq!(rig.guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn until_headers_lets_a_stream_outlive_the_guard() {
    let mut rig = Rig::with_layer("", GrpcGuardLayer::until_headers);
    let (mut body, feed) = rig.stream(None).await;
    assert_eq!(rig.guard.in_flight(), 0, "released at the headers");
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 0, 1));
    tokio::time::advance(60 * S).await;
    feed.send(Ok(Frame::data(Bytes::from_static(b"late"))))
        .unwrap();
    assert!(body.frame().await.unwrap().unwrap().is_data());
    // A trailers-only error still counts.
    rig.answer(Answer::HeadersOnly(Code::Unavailable));
    rig.call(None).await.unwrap();
    assert_eq!(rig.failures(), 1);
}

#[tokio::test(start_paused = true)]
async fn any_tower_http_classifier_can_judge() {
    let rig = Rig::new("");
    rig.answer(Answer::Trailers(Code::NotFound));
    let layer = GrpcGuardLayer::new(rig.guard.clone())
        .failure_if(tower_http::classify::GrpcErrorsAsFailures::new());
    let mut client = layer.layer(fake(rig.answer.clone(), rig.seen.clone()));
    let response = client
        .ready()
        .await
        .unwrap()
        .call(Rig::request(None))
        .await
        .unwrap();
    response.into_body().collect().await.unwrap();
    assert_eq!(
        rig.failures(),
        1,
        "tower-http's classifier counts every status but Ok"
    );
}

#[test]
fn the_layers_body_is_what_tonic_requires() {
    fn tonic_ready<T>()
    where
        T: tonic::client::GrpcService<tonic::body::Body> + Clone + Send,
        T::ResponseBody: Body<Data = Bytes> + Send + 'static,
        <T::ResponseBody as Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
    {
    }
    tonic_ready::<GrpcGuardService<tonic::transport::Channel>>();
}

/// A classifier with a bug: it panics on the headers, or at the end of the body.
#[derive(Clone, Copy)]
struct Panicky {
    at_eos: bool,
}

struct PanickyEos;

impl tower_http::classify::ClassifyEos for PanickyEos {
    type FailureClass = ();

    fn classify_eos(self, _: Option<&http::HeaderMap>) -> Result<(), ()> {
        panic!("a classifier's bug, at the end of the body")
    }

    fn classify_error<E: std::fmt::Display + 'static>(self, _: &E) {}
}

impl tower_http::classify::ClassifyResponse for Panicky {
    type FailureClass = ();
    type ClassifyEos = PanickyEos;

    fn classify_response<B>(
        self,
        _: &http::Response<B>,
    ) -> tower_http::classify::ClassifiedResponse<(), PanickyEos> {
        assert!(self.at_eos, "a classifier's bug, on the headers");
        tower_http::classify::ClassifiedResponse::RequiresEos(PanickyEos)
    }

    fn classify_error<E: std::fmt::Display + 'static>(self, _: &E) {}
}

#[tokio::test(start_paused = true)]
async fn a_panicking_classifier_counts_the_call_and_gives_its_permit_back() {
    for at_eos in [false, true] {
        let rig = Rig::new("");
        rig.answer(Answer::Trailers(Code::Ok));
        let layer = GrpcGuardLayer::new(rig.guard.clone()).failure_if(Panicky { at_eos });
        let mut client = layer.layer(fake(rig.answer.clone(), rig.seen.clone()));
        let call = tokio::spawn(async move {
            let response = client.ready().await?.call(Rig::request(None)).await?;
            response.into_body().collect().await.map(drop)
        });
        assert!(
            call.await.unwrap_err().is_panic(),
            "the panic goes on unwinding"
        );
        assert_eq!(
            counts(rig.guard.breaker()),
            (State::Closed, 1, 1),
            "at_eos: {at_eos}"
        );
        assert_eq!(rig.guard.in_flight(), 0);
    }
}

#[tokio::test(start_paused = true)]
async fn the_budget_sent_follows_a_reload_of_total_timeout() {
    let table =
        |total: &str| format!("[systems.echo]\nread_timeout = 4.0\ntotal_timeout = {total}\n");
    let guards = outbound_guard::Guards::new(
        &outbound_guard::Settings::parse(&table("5.0"), "inline").unwrap(),
    );
    let answer = Arc::new(Mutex::new(Answer::HeadersOnly(Code::Ok)));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut client =
        GrpcGuardLayer::new(guards.get("echo").unwrap()).layer(fake(answer, seen.clone()));
    for total in ["5.0", "5.0", "9.0", "9.0"] {
        guards
            .reload(&outbound_guard::Settings::parse(&table(total), "inline").unwrap())
            .unwrap();
        client
            .ready()
            .await
            .unwrap()
            .call(Rig::request(None))
            .await
            .unwrap();
    }
    let sent = seen.lock().unwrap().timeouts.clone();
    let sent: Vec<_> = sent.iter().map(|t| t.as_deref().unwrap()).collect();
    assert_eq!(sent, ["5000000u", "5000000u", "9000000u", "9000000u"]);
}

#[tokio::test(start_paused = true)]
async fn the_response_future_shows_the_callers_deadline() {
    let mut rig = Rig::new("");
    let client = rig.client.ready().await.unwrap();
    let shown = format!("{:?}", client.call(Rig::request(None)));
    assert!(
        shown.starts_with(
            "GrpcResponseFuture { deadline: None, call: Some(GuardedCall { stage: Arrived("
        ),
        "{shown}"
    );
    let shown = format!("{:?}", client.call(Rig::request(Some("2S"))));
    assert!(
        shown.starts_with("GrpcResponseFuture { deadline: Some("),
        "{shown}"
    );
}

/// The server's `grpc-retry-pushback-ms` (headers or trailers), or a proxy's
/// `Retry-After` on a 429 or 503: the opening it causes lasts as long as it asked, capped
/// by `cb_open_max`; garbage or a negative pushback is no hint; a pushback on a status
/// that does not count is ignored.
#[tokio::test(start_paused = true)]
async fn the_servers_pushback_sets_how_long_the_breaker_stays_open() {
    let cases = [
        (
            Answer::HeadersPushback(Code::Unavailable, "120000"),
            120 * S,
        ),
        (
            Answer::TrailersPushback(Code::ResourceExhausted, "45000"),
            45 * S,
        ),
        (
            Answer::HeadersPushback(Code::Unavailable, "999999999"),
            300 * S,
        ),
        (Answer::HeadersPushback(Code::Unavailable, "2000"), 10 * S),
        (Answer::HeadersPushback(Code::Unavailable, "-1"), 10 * S),
        (Answer::TrailersPushback(Code::Unavailable, "soon"), 10 * S),
        (Answer::HttpRetryAfter(503, "90"), 90 * S),
        (Answer::HttpRetryAfter(429, "60"), 60 * S),
    ];
    for (answer, open_for) in cases {
        let mut rig = Rig::new("");
        rig.answer(answer);
        for _ in 0..4 {
            rig.call(None).await.unwrap();
        }
        let snapshot = rig.guard.breaker().snapshot();
        assert_eq!(snapshot.state, State::Open);
        assert_eq!(snapshot.open_for, Some(open_for));
        // The refusal passes the same time on as its own pushback.
        let refused = rig.call(None).await.unwrap_err();
        let pushback = refused.metadata().get("grpc-retry-pushback-ms").unwrap();
        assert_eq!(pushback.to_str().unwrap(), open_for.as_millis().to_string());
    }
    // On an answer that does not count, the pushback is ignored.
    let mut rig = Rig::new("");
    rig.answer(Answer::HeadersPushback(Code::NotFound, "120000"));
    for _ in 0..4 {
        rig.call(None).await.unwrap();
    }
    assert_eq!(counts(rig.guard.breaker()), (State::Closed, 0, 4));
}
