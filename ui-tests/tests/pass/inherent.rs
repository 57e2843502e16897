use outbound_guard::{CircuitBreakerError, Guarded};

#[derive(Debug)]
pub struct PortError(String);

impl PortError {
    fn unavailable(err: CircuitBreakerError) -> Self {
        PortError(err.to_string())
    }
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl SberAdapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn register(&self, amount: u64) -> Result<u64, PortError> {
        if amount == 0 {
            return Err(PortError("zero".into()));
        }
        let doubled: u64 = "2".parse::<u64>().map_err(|e| PortError(e.to_string()))?;
        Ok(amount * doubled)
    }
}

fn main() {}
