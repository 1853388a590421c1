//! Whether the worker pool's helpers keep up, judged by what `parallel_for` saw lately.
//!
//! A helper that the scheduler takes off its core in the middle of an index holds the
//! whole `parallel_for` until it runs again: on a machine whose cores are all busy (an
//! MPI rank or an OpenMP thread per core, another program) that is a scheduler slice,
//! milliseconds, where the index itself takes microseconds. The caller cannot take that
//! index back (the helper is inside it, touching the caller's memory), so the remedy is
//! not to ask for help while that happens: when the caller waited for helpers much longer
//! than an index takes, later calls run on the caller alone for a while (the single-threaded
//! way, which a busy machine gives no reason to beat), then try helpers again. The pause
//! doubles while helpers keep lagging, up to [`MAX_PAUSE`], and halves for every call in
//! which they keep up.
//! Nor does a call ask for help while no core is idle (`idle_core`): a helper would have
//! to take a core from someone, and the caller would wait for the scheduler's choice.
//! A caller that was itself taken off its core during a long split copy pauses helpers the
//! same way ([`record_preempted`]): the cores are oversubscribed, and a split copy then
//! waits for whichever of its threads the scheduler serves last.

use super::flags::trace;
use super::idle_core;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// The first pause after helpers lagged.
const FIRST_PAUSE: Duration = Duration::from_millis(20);
/// The longest pause: a machine that stops being busy gets its helpers back within this.
const MAX_PAUSE: Duration = Duration::from_millis(640);
/// A wait for helpers counts as lagging when it is longer than this many times the
/// caller's own time per index, plus [`SLACK`] (a running helper finishing its last
/// index takes about one index's time).
const LAG_FACTOR: u32 = 4;
const SLACK: Duration = Duration::from_micros(50);

/// The clock's origin, so times fit one atomic word.
static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);
/// What the process's `parallel_for` calls saw.
static GLOBAL: HelperLag = HelperLag::new();

fn now_ns() -> u64 {
    ORIGIN.elapsed().as_nanos() as u64
}

/// Whether this call should run without helpers: they lagged lately, or no core is idle
/// for one right now.
#[inline]
pub fn paused() -> bool {
    let now = now_ns();
    GLOBAL.paused_at(now) || idle_core::none_idle(now)
}

/// Whether no core is idle for a helper right now (`idle_core`), whatever helpers did
/// lately.
#[inline]
pub fn no_idle_core() -> bool {
    idle_core::none_idle(now_ns())
}

/// What one call with helpers saw: the caller ran `own_indices` indices in `own_time`,
/// then waited `waited` for helpers still inside theirs.
pub fn record(own_time: Duration, own_indices: usize, waited: Duration) {
    GLOBAL.record_at(now_ns(), own_time, own_indices, waited);
}

/// How many times the scheduler has taken the calling thread off its core for another
/// (involuntary context switches): a rise across a call of milliseconds means the cores
/// are oversubscribed, where a thread that waits on others loses whole scheduler slices.
pub fn preemptions() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of the C struct (integers and
    // timevals), and getrusage only writes into the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`; RUSAGE_THREAD asks about the caller.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return 0;
    }
    usage.ru_nivcsw as u64
}

/// The caller was taken off its core during a call that used helpers: as a lagging
/// helper, it pauses them (a thread of a split copy that loses its core holds the whole
/// copy, where one thread alone would only be slowed by the same amount).
pub fn record_preempted() {
    GLOBAL.lagged_at(now_ns(), "the caller lost its core during a split call");
}

/// The state behind [`paused`] and [`record`]; times in ns from any fixed origin.
struct HelperLag {
    /// Until when calls run without helpers; 0 when they may use them.
    paused_until: AtomicU64,
    /// The length of the last pause (0: helpers kept up last time).
    last_pause: AtomicU64,
}

impl HelperLag {
    const fn new() -> Self {
        HelperLag {
            paused_until: AtomicU64::new(0),
            last_pause: AtomicU64::new(0),
        }
    }

    #[inline]
    fn paused_at(&self, now: u64) -> bool {
        let until = self.paused_until.load(Relaxed);
        until != 0 && now < until
    }

    fn record_at(&self, now: u64, own_time: Duration, own_indices: usize, waited: Duration) {
        let per_index = own_time / own_indices.max(1) as u32;
        if waited <= per_index * LAG_FACTOR + SLACK {
            // One call that kept up halves the next pause: on a machine busy for good,
            // helpers keep up now and then and lag again (a reset made every such call
            // start over at the shortest pause); an idle machine is back to no pause
            // after a few calls.
            let last = self.last_pause.load(Relaxed);
            if last != 0 {
                let half = last / 2;
                let next = if half < FIRST_PAUSE.as_nanos() as u64 {
                    0
                } else {
                    half
                };
                self.last_pause.store(next, Relaxed);
            }
            return;
        }
        self.lagged_at(now, "a helper kept the caller waiting");
    }

    /// Starts a pause: the first one, or twice the last while helpers keep lagging.
    fn lagged_at(&self, now: u64, why: &str) {
        let last = self.last_pause.load(Relaxed);
        let pause = if last == 0 {
            FIRST_PAUSE.as_nanos() as u64
        } else {
            (last * 2).min(MAX_PAUSE.as_nanos() as u64)
        };
        self.last_pause.store(pause, Relaxed);
        self.paused_until.store(now + pause, Relaxed);
        trace(|| {
            format!(
                "worker pool: helpers paused for {} ms: {why}",
                pause / 1_000_000
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preemptions_only_grow() {
        let before = preemptions();
        std::thread::yield_now();
        assert!(preemptions() >= before);
    }

    #[test]
    fn a_long_wait_pauses_helpers_and_a_short_one_does_not() {
        let lag = HelperLag::new();
        let index = Duration::from_micros(100);
        let first = FIRST_PAUSE.as_nanos() as u64;
        lag.record_at(1_000, index * 8, 8, index);
        assert!(!lag.paused_at(1_000));
        lag.record_at(1_000, index * 8, 8, Duration::from_millis(3));
        assert!(lag.paused_at(1_000) && lag.paused_at(first));
        assert!(!lag.paused_at(1_000 + first));
        // Lagging again doubles the pause, up to the longest.
        lag.record_at(1_000, index * 8, 8, Duration::from_millis(3));
        assert!(lag.paused_at(2 * first));
        for _ in 0..20 {
            lag.record_at(1_000, index * 8, 8, Duration::from_millis(3));
        }
        assert_eq!(lag.last_pause.load(Relaxed), MAX_PAUSE.as_nanos() as u64);
        // Keeping up halves the next pause's length (the current one runs out by itself),
        // down to none.
        lag.record_at(1_000, index * 8, 8, Duration::ZERO);
        assert_eq!(
            lag.last_pause.load(Relaxed),
            MAX_PAUSE.as_nanos() as u64 / 2
        );
        for _ in 0..5 {
            lag.record_at(1_000, index * 8, 8, Duration::ZERO);
        }
        assert_eq!(lag.last_pause.load(Relaxed), 0);
        lag.record_at(5_000_000_000, index * 8, 8, Duration::from_millis(3));
        assert!(!lag.paused_at(5_000_000_000 + first));
    }
}
