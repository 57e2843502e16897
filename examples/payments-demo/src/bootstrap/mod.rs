//! Wiring: the settings, one guard per system, the adapters built once over them
//! ([`container`]), how port errors become HTTP answers ([`errors`]), and serving.

pub mod container;
pub mod errors;

pub use container::{load_settings, load_settings_with, Container, StartupError};

/// Serves `router` on `listener` until the task is dropped or the process ends.
pub async fn serve(listener: tokio::net::TcpListener, router: axum::Router) -> std::io::Result<()> {
    axum::serve(listener, router).await
}
