//! A counting global allocator for the tests that measure memory: the system allocator,
//! counting the whole binary's live bytes ([`live_bytes`]) and, per thread while armed
//! ([`arm`], [`disarm`]), the allocations made (`alloc`, `alloc_zeroed`, `realloc`).
//!
//! A test binary installs it itself (a library cannot choose a binary's allocator):
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: outbound_guard_tests::alloc::CountingAllocator =
//!     outbound_guard_tests::alloc::CountingAllocator;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

static LIVE: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Allocations made by this thread while [`ARMED`] is set.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// Whether this thread's counters count.
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

/// The system allocator, counting live bytes and each armed thread's allocations.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

/// Adds one to this thread's allocations if it is armed. Never allocates; a no-op while
/// the thread's locals are being torn down.
fn count_allocation() {
    if armed() {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    }
}

fn grew(by: isize) {
    LIVE.fetch_add(by, Ordering::Relaxed);
}

/// An allocation's size as a change of [`LIVE`].
// Never wraps: a `Layout`'s size never exceeds `isize::MAX` (an invariant of `Layout`),
// nor does `realloc`'s `new_size` (its caller's contract). A checked conversion would
// put a panic in the global allocator for a case that cannot happen.
#[allow(clippy::cast_possible_wrap)]
fn signed(size: usize) -> isize {
    size as isize
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counters only observe sizes, through an atomic and const-initialised thread-local
// `Cell`s, which neither allocate nor unwind.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(signed(layout.size()));
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(signed(layout.size()));
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        grew(-signed(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_allocation();
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grew(signed(new_size) - signed(layout.size()));
        }
        p
    }
}

/// Bytes allocated and not yet freed by the whole binary, as far as this allocator saw
/// (it counts from its installation).
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::SeqCst)
}

/// Zeroes this thread's allocation count and starts counting.
pub fn arm() {
    ALLOCATIONS.with(|c| c.set(0));
    ARMED.with(|a| a.set(true));
}

/// Stops counting and returns this thread's allocations since [`arm`].
pub fn disarm() -> u64 {
    ARMED.with(|a| a.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// Whether this thread is armed: for other per-thread counters that count alongside
/// (the hot-path tests count clock reads too). Never allocates.
pub fn armed() -> bool {
    ARMED.try_with(Cell::get).unwrap_or(false)
}
