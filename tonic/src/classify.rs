//! Which gRPC calls count against the breaker: [`TransientGrpc`], read from a call's
//! headers or trailers.

use std::fmt;
use std::num::NonZeroI32;

use tower_http::classify::{
    ClassifiedResponse, ClassifyResponse, GrpcCode, GrpcEosErrorsAsFailures, GrpcErrorsAsFailures,
    GrpcFailureClass,
};

/// The transient classification for gRPC calls, the default of
/// [`GrpcGuardLayer`](crate::GrpcGuardLayer): which statuses say the system is in
/// trouble. A tower-http [`ClassifyResponse`], built on its `GrpcErrorsAsFailures`, so
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
/// ([`GrpcGuardLayer::failure_if`](crate::GrpcGuardLayer::failure_if)), tower-http's
/// own `GrpcErrorsAsFailures` (every status but `Ok` counts) included.
#[derive(Debug, Clone, Copy, Default)]
pub struct TransientGrpc;

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
