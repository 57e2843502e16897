//! The demo's order store is capped: it keeps the latest orders and
//! forgets the oldest, so a long run cannot grow it without bound.

use payments_demo::adapters::out::memory::{InMemoryOrders, DEFAULT_MAX_ORDERS};
use payments_demo::core::domain::{CustomerId, OrderId};
use payments_demo::core::ports::OrderRepository;

#[test]
fn the_store_keeps_the_latest_orders_up_to_its_cap() {
    let store = InMemoryOrders::with_max_orders(3);
    let ids: Vec<OrderId> = (0..5)
        .map(|n| store.insert(CustomerId(format!("c-{n}")), 100).id)
        .collect();
    assert_eq!(store.len(), 3);
    assert!(store.get(ids[0]).is_none());
    assert!(store.get(ids[1]).is_none());
    for id in &ids[2..] {
        assert_eq!(store.get(*id).unwrap().id, *id);
    }
    // Updating a kept order does not evict anything, nor does it revive a forgotten one.
    let mut kept = store.get(ids[4]).unwrap();
    kept.amount = 7;
    store.update(&kept);
    let mut forgotten = kept.clone();
    forgotten.id = ids[0];
    store.update(&forgotten);
    assert_eq!(store.len(), 3);
    assert!(store.get(ids[0]).is_none());
    assert_eq!(store.get(ids[4]).unwrap().amount, 7);
}

#[test]
fn the_default_store_is_capped() {
    let store = InMemoryOrders::default();
    assert_eq!(store.max_orders(), DEFAULT_MAX_ORDERS);
    for n in 0..(DEFAULT_MAX_ORDERS + 10) {
        store.insert(CustomerId("c-1".to_owned()), n as u64);
    }
    assert_eq!(store.len(), DEFAULT_MAX_ORDERS);
}
