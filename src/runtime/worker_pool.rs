//! The worker pool shared by every queue and every kernel launch: one thread per core,
//! fed from one channel. Nothing that runs on it blocks waiting for other pool work (a
//! queue waiting on an event gives its thread back), so the pool cannot deadlock.

use crossbeam_channel::{unbounded, Receiver, Sender, TryRecvError};
use parking_lot::{Condvar, Mutex};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// How long an idle worker keeps looking for work before it sleeps. Waking a sleeping
/// thread costs tens of microseconds; kernels launched back to back, and queues fed a
/// command at a time, find a spinning worker instead (OpenMP runtimes do the same).
const SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(100);

type Task = Box<dyn FnOnce() + Send>;

pub struct WorkerPool {
    sender: Sender<Task>,
    threads: usize,
}

static GLOBAL: LazyLock<WorkerPool> = LazyLock::new(|| {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    WorkerPool::new(threads)
});

impl WorkerPool {
    /// The process-wide pool, started on first use.
    pub fn global() -> &'static WorkerPool {
        &GLOBAL
    }

    fn new(threads: usize) -> Self {
        let (sender, receiver) = unbounded::<Task>();
        for i in 0..threads {
            let receiver: Receiver<Task> = receiver.clone();
            std::thread::Builder::new()
                .name(format!("offload-worker-{i}"))
                .spawn(move || {
                    while let Some(task) = next_task(&receiver) {
                        // A task reports its own failures; a panic must not kill the worker.
                        let _ = catch_unwind(AssertUnwindSafe(task));
                    }
                })
                .expect("the offload worker pool could not start a thread");
        }
        WorkerPool { sender, threads }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn spawn(&self, task: impl FnOnce() + Send + 'static) {
        // The receivers live as long as the process, so sending cannot fail.
        let _ = self.sender.send(Box::new(task));
    }

    /// Runs `body(i)` for every `i` in `0..count`, on the calling thread and on as many
    /// idle workers as can help, and returns when all are done. The caller takes indices
    /// too, so the call finishes even when every worker is busy elsewhere. A panic in
    /// `body` stops further indices and is returned as its message.
    pub fn parallel_for(&self, count: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), String> {
        if count <= 1 || self.threads <= 1 {
            return run_indices(&Shared::detached(count), body);
        }
        // SAFETY: the helpers only touch `body` between registering in `state.active` and
        // leaving it, and `finish` below waits until no helper is active and none can
        // register again, so the borrow outlives every use.
        let body_static: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(body) };
        let shared = Arc::new(Shared::detached(count));
        for _ in 0..(count - 1).min(self.threads - 1) {
            let shared = shared.clone();
            self.spawn(move || {
                if shared.enter() {
                    let result = run_indices(&shared, body_static);
                    shared.leave(result);
                }
            });
        }
        let mine = run_indices(&shared, body);
        shared.finish(mine)
    }
}

/// The next task: spins for a while, then sleeps until one comes. `None` when the pool
/// is gone.
fn next_task(receiver: &Receiver<Task>) -> Option<Task> {
    let start = Instant::now();
    loop {
        match receiver.try_recv() {
            Ok(task) => return Some(task),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if start.elapsed() < SPIN_BEFORE_SLEEP => {
                std::hint::spin_loop();
            }
            Err(TryRecvError::Empty) => return receiver.recv().ok(),
        }
    }
}

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

fn run_indices(shared: &Shared, body: &(dyn Fn(usize) + Sync)) -> Result<(), String> {
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let i = shared.next.fetch_add(1, Ordering::Relaxed);
        if i >= shared.count {
            return Ok(());
        }
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(i))) {
            shared.stop.store(true, Ordering::Relaxed);
            return Err(panic_text(&panic));
        }
    }
}

pub fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("a panic with no message")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_index_runs_once() {
        let hits: Vec<AtomicU64> = (0..1000).map(|_| AtomicU64::new(0)).collect();
        WorkerPool::global()
            .parallel_for(hits.len(), &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn a_panic_is_reported() {
        let r = WorkerPool::global().parallel_for(64, &|i| {
            if i == 7 {
                panic!("index seven");
            }
        });
        assert_eq!(r.unwrap_err(), "index seven");
    }

    #[test]
    fn nested_parallel_for_completes() {
        let total = AtomicU64::new(0);
        WorkerPool::global()
            .parallel_for(8, &|_| {
                WorkerPool::global()
                    .parallel_for(8, &|_| {
                        total.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap();
            })
            .unwrap();
        assert_eq!(total.load(Ordering::Relaxed), 64);
    }
}
