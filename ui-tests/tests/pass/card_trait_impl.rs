//! The design card's sentence on a trait-impl method, a native `async fn` in a trait,
//! bare after a `use`: `?` and `return` behave as without the attribute.
use outbound_guard::{circuit_breaker, CircuitBreakerError, Guards, Settings};

#[derive(Debug, PartialEq)]
pub enum PaymentPortError {
    SystemUnavailable(String),
    Declined,
    Parse,
}

impl PaymentPortError {
    fn system_unavailable(err: CircuitBreakerError) -> Self {
        PaymentPortError::SystemUnavailable(err.system().to_owned())
    }
}

impl From<std::num::ParseIntError> for PaymentPortError {
    fn from(_: std::num::ParseIntError) -> Self {
        PaymentPortError::Parse
    }
}

#[allow(async_fn_in_trait)]
pub trait PaymentPort {
    async fn register(&self, amount: &str) -> Result<u64, PaymentPortError>;
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl PaymentPort for SberAdapter {
    #[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
    async fn register(&self, amount: &str) -> Result<u64, PaymentPortError> {
        let amount: u64 = amount.parse()?;
        if amount == 0 {
            return Err(PaymentPortError::Declined);
        }
        Ok(amount)
    }
}

fn main() {
    let settings = Settings::parse("[systems.sber]\ncb_min_calls = 3\ncb_window_size = 3", "inline").unwrap();
    let guards = Guards::new(&settings);
    let adapter = SberAdapter { guard: guards.get("sber").unwrap() };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert_eq!(adapter.register("7").await, Ok(7));
        assert_eq!(adapter.register("x").await, Err(PaymentPortError::Parse));
        assert_eq!(adapter.register("0").await, Err(PaymentPortError::Declined));
        // Two failures of three calls: open, and the refusal comes back as the port's error.
        assert_eq!(
            adapter.register("7").await,
            Err(PaymentPortError::SystemUnavailable("sber".to_owned()))
        );
    });
}
