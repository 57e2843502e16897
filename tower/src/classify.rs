//! Which HTTP answers and errors count against the breaker: [`TransientHttp`], for hyper's
//! client, `reqwest::Client` (feature `reqwest`) and any service answering
//! `http::Response`s. The status rule is the core's
//! [`http_status::is_transient`](outbound_guard::http_status::is_transient).

use std::time::Duration;

use outbound_guard::http_status::{is_transient, retry_after};

use crate::layer::Classify;

/// The transient classification for HTTP services (`http::Response<B>`), ready-made:
/// an answer with a 5xx, 408 or 429 status counts as a failure, any other answer does
/// not (a 404 or a 422 is the system working), and every `Err` of the service counts
/// (a transport error: refused, reset, timed out), but a hyper client's refusal to send
/// the caller's own malformed request ([`hyper_client::is_transient`](crate::hyper_client::is_transient)).
/// The status rule of Microsoft.Extensions.Http.Resilience's transient predicate,
/// [`outbound_guard::http_status::is_transient`]; tower-http's `ServerErrorsAsFailures`
/// counts 5xx alone, so an overloaded system's 429s would not open the breaker. With the
/// feature `reqwest` it also classifies `reqwest::Client` as a service: an `Err` then
/// counts only when `outbound_guard_reqwest::is_transient` says so. A 429 or 503 with
/// `Retry-After` (seconds or an HTTP date) carries it to the breaker: an opening it
/// starts or joins lasts at least that long, capped by `cb_open_max`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::{Guard, Settings};
/// use outbound_guard_tower::{GuardLayer, TransientHttp};
/// use tower::{service_fn, Layer, Service, ServiceExt};
///
/// let settings = Settings::parse("[systems.sber]", "inline").unwrap();
/// let guard = Guard::new(settings.system("sber").unwrap());
/// let layer = GuardLayer::new(guard.clone()).failure_if(TransientHttp);
/// let mut client = layer.layer(service_fn(|status: u16| async move {
///     Ok::<_, std::io::Error>(http::Response::builder().status(status).body(()).unwrap())
/// }));
/// client.ready().await.unwrap().call(404).await.unwrap();
/// assert_eq!(guard.breaker().snapshot().failures, 0); // an answer
/// client.ready().await.unwrap().call(503).await.unwrap();
/// assert_eq!(guard.breaker().snapshot().failures, 1); // the system in trouble
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TransientHttp;

impl<B, E: 'static> Classify<http::Response<B>, E> for TransientHttp {
    fn is_failure(&self, result: &Result<http::Response<B>, E>) -> bool {
        match result {
            Ok(response) => is_transient(response.status().as_u16()),
            Err(error) => is_transient_error(error),
        }
    }

    fn misses_grpc(&self, result: &Result<http::Response<B>, E>) -> bool {
        result
            .as_ref()
            .is_ok_and(|response| is_grpc(response.headers()))
    }

    /// `Retry-After` of a 429 or 503 answer, in seconds or as an HTTP date.
    fn retry_after(&self, result: &Result<http::Response<B>, E>) -> Option<Duration> {
        let response = result.as_ref().ok()?;
        let header = response.headers().get(http::header::RETRY_AFTER);
        retry_after(
            response.status().as_u16(),
            header.map(http::HeaderValue::as_bytes),
        )
    }
}

/// Whether an answer is gRPC's: `content-type: application/grpc`, `application/grpc+proto`, ….
fn is_grpc(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"))
}

/// Every error counts, but a hyper client's refusal of the caller's own request
/// ([`hyper_client::is_transient`](crate::hyper_client::is_transient)).
fn is_transient_error(error: &dyn std::any::Any) -> bool {
    match error.downcast_ref::<hyper_util::client::legacy::Error>() {
        Some(error) => crate::hyper_client::is_transient(error),
        None => true,
    }
}

/// `reqwest::Client` is a tower `Service`: guarded by a [`GuardLayer`](crate::GuardLayer)
/// with `failure_if(TransientHttp)`, an answer counts by its status (as above), an error
/// by `outbound_guard_reqwest::is_transient` (feature `reqwest`).
// Also compiled for the unit tests, which run it against a real server without the feature.
#[cfg(any(feature = "reqwest", test))]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
impl Classify<reqwest::Response, reqwest::Error> for TransientHttp {
    fn is_failure(&self, result: &Result<reqwest::Response, reqwest::Error>) -> bool {
        match result {
            Ok(response) => is_transient(response.status().as_u16()),
            Err(err) => outbound_guard_reqwest::is_transient(err),
        }
    }

    fn retry_after(&self, result: &Result<reqwest::Response, reqwest::Error>) -> Option<Duration> {
        outbound_guard_reqwest::retry_after(result.as_ref().ok()?)
    }
}

#[cfg(test)]
mod tests;
