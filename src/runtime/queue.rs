//! In-order queues. Each queue is a list of commands run one after another by whichever
//! thread holds it: a pool worker, or the thread calling `sync` (which drains the queue
//! itself instead of waiting for a worker to wake). Different queues run concurrently
//! on the shared worker pool. A queue whose next command waits on a pending event gives
//! its thread back and is rescheduled when the event completes, so waits never block
//! the pool.

use crate::runtime::error::{Error, Result};
use crate::runtime::event::Event;
use crate::runtime::platform::Device;
use crate::runtime::worker_pool::{panic_text, WorkerPool};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a sync looks again at work a worker is finishing before it sleeps.
pub(crate) const SYNC_SPIN: Duration = Duration::from_micros(50);

/// `ol_queue_info_t`, in the header's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueInfo {
    Device = 0,
    Empty = 1,
}

impl TryFrom<u32> for QueueInfo {
    type Error = u32;
    fn try_from(v: u32) -> std::result::Result<Self, u32> {
        match v {
            0 => Ok(QueueInfo::Device),
            1 => Ok(QueueInfo::Empty),
            _ => Err(v),
        }
    }
}

/// Work a command does; its name says what failed in an error.
pub type Work = Box<dyn FnOnce() -> Result<()> + Send>;

pub enum Command {
    Run {
        name: &'static str,
        work: Work,
    },
    /// Completes the event.
    Record(Arc<Event>),
    /// Later commands wait for the event.
    Wait(Arc<Event>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Nobody holds the queue and nothing is scheduled.
    Idle,
    /// A pool task will run it.
    Scheduled,
    /// A thread is running its commands.
    Running,
    /// Its next command waits on a pending event, which will reschedule it.
    Blocked,
}

struct QueueState {
    pending: VecDeque<Command>,
    status: Status,
    /// Commands enqueued so far, to name the one that failed.
    enqueued: u64,
    /// The first asynchronous error since the last sync, and the commands skipped since.
    error: Option<Error>,
    skipped: u64,
}

/// Counts commands not yet finished on all queues, so shutdown can wait for them, even on
/// queues already destroyed.
#[derive(Default)]
pub struct Outstanding {
    count: Mutex<u64>,
    zero: Condvar,
}

impl Outstanding {
    fn add(&self) {
        *self.count.lock() += 1;
    }
    fn done(&self) {
        let mut c = self.count.lock();
        *c -= 1;
        if *c == 0 {
            self.zero.notify_all();
        }
    }
    pub fn wait_for_zero(&self) {
        let mut c = self.count.lock();
        while *c > 0 {
            self.zero.wait(&mut c);
        }
    }
}

pub struct Queue {
    pub device: Arc<Device>,
    state: Mutex<QueueState>,
    idle: Condvar,
    outstanding: Arc<Outstanding>,
}

impl Queue {
    pub fn new(device: Arc<Device>, outstanding: Arc<Outstanding>) -> Self {
        Queue {
            device,
            state: Mutex::new(QueueState {
                pending: VecDeque::new(),
                status: Status::Idle,
                enqueued: 0,
                error: None,
                skipped: 0,
            }),
            idle: Condvar::new(),
            outstanding,
        }
    }

    pub fn enqueue(self: &Arc<Self>, command: Command) {
        self.outstanding.add();
        let schedule = {
            let mut s = self.state.lock();
            s.enqueued += 1;
            s.pending.push_back(command);
            if s.status == Status::Idle {
                s.status = Status::Scheduled;
                true
            } else {
                false
            }
        };
        if schedule {
            self.schedule();
        }
    }

    /// Marks the point after everything enqueued so far with `event`. On an idle, empty
    /// queue the event completes at once: nothing is ahead of it, and a trip through the
    /// worker pool would only make its waiters wait for a thread to wake.
    pub fn record(self: &Arc<Self>, event: Arc<Event>) {
        let reached_now = {
            let s = self.state.lock();
            (s.status == Status::Idle && s.pending.is_empty()).then(|| s.error.clone())
        };
        match reached_now {
            Some(error) => event.complete(error.map(earlier_failure)),
            None => self.enqueue(Command::Record(event)),
        }
    }

