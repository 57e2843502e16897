//! The same service without the guard, for the side-by-side run: out-adapters for the
//! same ports, written as a service without `#[circuit_breaker]` would write them — the
//! same HTTP calls through a client with the same connect and read timeouts, but no
//! bulkhead, no breaker, no total timeout and no slow-call check.
//!
//! They live here, in the scenario, and not among the service's adapters: nothing in
//! the service itself uses them.

use std::sync::Arc;

use outbound_guard::{Guards, Settings, SystemSettings};
use serde::{Deserialize, Serialize};

use crate::adapters::http::{self, AppState};
use crate::adapters::out::memory::InMemoryOrders;
use crate::core::domain::{Customer, CustomerId, Order, PaymentRef};
use crate::core::orders::Orders;
use crate::core::ports::{CustomerPort, CustomerPortError, PaymentPort, PaymentPortError};

/// A client with the system's connect and read timeouts, as the guarded adapters have.
fn client(settings: &SystemSettings) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout())
        .read_timeout(settings.read_timeout())
        .pool_max_idle_per_host(settings.max_keepalive() as usize)
        .no_proxy()
        .build()
        .expect("a plain-HTTP reqwest client builds")
}

/// Sber without a guard.
pub struct UnguardedSber {
    http: reqwest::Client,
    base_url: String,
}

#[derive(Serialize)]
struct RegisterRequest {
    order_id: u64,
    amount: u64,
}

#[derive(Deserialize)]
struct RegisterResponse {
    payment_id: String,
}

#[derive(Deserialize)]
struct DeclineResponse {
    reason: String,
}

fn payment_transport(err: reqwest::Error) -> PaymentPortError {
    PaymentPortError::Transport(err.to_string())
}

impl PaymentPort for UnguardedSber {
    async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        let request = RegisterRequest {
            order_id: order.id.0,
            amount: order.amount,
        };
        let response = self
            .http
            .post(format!("{}/payments", self.base_url))
            .json(&request)
            .send()
            .await
            .map_err(payment_transport)?;
        let status = response.status();
        if status.is_success() {
            let body: RegisterResponse = response.json().await.map_err(payment_transport)?;
            return Ok(PaymentRef(body.payment_id));
        }
        if status == reqwest::StatusCode::PAYMENT_REQUIRED {
            let body: DeclineResponse = response.json().await.map_err(payment_transport)?;
            return Err(PaymentPortError::Declined(body.reason));
        }
        Err(PaymentPortError::Upstream {
            status: status.as_u16(),
        })
    }

    async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
        let url = format!("{}/payments/{}/confirm", self.base_url, payment.0);
        let response = self
            .http
            .post(url)
            .send()
            .await
            .map_err(payment_transport)?;
        match response.status() {
            status if status.is_success() => Ok(()),
            reqwest::StatusCode::NOT_FOUND => Err(PaymentPortError::NotFound),
            status => Err(PaymentPortError::Upstream {
                status: status.as_u16(),
            }),
        }
    }
}

/// The customer system without a guard.
pub struct UnguardedCustomers {
    http: reqwest::Client,
    base_url: String,
}

impl CustomerPort for UnguardedCustomers {
    async fn get(&self, id: &CustomerId) -> Result<Customer, CustomerPortError> {
        let transport = |err: reqwest::Error| CustomerPortError::Transport(err.to_string());
        let url = format!("{}/customers/{}", self.base_url, id.0);
        let response = self.http.get(url).send().await.map_err(transport)?;
        match response.status() {
            status if status.is_success() => response.json().await.map_err(transport),
            reqwest::StatusCode::NOT_FOUND => Err(CustomerPortError::NotFound),
            status => Err(CustomerPortError::Upstream {
                status: status.as_u16(),
            }),
        }
    }
}

/// The service's HTTP API over unguarded adapters talking to `sber_url` and
/// `customer_url`, with the HTTP clients configured from `settings` as the guarded
/// ones are. Its `/health/ready` and admin routes read a set of guards that no call
/// goes through.
///
/// # Panics
///
/// If `settings` lack the `sber` or `customer` system.
pub fn router(settings: &Settings, sber_url: String, customer_url: String) -> axum::Router {
    let system = |name: &str| {
        settings
            .system(name)
            .expect("the demo's settings have sber and customer")
    };
    let sber = Arc::new(UnguardedSber {
        http: client(system("sber")),
        base_url: sber_url,
    });
    let customers = Arc::new(UnguardedCustomers {
        http: client(system("customer")),
        base_url: customer_url,
    });
    let guards = Guards::builder(settings)
        .tracing(false)
        .metrics(false)
        .build();
    http::router(AppState {
        orders: Orders::new(sber, Arc::new(InMemoryOrders::default())),
        customers,
        guards,
        metrics: None,
        admin_token: None,
    })
}
