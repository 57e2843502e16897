//! Wiring: the settings, one guard per system, the adapters built once over them
//! ([`container`]), how port errors become HTTP answers ([`errors`]), and serving.

pub mod container;
pub mod errors;

pub use container::{
    admin_token_from_env, load_settings, load_settings_with, Container, StartupError,
    ADMIN_TOKEN_VAR,
};

/// Serves `router` on `listener` until the task is dropped or the process ends.
///
/// # Errors
///
/// As axum's `serve`.
pub async fn serve(listener: tokio::net::TcpListener, router: axum::Router) -> std::io::Result<()> {
    axum::serve(listener, router).await
}

/// Serves `router` on `listener` until `shutdown` resolves, then shuts down
/// gracefully: stops accepting, closes idle connections, and returns only once every
/// request in flight has been answered (axum's `with_graceful_shutdown`). A process
/// that exits when this returns resets no connection.
///
/// # Errors
///
/// As axum's `serve`.
pub async fn serve_until<F>(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    shutdown: F,
) -> std::io::Result<()>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// A future that resolves with `"SIGTERM"` or `"SIGINT"` at the first of them: what an
/// orchestrator sends to stop a pod, and Ctrl-C. The handlers are installed now, so a
/// signal sent after this returns is never lost (nor does it kill the process). Must
/// be called within a tokio runtime.
///
/// # Errors
///
/// If a handler cannot be installed.
pub fn shutdown_signal(
) -> std::io::Result<impl std::future::Future<Output = &'static str> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        })
    }
}