    fn schedule(self: &Arc<Self>) {
        let queue = self.clone();
        WorkerPool::global().spawn(move || {
            let mut s = queue.state.lock();
            // Someone (a syncing thread) may have taken the queue over meanwhile.
            if s.status == Status::Scheduled {
                s.status = Status::Running;
                drop(s);
                queue.run();
            }
        });
    }

    /// Called by an event this queue waits on, once it completes.
    pub(crate) fn wake(self: &Arc<Self>) {
        let mut s = self.state.lock();
        if s.status == Status::Blocked {
            s.status = Status::Scheduled;
            drop(s);
            self.schedule();
        }
    }

    /// Runs commands until the queue is empty or blocked. The caller has set `Running`.
    fn run(self: &Arc<Self>) {
        loop {
            let command = {
                let mut s = self.state.lock();
                if let Some(Command::Wait(event)) = s.pending.front() {
                    // Registering under the queue's lock: a completion that races with
                    // us finds the queue `Blocked` and reschedules it.
                    if event.add_waiter_if_pending(self) {
                        s.status = Status::Blocked;
                        return;
                    }
                }
                match s.pending.pop_front() {
                    Some(c) => c,
                    None => {
                        s.status = Status::Idle;
                        self.idle.notify_all();
                        return;
                    }
                }
            };
            self.execute(command);
            self.outstanding.done();
        }
    }

    fn execute(&self, command: Command) {
        match command {
            Command::Wait(_) => {}
            Command::Record(event) => {
                let error = self.state.lock().error.clone();
                event.complete(error.map(earlier_failure));
            }
            Command::Run { name, work } => {
                {
                    let mut s = self.state.lock();
                    if s.error.is_some() {
                        s.skipped += 1;
                        return;
                    }
                }
                let result = match catch_unwind(AssertUnwindSafe(work)) {
                    Ok(r) => r,
                    Err(panic) => Err(Error::unknown(format!("panicked: {}", panic_text(&panic)))),
                };
                if let Err(e) = result {
                    let mut s = self.state.lock();
                    let number = s.enqueued - s.pending.len() as u64;
                    s.error = Some(Error::new(
                        e.code,
                        format!(
                            "asynchronous {name} (command {number} of its queue) failed: {}",
                            e.details
                        ),
                    ));
                }
            }
        }
    }

    /// Blocks until every command enqueued so far is done, running them on this thread if
    /// no worker holds the queue. Returns (and clears) the first asynchronous error.
    pub fn sync(self: &Arc<Self>) -> Result<()> {
        let mut s = self.state.lock();
        let spin_until = Instant::now() + SYNC_SPIN;
        loop {
            match s.status {
                Status::Idle if s.pending.is_empty() => break,
                Status::Idle | Status::Scheduled => {
                    s.status = Status::Running;
                    drop(s);
                    self.run();
                    s = self.state.lock();
                }
                // A worker is finishing the queue: short work ends sooner than a sleeping
                // thread can be woken, so look again for a little while first.
                Status::Running if Instant::now() < spin_until => {
                    drop(s);
                    std::hint::spin_loop();
                    s = self.state.lock();
                }
                Status::Running | Status::Blocked => self.idle.wait(&mut s),
            }
        }
        let skipped = std::mem::take(&mut s.skipped);
        match s.error.take() {
            None => Ok(()),
            Some(e) if skipped == 0 => Err(e),
            Some(e) => Err(Error::new(
                e.code,
                format!(
                    "{}; the {skipped} commands enqueued after it were skipped",
                    e.details
                ),
            )),
        }
    }

    /// True when nothing enqueued is pending or running.
    pub fn is_empty(&self) -> bool {
        let s = self.state.lock();
        s.pending.is_empty() && matches!(s.status, Status::Idle | Status::Scheduled)
    }
}

/// The error an event reports when a command before it failed.
fn earlier_failure(error: Error) -> Error {
    error.context("an earlier command of its queue failed")
}
