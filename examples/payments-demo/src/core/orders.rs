//! The order use cases: create an order and pay for it, confirm its payment.
//!
//! Deciding what an unavailable payment system means for an order is the core's job,
//! not the adapter's: creating an order goes ahead without payment ("created but not
//! paid", answered 409), confirming one cannot (answered 503).

use std::sync::Arc;

use super::domain::{CustomerId, Order, OrderId, OrderStatus};
use super::ports::{OrderRepository, PaymentPort, PaymentPortError};

/// What creating an order came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// Created and its payment registered.
    Paid(Order),
    /// Created, but the payment could not be registered: the order stays `created`,
    /// and confirming it later registers the payment first.
    NotPaid {
        /// The order, status `created`.
        order: Order,
        /// Why it is not paid.
        error: PaymentPortError,
    },
}

/// Why an order could not be confirmed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfirmError {
    /// No such order.
    #[error("no order {0}")]
    NotFound(OrderId),
    /// The payment system failed or was unavailable.
    #[error(transparent)]
    Payment(#[from] PaymentPortError),
}

/// The order use cases over a payment port and an order store.
pub struct Orders<P> {
    payments: Arc<P>,
    repository: Arc<dyn OrderRepository>,
}

impl<P> Clone for Orders<P> {
    fn clone(&self) -> Self {
        Orders {
            payments: Arc::clone(&self.payments),
            repository: Arc::clone(&self.repository),
        }
    }
}

impl<P: PaymentPort> Orders<P> {
    /// The use cases over `payments` and `repository`.
    pub fn new(payments: Arc<P>, repository: Arc<dyn OrderRepository>) -> Self {
        Orders {
            payments,
            repository,
        }
    }

    /// Creates an order, then tries to register its payment.
    pub async fn create(&self, customer_id: CustomerId, amount: u64) -> Created {
        let mut order = self.repository.insert(customer_id, amount);
        match self.payments.register(&order).await {
            Ok(payment) => {
                order.status = OrderStatus::Paid;
                order.payment = Some(payment);
                self.repository.update(&order);
                Created::Paid(order)
            }
            Err(error) => Created::NotPaid { order, error },
        }
    }

    /// Confirms an order's payment, registering it first if creating the order could
    /// not. Confirming a confirmed order changes nothing.
    ///
    /// # Errors
    ///
    /// [`ConfirmError::NotFound`] for an unknown order, [`ConfirmError::Payment`] if
    /// registering or confirming the payment fails.
    pub async fn confirm(&self, id: OrderId) -> Result<Order, ConfirmError> {
        let mut order = self.repository.get(id).ok_or(ConfirmError::NotFound(id))?;
        if order.status == OrderStatus::Confirmed {
            return Ok(order);
        }
        let payment = if let Some(payment) = order.payment.clone() {
            payment
        } else {
            let payment = self.payments.register(&order).await?;
            order.status = OrderStatus::Paid;
            order.payment = Some(payment.clone());
            self.repository.update(&order);
            payment
        };
        self.payments.confirm(&payment).await?;
        order.status = OrderStatus::Confirmed;
        self.repository.update(&order);
        Ok(order)
    }

    /// Reads an order.
    pub fn get(&self, id: OrderId) -> Option<Order> {
        self.repository.get(id)
    }
}
