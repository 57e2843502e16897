//! The ready-made classifications: [`TransientHttp`] for HTTP answers, and
//! [`TransientGrpc`] for gRPC statuses (feature `tonic`).

use super::layer::Classify;

/// The transient classification for HTTP services (`http::Response<B>`), ready-made:
/// an answer with a 5xx, 408 or 429 status counts as a failure, any other answer does
/// not (a 404 or a 422 is the system working), and every `Err` of the service counts
/// (a transport error: refused, reset, timed out), but a hyper client's refusal to send
/// the caller's own malformed request (feature `hyper`). The
/// status rule of Microsoft.Extensions.Http.Resilience's transient predicate, and of
/// `outbound_guard::http::is_transient_status` (feature `reqwest`); tower-http's
/// `ServerErrorsAsFailures` counts 5xx alone, so an overloaded system's 429s would not
/// open the breaker. With the `reqwest`
/// feature it also classifies `reqwest::Client` as a service: an `Err` then counts only
/// when `outbound_guard::http::is_transient` says so.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::tower::{GuardLayer, TransientHttp};
/// use outbound_guard::{Guard, Settings};
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
            Ok(response) => crate::status::is_transient(response.status().as_u16()),
            Err(error) => is_transient_error(error),
        }
    }
}

/// Every error counts, but a hyper client's refusal of the caller's own request
/// (feature `hyper`: [`is_transient`](crate::hyper_client::is_transient)).
fn is_transient_error(error: &dyn std::any::Any) -> bool {
    #[cfg(feature = "hyper")]
    if let Some(error) = error.downcast_ref::<hyper_util::client::legacy::Error>() {
        return crate::hyper_client::is_transient(error);
    }
    let _ = error;
    true
}

/// `reqwest::Client` is a tower `Service`: guarded by a [`GuardLayer`](super::GuardLayer) with
/// `failure_if(TransientHttp)`, an answer counts by its status (as above), an error by
/// [`is_transient`](crate::http::is_transient).
#[cfg(feature = "reqwest")]
impl Classify<reqwest::Response, reqwest::Error> for TransientHttp {
    fn is_failure(&self, result: &Result<reqwest::Response, reqwest::Error>) -> bool {
        match result {
            Ok(response) => crate::status::is_transient(response.status().as_u16()),
            Err(err) => crate::http::is_transient(err),
        }
    }
}

/// The transient classification for gRPC calls (feature `tonic`), the default of
/// [`GrpcGuardLayer`](super::GrpcGuardLayer): which statuses say the system is in
/// trouble. A tower-http [`ClassifyResponse`](tower_http::classify::ClassifyResponse), built on its `GrpcErrorsAsFailures`, so
/// the status is read where gRPC puts it: in the response headers (a trailers-only
/// answer, the usual shape of an immediate error) or in the trailers at the end of the
/// body.
///
/// | status | counts | why |
/// |---|---|---|
/// | `Unavailable`, `DeadlineExceeded`, `ResourceExhausted`, `Internal`, `Unknown` | yes | the system is down, overloaded, too slow or broken |
/// | a transport error (refused, reset, the connection lost) | yes | the system cannot be reached |
/// | `Ok` | no | |
/// | `InvalidArgument`, `NotFound`, `AlreadyExists`, `PermissionDenied`, `Unauthenticated`, `FailedPrecondition`, `OutOfRange`, `Aborted`, `Unimplemented`, `Cancelled`, `DataLoss` | no | an answer about the request: the system is working |
/// | no `grpc-status` at all | no | as tower-http reads it |
/// | an HTTP status other than 200 (a proxy's answer) | as its gRPC code | gRPC's mapping: 401, 403, 404 do not count; 429, 502, 503, 504 (`Unavailable`), 400 (`Internal`) and any other do |
///
/// Any other tower-http `ClassifyResponse` can take its place
/// ([`GrpcGuardLayer::failure_if`](super::GrpcGuardLayer::failure_if)), tower-http's
/// own `GrpcErrorsAsFailures` (every status but `Ok` counts) included.
#[cfg(feature = "tonic")]
#[derive(Debug, Clone, Copy, Default)]
pub struct TransientGrpc;

#[cfg(feature = "tonic")]
mod grpc {
    use std::fmt;
    use std::num::NonZeroI32;

    use tower_http::classify::{
        ClassifiedResponse, ClassifyResponse, GrpcCode, GrpcEosErrorsAsFailures,
        GrpcErrorsAsFailures, GrpcFailureClass,
    };

