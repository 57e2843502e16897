//! The layer's future is one `GuardedCall` around the service's call, not a boxed
//! future: a call through the layer allocates nothing of its own (a counting global allocator, in
//! a test binary of its own), and the future is `Send` whenever the service's is.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use outbound_guard::{Guard, Settings};
use outbound_guard_tower::{GuardLayer, GuardedError};
use tower::{service_fn, Layer, Service, ServiceExt};

/// The system allocator, counting allocations made while `COUNTING` is set.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method hands the call to `System` unchanged; it only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn assert_send<T: Send>(_: &T) {}

#[test]
fn a_call_through_the_layer_allocates_nothing_and_is_send() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let guard = Guard::new(settings.system("sber").unwrap());
    let mut service = GuardLayer::new(guard.clone()).layer(service_fn(|n: u64| async move {
        Ok::<_, std::io::Error>(n + 1)
    }));
    runtime.block_on(async {
        // Warm up: the runtime's and the guard's first-use allocations.
        for n in 0..10 {
            service.ready().await.unwrap().call(n).await.unwrap();
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for n in 0..1000 {
            let future = service.ready().await.unwrap().call(n);
            assert_send(&future);
            assert_eq!(future.await.unwrap(), n + 1);
        }
        // None per call: a boxed future would make at least 1000. A handful may come
        // from the runtime or a lazily registered `tracing` callsite when other crates
        // of the workspace turn the core's features on.
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert!(
            allocations < 20,
            "{allocations} allocations in 1000 guarded calls"
        );
    });
    // And every call was guarded: counted by the breaker, refused once forced open.
    guard.breaker().act(outbound_guard::ManualAction::ForceOpen);
    let refused = runtime.block_on(async { service.ready().await.unwrap().call(1).await });
    assert!(matches!(refused, Err(GuardedError::Guard(_))));
}
