//! The domain: orders, payments, customers.

use serde::{Deserialize, Serialize};

/// An order's id, given out by the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OrderId(pub u64);

impl std::fmt::Display for OrderId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A customer's id in the customer system.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CustomerId(pub String);

/// An id that cannot be a customer's: empty, longer than [`CustomerId::MAX_LEN`], or
/// with a character other than ASCII letters, digits, `-` and `_`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a customer id: 1 to {max} ASCII letters, digits, `-` or `_`", max = CustomerId::MAX_LEN)]
pub struct InvalidCustomerId;

impl CustomerId {
    /// The longest id the service accepts.
    pub const MAX_LEN: usize = 64;

    /// An id from a client, checked: the customer system's ids are short and plain, so
    /// anything else (a `/`, a `..`, a NUL, 10 kB) is refused before any call is made.
    ///
    /// ```
    /// use payments_demo::core::domain::CustomerId;
    /// assert!(CustomerId::parse("c-42").is_ok());
    /// assert!(CustomerId::parse("../_faults").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidCustomerId`] if `id` is empty, longer than [`MAX_LEN`](Self::MAX_LEN), or
    /// holds anything but ASCII letters, digits, `-` and `_`.
    pub fn parse(id: &str) -> Result<Self, InvalidCustomerId> {
        let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        if id.is_empty() || id.len() > Self::MAX_LEN || !id.bytes().all(plain) {
            return Err(InvalidCustomerId);
        }
        Ok(CustomerId(id.to_owned()))
    }
}

/// The payment system's reference for an order's payment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PaymentRef(pub String);

/// Where an order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    /// Created, but no payment registered yet: "created but not paid".
    Created,
    /// A payment is registered with the payment system.
    Paid,
    /// The payment is confirmed.
    Confirmed,
}

/// An order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// Its id.
    pub id: OrderId,
    /// Who ordered.
    pub customer_id: CustomerId,
    /// The amount, in kopecks.
    pub amount: u64,
    /// Where it stands.
    pub status: OrderStatus,
    /// The payment, once registered.
    pub payment: Option<PaymentRef>,
}

/// A customer, as the customer system knows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Customer {
    /// Their id.
    pub id: CustomerId,
    /// Their name.
    pub name: String,
}