    use super::TransientGrpc;

    /// The codes that are an answer about the request, not the system's trouble.
    const ANSWERS: [GrpcCode; 11] = [
        GrpcCode::Cancelled,
        GrpcCode::InvalidArgument,
        GrpcCode::NotFound,
        GrpcCode::AlreadyExists,
        GrpcCode::PermissionDenied,
        GrpcCode::FailedPrecondition,
        GrpcCode::Aborted,
        GrpcCode::OutOfRange,
        GrpcCode::Unimplemented,
        GrpcCode::DataLoss,
        GrpcCode::Unauthenticated,
    ];

    fn classifier() -> GrpcErrorsAsFailures {
        ANSWERS.into_iter().fold(
            GrpcErrorsAsFailures::new(),
            GrpcErrorsAsFailures::with_success,
        )
    }

    /// gRPC's code for an HTTP status that is not 200 (the gRPC spec's
    /// "HTTP to gRPC status code mapping").
    fn code_of_http(status: http::StatusCode) -> i32 {
        match status.as_u16() {
            400 => 13,             // Internal
            401 => 16,             // Unauthenticated
            403 => 7,              // PermissionDenied
            404 => 12,             // Unimplemented
            429 | 502..=504 => 14, // Unavailable
            _ => 2,                // Unknown
        }
    }

    impl ClassifyResponse for TransientGrpc {
        type FailureClass = GrpcFailureClass;
        type ClassifyEos = GrpcEosErrorsAsFailures;

        fn classify_response<B>(
            self,
            response: &http::Response<B>,
        ) -> ClassifiedResponse<Self::FailureClass, Self::ClassifyEos> {
            if response.status() != http::StatusCode::OK {
                let code = code_of_http(response.status());
                let answer = ANSWERS.into_iter().any(|c| c as i32 == code);
                let class = NonZeroI32::new(code).expect("not Ok");
                return ClassifiedResponse::Ready(if answer {
                    Ok(())
                } else {
                    Err(GrpcFailureClass::Code(class))
                });
            }
            classifier().classify_response(response)
        }

        fn classify_error<E: fmt::Display + 'static>(self, error: &E) -> Self::FailureClass {
            GrpcFailureClass::Error(error.to_string())
        }
    }

    #[cfg(test)]
    mod tests {
        use tower_http::classify::{ClassifiedResponse, ClassifyResponse, GrpcFailureClass};

        use super::TransientGrpc;

        /// The code a proxy's HTTP answer counts as, `None` when it does not count.
        fn counted(status: u16) -> Option<i32> {
            let response = http::Response::builder().status(status).body(()).unwrap();
            match TransientGrpc.classify_response(&response) {
                ClassifiedResponse::Ready(Ok(())) => None,
                ClassifiedResponse::Ready(Err(GrpcFailureClass::Code(code))) => Some(code.get()),
                _ => panic!("an HTTP answer is classified at once"),
            }
        }

        #[test]
        fn a_proxys_answer_counts_as_the_grpc_code_it_maps_to() {
            // gRPC's "HTTP to gRPC status code mapping".
            assert_eq!(counted(400), Some(13)); // Internal
            assert_eq!(counted(401), None); // Unauthenticated
            assert_eq!(counted(403), None); // PermissionDenied
            assert_eq!(counted(404), None); // Unimplemented
            for unavailable in [429, 502, 503, 504] {
                assert_eq!(counted(unavailable), Some(14), "{unavailable}");
            }
            for unknown in [500, 301, 418] {
                assert_eq!(counted(unknown), Some(2), "{unknown}");
            }
        }
    }
}

#[cfg(test)]
mod transient_http_tests {
    use super::{Classify, TransientHttp};

    fn answer(status: u16) -> Result<http::Response<()>, std::io::Error> {
        let response = http::Response::builder().status(status).body(());
        response.map_err(std::io::Error::other)
    }

    #[test]
    fn transient_http_counts_5xx_408_429_and_errors_only() {
        for status in [500, 502, 503, 504, 408, 429] {
            assert!(TransientHttp.is_failure(&answer(status)), "{status}");
        }
        for status in [200, 201, 204, 301, 400, 401, 403, 404, 409, 422] {
            assert!(!TransientHttp.is_failure(&answer(status)), "{status}");
        }
        let refused: Result<http::Response<()>, _> =
            Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(TransientHttp.is_failure(&refused));
    }
}
