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
//! Each guarded call is measured with both bulkheads: the guide's fixed one, and an
//! adaptive one (`bulkhead = "adaptive"`), whose every success is also a sample of its
//! limiter. The figures each measures are printed (`--nocapture`).
//!
//! Run it twice: as is, and with the runtime's `metrics` feature
//! (`cargo test -p outbound-guard-benches --features metrics --test hot_path`), where the
//! guards are built by `Guards` with metrics on (no recorder installed: the facade's
//! no-op handles), so the metrics hooks of every call are inside the budget too.

use outbound_guard::Verdict;
use std::cell::Cell;
use std::hint::black_box;

use outbound_guard::Settings;
use outbound_guard::{Breaker, CallOptions, Guard};
use outbound_guard_benches::{
    op, op_async, runtime, settings, Boom, Mix, FAILURE_RATE, MIN_CALLS, OPEN, TRIALS, WINDOW,
};
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

/// The guard's bulkhead: the guide's fixed one, or an adaptive one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bulkhead {
    Fixed,
    Adaptive,
}

impl Bulkhead {
    const ALL: [Bulkhead; 2] = [Bulkhead::Fixed, Bulkhead::Adaptive];
}

/// The benches' settings file ([`outbound_guard_benches::settings_file`]), its system's
/// bulkhead `bulkhead`.
fn settings_file(bulkhead: Bulkhead) -> Settings {
    match bulkhead {
        Bulkhead::Fixed => outbound_guard_benches::settings_file(),
        Bulkhead::Adaptive => {
            let text = format!(
                "[systems.bench]\ncb_window_size = {WINDOW}\ncb_min_calls = {MIN_CALLS}\n\
                 cb_failure_rate = {FAILURE_RATE}\ncb_open_duration = {}\n\
                 cb_half_open_calls = {TRIALS}\nbulkhead = \"adaptive\"\n",
                OPEN.as_secs_f64()
            );
            let adaptive = Settings::parse(&text, "inline").expect("valid");
            let system = adaptive.system("bench").expect("declared");
            assert!(system.bulkhead_adaptive());
            adaptive
        }
    }
}

/// The guard under test, of `bulkhead`: alone, or (feature `metrics`) built by `Guards`
/// with metrics on, as a service builds it.
fn guard(bulkhead: Bulkhead) -> Guard {
    let file = settings_file(bulkhead);
    #[cfg(feature = "metrics")]
    let guard = outbound_guard::Guards::builder(&file)
        .metrics(true)
        .build()
        .get("bench")
        .expect("system `bench` is declared");
    #[cfg(not(feature = "metrics"))]
    let guard = Guard::new(file.system("bench").expect("system `bench` is declared"));
    assert_eq!(
        guard.settings().bulkhead_adaptive(),
        bulkhead == Bulkhead::Adaptive
    );
    guard
}

/// `CALLS` guarded calls through `Guard::call` after `WARM_UP`, on a current-thread
/// runtime; what the counted calls did.
fn guard_call_counts(bulkhead: Bulkhead, mix: Mix) -> Counts {
    let guard = guard(bulkhead);
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
        // An adaptive bulkhead's limit, from its first limit of 2 (a quarter of its 8
        // permits), where its latency put it: one caller at a time never fills a
        // bulkhead of 2, so it never gets near its ceiling.
        println!(
            "{bulkhead:?} bulkhead: limit {} of {} after {} calls",
            guard.bulkhead_limit(),
            guard.bulkhead_permits(),
            WARM_UP + CALLS
        );
        assert!(bulkhead == Bulkhead::Fixed || guard.bulkhead_limit() < guard.bulkhead_permits());
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
fn card_counts(bulkhead: Bulkhead, mix: Mix) -> Counts {
    let card = Card {
        guard: guard(bulkhead),
    };
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
fn guard_call_judged_counts(bulkhead: Bulkhead, mix: Mix) -> Counts {
    async fn one(guard: &Guard, options: CallOptions<Boom>, mix: Mix, i: u64) -> bool {
        let answer = guard.call_judged(options, op_async(mix, i)).await;
        matches!(answer, Ok(Ok(_)))
    }
    let guard = guard(bulkhead);
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

/// The counted calls of each API through a guard of `bulkhead`, with `mix`: what each
/// did, printed per call.
fn each_api(bulkhead: Bulkhead, mix: Mix) -> [(&'static str, Counts); 3] {
    let apis = [
        ("Guard::call", guard_call_counts(bulkhead, mix)),
        (
            "Guard::call_judged",
            guard_call_judged_counts(bulkhead, mix),
        ),
        ("#[circuit_breaker(system = …)]", card_counts(bulkhead, mix)),
    ];
    for (api, counts) in apis {
        println!(
            "{bulkhead:?} bulkhead, {api}, {mix:?}: {} allocations and {} clock reads per call",
            counts.allocations as f64 / CALLS as f64,
            counts.clock_reads as f64 / CALLS as f64
        );
    }
    apis
}

#[test]
fn the_full_guard_allocates_nothing_per_call() {
    for bulkhead in Bulkhead::ALL {
        for mix in Mix::ALL {
            for (api, counts) in each_api(bulkhead, mix) {
                assert_eq!(
                    counts.allocations, 0,
                    "{bulkhead:?} bulkhead, {api}, {mix:?}: {} allocations in {CALLS} calls",
                    counts.allocations
                );
            }
        }
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
        for bulkhead in Bulkhead::ALL {
            for mix in Mix::ALL {
                for (api, counts) in each_api(bulkhead, mix) {
                    assert!(
                        counts.clock_reads <= 2 * CALLS,
                        "{bulkhead:?} bulkhead, {api}, {mix:?}: {} clock reads in {CALLS} calls",
                        counts.clock_reads
                    );
                    // Exactly two today: the start instant in `timeout()` (deadline and
                    // elapsed check) and the end instant on completion, which is also
                    // what an adaptive bulkhead's limiter samples.
                    assert_eq!(
                        counts.clock_reads,
                        2 * CALLS,
                        "{bulkhead:?} bulkhead, {api}, {mix:?}"
                    );
                }
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
    let guard = guard(Bulkhead::Fixed);
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
