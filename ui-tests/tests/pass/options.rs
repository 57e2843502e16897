//! `failure_if`, `slow_as_error` and `crate`: a declined payment is the system
//! answering, not an outage.
use outbound_guard::{CircuitBreakerError, Guarded, Settings, State};

#[derive(Debug, PartialEq)]
pub enum PortError {
    Unavailable,
    Declined,
}

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError::Unavailable
    }

    fn is_outage(&self) -> bool {
        matches!(self, PortError::Unavailable)
    }
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(
        error_map = PortError::unavailable,
        failure_if = PortError::is_outage,
        slow_as_error,
        crate = ::outbound_guard,
    )]
    pub async fn pay(&self) -> Result<(), PortError> {
        Err(PortError::Declined)
    }
}

fn main() {
    let settings = Settings::parse("[systems.sber]\ncb_min_calls = 1\ncb_window_size = 1", "inline").unwrap();
    let adapter = Adapter { guard: outbound_guard::Guard::new(settings.system("sber").unwrap()) };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        for _ in 0..3 {
            assert_eq!(adapter.pay().await, Err(PortError::Declined));
        }
        assert_eq!(adapter.guard.breaker().state(), State::Closed);
    });
}
