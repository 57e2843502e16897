//! A system literal a `macro_rules!` passes on (as `$system:literal`, in an invisible
//! group) is a literal on the method, the block and the derive alike.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

macro_rules! adapter {
    ($name:ident, $system:literal) => {
        #[derive(outbound_guard::Guarded)]
        #[guarded(system = $system)]
        pub struct $name {
            guard: outbound_guard::Guard,
        }

        impl $name {
            #[outbound_guard::circuit_breaker(system = $system, error_map = PortError::unavailable)]
            pub async fn one(&self) -> Result<u64, PortError> {
                Ok(1)
            }
        }

        #[outbound_guard::adapter(system = $system, error_map = PortError::unavailable)]
        impl $name {
            pub async fn two(&self) -> Result<u64, PortError> {
                Ok(2)
            }
        }
    };
}

adapter!(SberAdapter, "sber");
adapter!(CustomerAdapter, "customer");

fn main() {}
