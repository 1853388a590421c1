//! The worker pool shared by every queue and every kernel launch: one thread per core,
//! fed from one channel (a launch's work-groups are spread over it by the host plugin's
//! `parallel::parallel_for`). Nothing that runs on it blocks waiting for other pool work (a
//! queue waiting on an event gives its thread back), so the pool cannot deadlock.

use crossbeam_channel::{unbounded, Receiver, Sender, TryRecvError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// How long an idle worker keeps looking for work before it sleeps. Waking a sleeping
/// thread costs tens of microseconds; kernels launched back to back, and queues fed a
/// command at a time, find a spinning worker instead (OpenMP runtimes do the same).
const SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(100);
/// The first part of that look is a pure spin; after it the worker yields between looks.
const PURE_SPIN: Duration = Duration::from_micros(5);

type Task = Box<dyn FnOnce() + Send>;

pub struct WorkerPool {
    sender: Sender<Task>,
    threads: usize,
    /// Workers looking for work right now (running, not asleep).
    spinners: Arc<AtomicUsize>,
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
        let spinners = Arc::new(AtomicUsize::new(0));
        let max_spinners = threads.saturating_sub(1).max(1);
        for i in 0..threads {
            let receiver: Receiver<Task> = receiver.clone();
            let spinning = spinners.clone();
            std::thread::Builder::new()
                .name(format!("offload-worker-{i}"))
                .spawn(move || {
                    while let Some(task) = next_task(&receiver, &spinning, max_spinners) {
                        // A task reports its own failures; a panic must not kill the worker.
                        let _ = catch_unwind(AssertUnwindSafe(task));
                    }
                })
                .expect("the offload worker pool could not start a thread");
        }
        WorkerPool {
            sender,
            threads,
            spinners,
        }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// How many workers are looking for work at this moment (each holds a core while it
    /// does, so a count of the machine's running threads includes them).
    pub fn spinning(&self) -> usize {
        self.spinners.load(Ordering::Relaxed)
    }

    pub fn spawn(&self, task: impl FnOnce() + Send + 'static) {
        // The receivers live as long as the process, so sending cannot fail.
        let _ = self.sender.send(Box::new(task));
    }
}

/// The next task: looks for one for a while, then sleeps until one comes. `None` when
/// the pool is gone. At most `max_spinners` workers look at once, leaving a core to the
/// threads that feed the pool; and after a short pure spin they yield between looks, so
/// a spinning worker never keeps an application thread off a core.
fn next_task(
    receiver: &Receiver<Task>,
    spinners: &AtomicUsize,
    max_spinners: usize,
) -> Option<Task> {
    match receiver.try_recv() {
        Ok(task) => return Some(task),
        Err(TryRecvError::Disconnected) => return None,
        Err(TryRecvError::Empty) => {}
    }
    if spinners.fetch_add(1, Ordering::Relaxed) < max_spinners {
        let start = Instant::now();
        let mut found = None;
        while found.is_none() {
            match receiver.try_recv() {
                Ok(task) => found = Some(Some(task)),
                Err(TryRecvError::Disconnected) => found = Some(None),
                Err(TryRecvError::Empty) => {
                    let waited = start.elapsed();
                    if waited >= SPIN_BEFORE_SLEEP {
                        break;
                    }
                    if waited < PURE_SPIN {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
        }
        spinners.fetch_sub(1, Ordering::Relaxed);
        if let Some(task) = found {
            return task;
        }
    } else {
        spinners.fetch_sub(1, Ordering::Relaxed);
    }
    receiver.recv().ok()
}

pub use super::panic_text::panic_text;
