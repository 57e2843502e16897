//! Each system's tonic [`Endpoint`], built from its settings, for a client wrapped in
//! [`GrpcGuardLayer`](crate::GrpcGuardLayer).
//!
//! The endpoint's URI is the system's `base_url` (`http://fiscal:50051`), its
//! `connect_timeout` is applied; the table in
//! [`outbound_guard::settings`](mod@outbound_guard::settings) says what becomes of the
//! other keys. No request-wide [`Endpoint::timeout`] is set: a call cut
//! by the guard's `total_timeout` counts against the breaker and reaches the caller as
//! `DeadlineExceeded`.

use outbound_guard::SystemSettings;
use tonic::transport::Endpoint;

/// Why [`endpoint`] could not build a system's endpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EndpointError {
    /// The system's table has no `base_url`.
    #[error("system `{system}` has no `base_url`: a gRPC endpoint needs one, e.g. base_url = \"http://{system}:50051\"")]
    NoBaseUrl {
        /// The system.
        system: String,
    },
    /// The `base_url` is not a URI tonic connects to.
    #[error("`base_url` of system `{system}` ({url}) is not a gRPC endpoint URI: {source}")]
    BadBaseUrl {
        /// The system.
        system: String,
        /// The `base_url`, its credentials masked.
        url: String,
        /// tonic's error.
        source: tonic::transport::Error,
    },
}

/// A `tonic::transport::Endpoint` for one system: its `base_url`, with its
/// `connect_timeout` applied (the table in
/// [`outbound_guard::settings`](mod@outbound_guard::settings) says what becomes of the
/// other keys). Connect it (`connect_lazy` keeps start-up independent of the
/// system) and wrap the channel in the system's [`GrpcGuardLayer`](crate::GrpcGuardLayer).
///
/// # Errors
///
/// [`EndpointError`] when the system has no `base_url`, or one that is not a URI.
pub fn endpoint(settings: &SystemSettings) -> Result<Endpoint, EndpointError> {
    let system = settings.name();
    let url = settings
        .base_url()
        .ok_or_else(|| EndpointError::NoBaseUrl {
            system: system.to_owned(),
        })?;
    let endpoint =
        Endpoint::from_shared(url.to_owned()).map_err(|source| EndpointError::BadBaseUrl {
            system: system.to_owned(),
            url: outbound_guard::settings::mask_url(url),
            source,
        })?;
    Ok(endpoint.connect_timeout(settings.connect_timeout()))
}

#[cfg(test)]
mod tests {
    use outbound_guard::Settings;

    use super::{endpoint, EndpointError};

    #[test]
    fn an_endpoint_needs_a_base_url_that_is_a_uri() {
        let settings = Settings::parse(
            "[systems.fiscal]\nbase_url = \"http://127.0.0.1:50051\"\n[systems.bare]\n[systems.odd]\nbase_url = \"http://user:pw@fiscal:12:34\"\n",
            "inline",
        )
        .unwrap();
        let fiscal = endpoint(settings.system("fiscal").unwrap()).unwrap();
        assert_eq!(fiscal.uri().to_string(), "http://127.0.0.1:50051/");
        let bare = endpoint(settings.system("bare").unwrap()).unwrap_err();
        assert!(matches!(bare, EndpointError::NoBaseUrl { .. }));
        assert!(
            bare.to_string().contains("system `bare` has no `base_url`"),
            "{bare}"
        );
        // The settings take it (an absolute http URL), the URI parser does not.
        let odd = endpoint(settings.system("odd").unwrap()).unwrap_err();
        assert!(matches!(odd, EndpointError::BadBaseUrl { .. }), "{odd:?}");
        assert!(
            odd.to_string()
                .contains("`base_url` of system `odd` (http://user:***@fiscal:12:34)"),
            "{odd}"
        );
    }
}
