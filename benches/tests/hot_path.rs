//! The hot path's budget, checked as ordinary tests (not timed): a guarded call makes
//! no allocation and at most two clock reads in steady state; the breaker alone makes
//! neither while closed.
//!
//! Allocations are counted by a global allocator, clock reads by interposing libc's
//! `clock_gettime` (what `std::time::Instant::now`, and so `tokio::time::Instant::now`,
//! calls on Linux). Both counters are per thread and only armed around the measured
//! loop, so the test harness's other threads do not disturb them. The loop runs inside
//! one `block_on` of a current-thread runtime and every call is ready on its first
//! poll, so the runtime itself neither parks nor reads the clock in between.
//!
//! Run it twice: as is, and with the runtime's `metrics` feature
//! (`cargo test -p outbound-guard-benches --features metrics --test hot_path`), where the
//! guards are built by `Guards` with metrics on (no recorder installed: the facade's
//! no-op handles), so the metrics hooks of every call are inside the budget too.

use outbound_guard::Verdict;
use std::cell::Cell;
use std::hint::black_box;

use outbound_guard::{Breaker, CallOptions, Guard};
use outbound_guard_benches::{op, op_async, runtime, settings, Boom, Mix};
use outbound_guard_tests::alloc::{self, CountingAllocator};

/// Calls made before counting, so lazily built state (thread-locals, the runtime's
/// context, first-use initialisation) is not charged to the steady state.
const WARM_UP: u64 = 1_000;
/// Calls counted.
const CALLS: u64 = 10_000;

thread_local! {
    /// `clock_gettime` calls made by this thread while it is armed.
    static CLOCK_READS: Cell<u64> = const { Cell::new(0) };
}

/// Adds one to this thread's clock reads if it is armed. Never allocates; a no-op while
/// the thread's locals are being torn down.
fn count_clock_read() {
    if alloc::armed() {
        let _ = CLOCK_READS.try_with(|c| c.set(c.get() + 1));
    }
}

/// The suite's counting allocator: this thread's allocations while armed.
#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Interposes libc's `clock_gettime`: this executable's definition wins over libc's for
/// every caller in it (std's `Instant::now` included). It counts, then makes the
/// system call itself, bypassing the vDSO: slower, but exact, and only in this test.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod clock {
    /// # Safety
    /// Same contract as libc's `clock_gettime`: `tp` points to a writable `timespec`.
    #[no_mangle]
    pub unsafe extern "C" fn clock_gettime(
        clock: libc::clockid_t,
        tp: *mut libc::timespec,
    ) -> libc::c_int {
        super::count_clock_read();
        // SAFETY: forwarded unchanged to the kernel, under the caller's contract.
        unsafe { libc::syscall(libc::SYS_clock_gettime, clock, tp) as libc::c_int }
    }
}

/// What this thread did while running `f`: allocations and clock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    allocations: u64,
    clock_reads: u64,
}

/// Zeroes this thread's counters and starts counting.
fn arm() {
    CLOCK_READS.with(|c| c.set(0));
    alloc::arm();
}

/// Stops counting and returns what this thread counted since [`arm`].
fn disarm() -> Counts {
    Counts {
        allocations: alloc::disarm(),
        clock_reads: CLOCK_READS.with(Cell::get),
    }
}

/// Runs `f` with this thread's counters armed and returns what it counted.
fn counted(f: impl FnOnce()) -> Counts {
    arm();
    f();
    disarm()
}

/// The guard under test: alone, or (feature `metrics`) built by `Guards` with metrics
/// on, as a service builds it.
fn guard() -> Guard {
    #[cfg(feature = "metrics")]
    {
        let guards = outbound_guard::Guards::builder(&outbound_guard_benches::settings_file())
            .metrics(true)
            .build();
        guards.get("bench").expect("system `bench` is declared")
    }
    #[cfg(not(feature = "metrics"))]
    Guard::new(&settings())
}

/// `CALLS` guarded calls through `Guard::call` after `WARM_UP`, on a current-thread
/// runtime; what the counted calls did.
fn guard_call_counts(mix: Mix) -> Counts {
    let guard = guard();
    runtime().block_on(async {
        for i in 0..WARM_UP {
            let answer = guard.call(op_async(mix, i)).await;
            assert_eq!(answer.expect("admitted"), op(mix, i));
        }
        let mut ok = 0;
        arm();
        for i in WARM_UP..WARM_UP + CALLS {
            let answer = guard.call(op_async(mix, black_box(i))).await;
            ok += u64::from(matches!(answer, Ok(Ok(_))));
        }
        let counts = disarm();
        let expected_ok = (WARM_UP..WARM_UP + CALLS)
            .filter(|&i| op(mix, i).is_ok())
            .count() as u64;
        assert_eq!(
            ok, expected_ok,
            "every call admitted, every outcome returned"
        );
        counts
    })
}

/// The port's error of [`Card`]: the guard's refusal, or the call's own.
#[derive(Debug)]
enum PortError {
    Unavailable,
    Call,
}

impl PortError {
    fn unavailable(_: outbound_guard::CircuitBreakerError) -> Self {
        PortError::Unavailable
    }

    fn is_outage(&self) -> bool {
        matches!(self, PortError::Call)
    }
}

impl From<Boom> for PortError {
    fn from(_: Boom) -> Self {
        PortError::Call
    }
}

/// An adapter written as the guide's design card writes it: the system named on the
/// method, its derive naming none, so each call also checks the guard's system.
#[derive(outbound_guard::Guarded)]
struct Card {
    guard: Guard,
}

impl Card {
    #[outbound_guard::circuit_breaker(
        system = "bench",
        error_map = PortError::unavailable,
        failure_if = PortError::is_outage
    )]
    async fn call(&self, mix: Mix, i: u64) -> Result<u64, PortError> {
        Ok(op_async(mix, i).await?)
    }
}

