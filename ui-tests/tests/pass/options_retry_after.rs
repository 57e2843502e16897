//! `retry_after = path`, `failure_if` as a closure, and a generic adapter with a `where`
//! clause, as `docs/adapters.md`'s table of arguments lists them: an outage carrying the
//! upstream's hint opens the breaker for at least that long.
use std::time::Duration;

use outbound_guard::{CircuitBreakerError, Guard, Guards, Settings, State};

#[derive(Debug)]
pub enum PortError {
    Unavailable(#[allow(dead_code)] CircuitBreakerError),
    Busy(Duration),
    Declined,
}

impl PortError {
    fn unavailable(err: CircuitBreakerError) -> Self {
        PortError::Unavailable(err)
    }

    fn hint(&self) -> Option<Duration> {
        match self {
            PortError::Busy(after) => Some(*after),
            _ => None,
        }
    }
}

pub trait Answer {
    fn answer(&self) -> Result<(), PortError>;
}

pub struct Busy;

impl Answer for Busy {
    fn answer(&self) -> Result<(), PortError> {
        Err(PortError::Busy(Duration::from_secs(120)))
    }
}

#[derive(outbound_guard::Guarded)]
pub struct Adapter<T> {
    guard: Guard,
    upstream: T,
}

impl<T> Adapter<T>
where
    T: Answer + Sync,
{
    #[outbound_guard::circuit_breaker(
        system = "sber",
        error_map = PortError::unavailable,
        failure_if = |e: &PortError| !matches!(e, PortError::Declined),
        retry_after = PortError::hint,
    )]
    pub async fn call(&self) -> Result<(), PortError> {
        self.upstream.answer()
    }
}

fn main() {
    let settings =
        Settings::parse("[systems.sber]\ncb_min_calls = 1\ncb_window_size = 1\ncb_open_max = 600", "inline").unwrap();
    let guards = Guards::new(&settings);
    let adapter = Adapter { guard: guards.get("sber").unwrap(), upstream: Busy };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert!(matches!(adapter.call().await, Err(PortError::Busy(_))));
        assert!(matches!(adapter.call().await, Err(PortError::Unavailable(_))));
    });
    let guard = guards.get("sber").unwrap();
    assert_eq!(guard.breaker().state(), State::Open);
    let snapshot = guard.breaker().snapshot();
    assert_eq!(snapshot.retry_hint, Some(Duration::from_secs(120)), "{snapshot:?}");
    assert!(snapshot.open_for.unwrap_or_default() >= Duration::from_secs(120), "{snapshot:?}");
}
