//! Spreading one launch (or one large copy) over the worker pool: `parallel_for` runs
//! `body(i)` for every index on the calling thread and on idle workers, borrowing `body`
//! for the duration of the call.
//!
//! Indices are claimed one at a time, so a helper holds at most the one it is inside:
//! every index no thread has begun is the caller's to take, and the caller waits only for
//! indices already begun. When that wait shows helpers being kept off their cores (a busy
//! machine), later calls run on the caller alone for a while (`helper_lag`), unless
//! they turn out long: then the helpers' share of the busy cores is worth more than the
//! wait for one of them at the end.

use super::helper_lag;
use super::worker_pool::{panic_text, WorkerPool};
use parking_lot::{Condvar, Mutex};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the caller works alone, while helpers are paused, before it asks them to
/// join for the rest: a scheduler tick at 250 Hz. On cores that are all busy, a thread
/// sharing its core runs half the time; work that outlasts a tick gains more from a
/// second thread's share than it loses waiting, at its end, for a helper the scheduler
/// took off its core (at most a slice). Measured with the saxpy kernel (12 ms alone on a
/// core of its own, 19-23 ms sharing one) beside a `yes` per core: 13-17 ms when it
/// shared, where it stayed at 19-23 ms alone; no change when it had a core of its own.
const ALONE_AT_MOST: Duration = Duration::from_millis(4);

/// Runs `body(i)` for every `i` in `0..count`, on the calling thread and on as many
/// idle workers as can help, and returns when all are done. The caller takes indices
/// too, so the call finishes even when every worker is busy elsewhere. While helpers
/// are paused (`helper_lag`) the caller starts alone, and asks for them only if the
/// indices outlast [`ALONE_AT_MOST`]. A panic in `body` stops further indices and is
/// returned as its message.
pub fn parallel_for(count: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), String> {
    parallel_for_paused_or_not(count, body, helper_lag::paused)
}

/// `parallel_for`, with `paused` saying whether helpers are paused (asked only when
/// there are helpers to ask).
fn parallel_for_paused_or_not(
    count: usize,
    body: &(dyn Fn(usize) + Sync),
    paused: impl FnOnce() -> bool,
) -> Result<(), String> {
    let pool = WorkerPool::global();
    let shared = Arc::new(Shared::detached(count));
    if count <= 1 || pool.threads() <= 1 {
        return run_indices(&shared, body, None).0;
    }
    if paused() {
        let (alone, _) = run_indices(&shared, body, Some(Instant::now() + ALONE_AT_MOST));
        if alone.is_err() || shared.next.load(Ordering::Relaxed) + 1 >= count {
            // Failed, or at most one index left: no helper could take any of it.
            return alone.and_then(|()| run_indices(&shared, body, None).0);
        }
    }
    with_helpers(&shared, body, pool, true)
}

/// `parallel_for` for work that feeds a DMA engine (a GPU's staging copies): helpers are
/// asked whenever a core is idle, whatever they did lately, and how long they kept the
/// caller is not held against later calls. A GPU transfer waits for the whole copy, so a
/// helper late by a slice costs less than copying on one core (a third of the bandwidth
/// on an H200's host); the host device's own kernels and copies keep their judgement.
pub fn parallel_for_dma(count: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), String> {
    let pool = WorkerPool::global();
    let shared = Arc::new(Shared::detached(count));
    if count <= 1 || pool.threads() <= 1 || helper_lag::no_idle_core() {
        return run_indices(&shared, body, None).0;
    }
    with_helpers(&shared, body, pool, false)
}