/// `CALLS` calls of a [`Card`] method after `WARM_UP`.
fn card_counts(mix: Mix) -> Counts {
    let card = Card { guard: guard() };
    runtime().block_on(async {
        for i in 0..WARM_UP {
            let answer = card.call(mix, i).await;
            assert!(!matches!(answer, Err(PortError::Unavailable)), "admitted");
        }
        arm();
        for i in WARM_UP..WARM_UP + CALLS {
            black_box(card.call(mix, black_box(i)).await.is_ok());
        }
        disarm()
    })
}

/// The same through `Guard::call_judged` with a `failure_if`.
fn guard_call_judged_counts(mix: Mix) -> Counts {
    async fn one(guard: &Guard, options: CallOptions<Boom>, mix: Mix, i: u64) -> bool {
        let answer = guard.call_judged(options, op_async(mix, i)).await;
        matches!(answer, Ok(Ok(_)))
    }
    let guard = guard();
    let options = CallOptions::new().failure_if(|_: &Boom| true);
    runtime().block_on(async {
        for i in 0..WARM_UP {
            one(&guard, options, mix, i).await;
        }
        arm();
        for i in WARM_UP..WARM_UP + CALLS {
            black_box(one(&guard, options, mix, black_box(i)).await);
        }
        disarm()
    })
}

/// `CALLS` admissions and recordings on the breaker alone after `WARM_UP`.
fn breaker_counts(mix: Mix) -> Counts {
    let breaker = Breaker::new(&settings());
    let one = |i: u64| {
        let permit = breaker.try_acquire().expect("breaker is closed");
        if op(mix, i).is_ok() {
            permit.finish(Verdict::SUCCESS);
        } else {
            permit.finish(Verdict::FAILURE);
        }
    };
    (0..WARM_UP).for_each(one);
    let counts = counted(|| (WARM_UP..WARM_UP + CALLS).for_each(|i| one(black_box(i))));
    assert_eq!(breaker.state(), outbound_guard::State::Closed);
    counts
}

#[test]
fn the_full_guard_allocates_nothing_per_call() {
    for mix in Mix::ALL {
        let counts = guard_call_counts(mix);
        assert_eq!(
            counts.allocations, 0,
            "Guard::call, {mix:?}: {} allocations in {CALLS} calls",
            counts.allocations
        );
        let counts = guard_call_judged_counts(mix);
        assert_eq!(
            counts.allocations, 0,
            "Guard::call_judged, {mix:?}: {} allocations in {CALLS} calls",
            counts.allocations
        );
        let counts = card_counts(mix);
        assert_eq!(
            counts.allocations, 0,
            "#[circuit_breaker(system = …)], {mix:?}: {} allocations in {CALLS} calls",
            counts.allocations
        );
    }
}

#[test]
fn the_breaker_alone_allocates_nothing_per_call() {
    for mix in Mix::ALL {
        let counts = breaker_counts(mix);
        assert_eq!(
            counts.allocations, 0,
            "breaker, {mix:?}: {} allocations in {CALLS} calls",
            counts.allocations
        );
    }
}

/// The allocation counter really counts: a `Box` is one allocation.
#[test]
fn the_allocation_counter_counts() {
    let counts = counted(|| drop(black_box(Box::new(7_u64))));
    assert_eq!(counts.allocations, 1);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod clock_reads {
    use super::*;

    /// The interposed `clock_gettime` really sees both clocks the runtime may use;
    /// without this, a broken interposition would make the tests below pass on zero.
    #[test]
    fn the_clock_counter_sees_std_and_tokio_instants() {
        let counts = counted(|| {
            black_box(std::time::Instant::now());
            black_box(tokio::time::Instant::now());
        });
        assert_eq!(counts.clock_reads, 2);
    }

    #[test]
    fn the_full_guard_reads_the_clock_at_most_twice_per_call() {
        for mix in Mix::ALL {
            for (api, counts) in [
                ("Guard::call", guard_call_counts(mix)),
                ("Guard::call_judged", guard_call_judged_counts(mix)),
                ("#[circuit_breaker(system = …)]", card_counts(mix)),
            ] {
                assert!(
                    counts.clock_reads <= 2 * CALLS,
                    "{api}, {mix:?}: {} clock reads in {CALLS} calls",
                    counts.clock_reads
                );
                // Exactly two today: the start instant in `timeout()` (deadline and
                // elapsed check) and the end instant on completion.
                assert_eq!(counts.clock_reads, 2 * CALLS, "{api}, {mix:?}");
            }
        }
    }

    #[test]
    fn the_breaker_alone_reads_no_clock_while_closed() {
        for mix in Mix::ALL {
            let counts = breaker_counts(mix);
            assert_eq!(counts.clock_reads, 0, "breaker, {mix:?}");
        }
    }
}

/// The guarded call adds little to the call's own future (a `tracing::Span` held by
/// value once made the permits 88 bytes, and their moves went through `memmove`).
#[test]
fn the_guarded_call_stays_small() {
    use std::mem::size_of_val;
    let guard = guard();
    let call = op_async(Mix::AllOk, 0);
    let own = size_of_val(&call);
    let guarded = size_of_val(&guard.call(call));
    println!("GuardedCall adds {} B to a {own} B future", guarded - own);
    assert!(
        guarded - own <= GUARDED_CALL_OVERHEAD,
        "GuardedCall adds {} B",
        guarded - own
    );
}

/// What `GuardedCall` adds to the call's future: tokio's `Sleep` (set up only if the call
/// does not finish on its first poll) and the permits with the call's instants.
const GUARDED_CALL_OVERHEAD: usize = 240;
