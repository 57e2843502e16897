//! The order store: in memory, **a demo store with a cap**. It keeps the latest
//! [`DEFAULT_MAX_ORDERS`] orders (or as many as [`InMemoryOrders::with_max_orders`]
//! says) and forgets the oldest as new ones come, so a long run under load cannot
//! grow it without bound (≈ 230 bytes an order: about 23 MB at the cap). A forgotten
//! order answers 404, like one that never was. A real service keeps orders in a
//! database. A repository gets no breaker: a local store has no transient "the other
//! side is down" mode (R-RES-CB-X1).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use crate::core::domain::{CustomerId, Order, OrderId, OrderStatus};
use crate::core::ports::OrderRepository;

/// How many orders the store keeps by default: the latest 100 000.
pub const DEFAULT_MAX_ORDERS: usize = 100_000;

/// Orders in a map, the latest [`DEFAULT_MAX_ORDERS`] of them; see the [module](self).
#[derive(Debug, Default)]
pub struct InMemoryOrders {
    inner: Mutex<Store>,
}

#[derive(Debug)]
struct Store {
    next: u64,
    max: usize,
    /// By id, which grows with each order: the first entry is the oldest.
    orders: BTreeMap<OrderId, Order>,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            next: 0,
            max: DEFAULT_MAX_ORDERS,
            orders: BTreeMap::new(),
        }
    }
}

impl InMemoryOrders {
    /// A store keeping the latest `max` orders (at least one).
    pub fn with_max_orders(max: usize) -> Self {
        InMemoryOrders {
            inner: Mutex::new(Store {
                max: max.max(1),
                ..Store::default()
            }),
        }
    }

    /// How many orders it keeps at most.
    pub fn max_orders(&self) -> usize {
        self.store().max
    }

    /// How many orders it holds.
    pub fn len(&self) -> usize {
        self.store().orders.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl OrderRepository for InMemoryOrders {
    fn insert(&self, customer_id: CustomerId, amount: u64) -> Order {
        let mut store = self.store();
        while store.orders.len() >= store.max {
            store.orders.pop_first();
        }
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
        self.store().orders.get(&id).cloned()
    }

    /// Replaces a kept order; a forgotten one stays forgotten (it would otherwise
    /// come back past the cap).
    fn update(&self, order: &Order) {
        if let Some(kept) = self.store().orders.get_mut(&order.id) {
            kept.clone_from(order);
        }
    }
}