/// Runs the indices of `shared` left on the caller and on helpers.
fn with_helpers(
    shared: &Arc<Shared>,
    body: &(dyn Fn(usize) + Sync),
    pool: &WorkerPool,
    judged: bool,
) -> Result<(), String> {
    let count = shared.count;
    let left = count.saturating_sub(shared.next.load(Ordering::Relaxed));
    // Helpers get `body` as a raw pointer, which may outlive the borrow harmlessly: they
    // turn it back into a reference only between `enter` and `leave`, and `finish` below
    // waits until no helper is inside and none can enter again.
    // SAFETY: only the lifetime of the (fat) pointer changes, not its value or type.
    let body_ptr = BodyPtr(unsafe {
        std::mem::transmute::<
            *const (dyn Fn(usize) + Sync + '_),
            *const (dyn Fn(usize) + Sync + 'static),
        >(body)
    });
    for _ in 0..left.saturating_sub(1).min(pool.threads() - 1) {
        let shared = shared.clone();
        let body_ptr = BodyPtr(body_ptr.0);
        pool.spawn(move || {
            let body_ptr = body_ptr; // the whole `Send` wrapper, not its field
            if shared.enter() {
                // SAFETY: entered, so the caller is still inside `parallel_for` and `body`
                // is alive until this helper calls `leave` (see above).
                let body = unsafe { &*body_ptr.0 };
                let (result, _) = run_indices(&shared, body, None);
                shared.leave(result);
            }
        });
    }
    let start = Instant::now();
    let (mine, own_indices) = run_indices(shared, body, None);
    let own_time = start.elapsed();
    let result = shared.finish(mine);
    if judged && own_indices < left {
        // Helpers took part: how long they kept the caller after its own last index.
        helper_lag::record(own_time, own_indices, start.elapsed() - own_time);
    }
    result
}

/// Whether `parallel_for` is running on the caller alone for now (helpers lagged lately):
/// work that is faster as one piece than as many (a copy: glibc copies large blocks with
/// non-temporal stores, pieces with ordinary ones) is then better done whole.
#[inline]
pub fn helpers_paused() -> bool {
    helper_lag::paused()
}

/// The caller's `body`, sent to helpers.
struct BodyPtr(*const (dyn Fn(usize) + Sync + 'static));
// SAFETY: `body` is `Sync`, so using it from helper threads is sound; the pointer is only
// dereferenced while the caller keeps it alive (see `parallel_for`).
unsafe impl Send for BodyPtr {}

struct HelperState {
    closed: bool,
    active: usize,
    error: Option<String>,
}

struct Shared {
    next: AtomicUsize,
    count: usize,
    stop: AtomicBool,
    state: Mutex<HelperState>,
    done: Condvar,
}

impl Shared {
    fn detached(count: usize) -> Self {
        Shared {
            next: AtomicUsize::new(0),
            count,
            stop: AtomicBool::new(false),
            state: Mutex::new(HelperState {
                closed: false,
                active: 0,
                error: None,
            }),
            done: Condvar::new(),
        }
    }

    fn enter(&self) -> bool {
        let mut s = self.state.lock();
        if s.closed || self.next.load(Ordering::Relaxed) >= self.count {
            return false;
        }
        s.active += 1;
        true
    }

    fn leave(&self, result: Result<(), String>) {
        let mut s = self.state.lock();
        s.active -= 1;
        if let Err(e) = result {
            s.error.get_or_insert(e);
        }
        self.done.notify_all();
    }

    fn finish(&self, mine: Result<(), String>) -> Result<(), String> {
        let mut s = self.state.lock();
        s.closed = true;
        while s.active > 0 {
            self.done.wait(&mut s);
        }
        mine?;
        match s.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Runs indices until none is left, one panicked, or (for the caller working alone)
/// `until` has passed; returns how many this thread ran.
fn run_indices(
    shared: &Shared,
    body: &(dyn Fn(usize) + Sync),
    until: Option<Instant>,
) -> (Result<(), String>, usize) {
    let mut ran = 0;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return (Ok(()), ran);
        }
        if until.is_some_and(|until| Instant::now() >= until) {
            return (Ok(()), ran);
        }
        let i = shared.next.fetch_add(1, Ordering::Relaxed);
        if i >= shared.count {
            return (Ok(()), ran);
        }
        ran += 1;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(i))) {
            shared.stop.store(true, Ordering::Relaxed);
            return (Err(panic_text(&panic)), ran);
        }
    }
}
/// Runs `piece(offset, length)` over `[0, size)` on every core: pieces of `chunk` bytes,
/// then the last stretch (two pieces per thread) in pieces of `small` bytes. Both are
/// multiples of what a piece must hold whole. Returns false if a piece panicked (then the
/// caller redoes the whole range).
pub fn in_pieces(
    size: usize,
    chunk: usize,
    small: usize,
    piece: &(dyn Fn(usize, usize) + Sync),
) -> bool {
    let preempted_before = helper_lag::preemptions();
    let done = pieces_with(size, chunk, small, piece, parallel_for);
    if helper_lag::preemptions() > preempted_before {
        helper_lag::record_preempted();
    }
    done
}

/// `in_pieces` over `parallel_for_dma`: for copies that feed a DMA engine.
pub fn in_pieces_for_dma(
    size: usize,
    chunk: usize,
    small: usize,
    piece: &(dyn Fn(usize, usize) + Sync),
) -> bool {
    pieces_with(size, chunk, small, piece, parallel_for_dma)
}

/// Copies from this size on are split, in pieces of `DMA_PIECE` bytes (a quarter of that
/// toward the end, so the threads finish together).
const DMA_SPLIT_MIN: usize = 512 << 10;
const DMA_PIECE: usize = 256 << 10;

/// Copies `len` bytes between a GPU's pinned staging memory and pageable memory, on the
/// calling thread and on idle workers (`parallel_for_dma`): one core alone copies at a
/// fraction of what the memory allows (11 GB/s of an H200 host's 40 with four threads),
/// and the GPU's transfer waits for the copy. With no idle core, the caller copies alone.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes, the two ranges disjoint.
pub unsafe fn copy_for_dma(dst: usize, src: usize, len: usize) {
    // SAFETY: the caller's promise, for the whole range and for each piece inside it.
    let copy = |at: usize, n: usize| unsafe {
        super::copy::copy_bytes((dst + at) as *mut u8, (src + at) as *const u8, n)
    };
    if len < DMA_SPLIT_MIN || !in_pieces_for_dma(len, DMA_PIECE, DMA_PIECE / 4, &copy) {
        copy(0, len);
    }
}

type ParallelFor = fn(usize, &(dyn Fn(usize) + Sync)) -> Result<(), String>;

fn pieces_with(
    size: usize,
    chunk: usize,
    small: usize,
    piece: &(dyn Fn(usize, usize) + Sync),
    run: ParallelFor,
) -> bool {
    let threads = WorkerPool::global().threads();
    let tail = (2 * threads * chunk).min(size);
    let big_end = (size - tail) / chunk * chunk;
    let big = big_end / chunk;
    let pieces = big + (size - big_end).div_ceil(small);
    run(pieces, &|i| {
        let (at, n) = if i < big {
            (i * chunk, chunk)
        } else {
            (big_end + (i - big) * small, small)
        };
        piece(at, n.min(size - at));
    })
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_index_runs_once() {
        let hits: Vec<AtomicU64> = (0..1000).map(|_| AtomicU64::new(0)).collect();
        parallel_for(hits.len(), &|i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn dma_pieces_cover_every_byte_once() {
        for size in [1usize, 4096, (4 << 20) + 17] {
            let hits: Vec<AtomicU64> = (0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
            let covered = AtomicU64::new(0);
            assert!(in_pieces_for_dma(size, 256 << 10, 64 << 10, &|at, n| {
                assert!(at % 64 == 0 && at + n <= size);
                hits[at / 64].fetch_add(1, Ordering::Relaxed);
                covered.fetch_add(n as u64, Ordering::Relaxed);
            }));
            assert_eq!(covered.load(Ordering::Relaxed), size as u64);
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) <= 1));
        }
    }

    #[test]
    fn a_panic_is_reported() {
        let r = parallel_for(64, &|i| {
            if i == 7 {
                panic!("index seven");
            }
        });
        assert_eq!(r.unwrap_err(), "index seven");
    }

    /// A helper kept from running (here: blocked inside its index until every other
    /// index is done) holds only that index: the caller runs all the others.
    #[test]
    fn a_stalled_helper_holds_only_its_own_index() {
        let count = 64;
        let done = AtomicU64::new(0);
        let caller = std::thread::current().id();
        let by_helpers = AtomicU64::new(0);
        parallel_for(count, &|_| {
            if std::thread::current().id() != caller
                && by_helpers.fetch_add(1, Ordering::Relaxed) == 0
            {
                while done.load(Ordering::Acquire) < count as u64 - 1 {
                    std::thread::yield_now();
                }
            }
            done.fetch_add(1, Ordering::Release);
        })
        .unwrap();
        assert_eq!(done.load(Ordering::Relaxed), count as u64);
    }

    /// While helpers are paused, short work stays on the caller and work that outlasts
    /// `ALONE_AT_MOST` asks helpers for the rest; every index runs once either way.
    #[test]
    fn paused_work_asks_for_helpers_only_when_long() {
        // Paused for these calls only: the process's pause would slow other tests.
        let paused = || true;
        let caller = std::thread::current().id();
        let elsewhere = AtomicU64::new(0);
        parallel_for_paused_or_not(
            64,
            &|_| {
                if std::thread::current().id() != caller {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
            },
            paused,
        )
        .unwrap();
        assert_eq!(elsewhere.load(Ordering::Relaxed), 0, "short work ran alone");

        let hits: Vec<AtomicU64> = (0..200).map(|_| AtomicU64::new(0)).collect();
        let start = Instant::now();
        parallel_for_paused_or_not(
            hits.len(),
            &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
                if std::thread::current().id() != caller {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(Duration::from_millis(1));
                if start.elapsed() > ALONE_AT_MOST * 2 {
                    // Helpers were asked for by now: give one time to arrive (a worker busy
                    // with another test's task may come late), then go on regardless.
                    let give_up = Instant::now() + Duration::from_secs(10);
                    while elsewhere.load(Ordering::Relaxed) == 0 && Instant::now() < give_up {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            },
            paused,
        )
        .unwrap();
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        assert!(
            elsewhere.load(Ordering::Relaxed) > 0,
            "long work was shared"
        );
    }

    #[test]
    fn nested_parallel_for_completes() {
        let total = AtomicU64::new(0);
        parallel_for(8, &|_| {
            parallel_for(8, &|_| {
                total.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        })
        .unwrap();
        assert_eq!(total.load(Ordering::Relaxed), 64);
    }
}
