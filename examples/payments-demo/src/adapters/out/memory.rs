//! The order store: in memory for the demo. A repository gets no breaker: a local
//! store has no transient "the other side is down" mode (R-RES-CB-X1).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::core::domain::{CustomerId, Order, OrderId, OrderStatus};
use crate::core::ports::OrderRepository;

/// Orders in a map.
#[derive(Debug, Default)]
pub struct InMemoryOrders {
    inner: Mutex<Store>,
}

#[derive(Debug, Default)]
struct Store {
    next: u64,
    orders: HashMap<OrderId, Order>,
}

impl OrderRepository for InMemoryOrders {
    fn insert(&self, customer_id: CustomerId, amount: u64) -> Order {
        let mut store = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        store.next += 1;
        let order = Order {
            id: OrderId(store.next),
            customer_id,
            amount,
            status: OrderStatus::Created,
            payment: None,
        };
        store.orders.insert(order.id, order.clone());
        order
    }

    fn get(&self, id: OrderId) -> Option<Order> {
        let store = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        store.orders.get(&id).cloned()
    }

    fn update(&self, order: &Order) {
        let mut store = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        store.orders.insert(order.id, order.clone());
    }
}
