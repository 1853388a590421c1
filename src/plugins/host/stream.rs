//! The host device's streams. Each stream is a list of commands run one after another by
//! whichever thread holds it: a pool worker, or the thread calling `synchronize` (which
//! drains the stream itself instead of waiting for a worker to wake). Different streams
//! run concurrently on the shared worker pool. A stream whose next command waits on a
//! pending event gives its thread back and is rescheduled when the event completes, so
//! waits never block the pool.

use super::event::HostEvent;
use super::memory;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::worker_pool::WorkerPool;
use crate::plugin::{own_event_arc, run_host_work, Guard, HostWork, Stream, StreamEvent, StreamOp};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a sync looks again at work a worker is finishing before it sleeps.
pub(super) const SYNC_SPIN: Duration = Duration::from_micros(50);

enum Command {
    /// Work to run; its name says what failed in an error.
    Run { name: &'static str, work: HostWork },
    /// Completes the event.
    Record(Arc<HostEvent>),
    /// Later commands wait for the event.
    Wait(Arc<HostEvent>),
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

struct StreamState {
    pending: VecDeque<Command>,
    status: Status,
    /// Commands enqueued so far, to name the one that failed.
    enqueued: u64,
    /// The first asynchronous error since the last sync, and the commands skipped since.
    error: Option<Error>,
    skipped: u64,
}

pub struct HostStream {
    state: Mutex<StreamState>,
    idle: Condvar,
}

impl HostStream {
    pub fn new() -> Arc<Self> {
        Arc::new(HostStream {
            state: Mutex::new(StreamState {
                pending: VecDeque::new(),
                status: Status::Idle,
                enqueued: 0,
                error: None,
                skipped: 0,
            }),
            idle: Condvar::new(),
        })
    }

    fn push(self: &Arc<Self>, command: Command) {
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

    /// Called by an event this stream waits on, once it completes.
    pub(super) fn wake(self: &Arc<Self>) {
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
                if let Err(e) = run_host_work(work) {
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
    /// no worker holds the stream. Returns (and clears) the first asynchronous error.
    fn sync(self: &Arc<Self>) -> Result<()> {
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
    fn is_empty(&self) -> bool {
        let s = self.state.lock();
        s.pending.is_empty() && matches!(s.status, Status::Idle | Status::Scheduled)
    }
}

/// The work an operation does on the host: the guard first, then the operation.
fn host_work(op: StreamOp, guard: Option<Guard>) -> HostWork {
    let run: HostWork = match op {
        StreamOp::Copy { dst, src, size, .. } => Box::new(move || {
            memory::copy(dst, src, size);
            Ok(())
        }),
        StreamOp::Fill { dst, pattern, size } => Box::new(move || {
            memory::fill(dst, &pattern, size);
            Ok(())
        }),
        StreamOp::Launch {
            kernel,
            config,
            args,
        } => Box::new(move || kernel.run(&config, &args)),
        StreamOp::Host(work) => work,
    };
    match guard {
        None => run,
        Some(guard) => Box::new(move || {
            guard()?;
            run()
        }),
    }
}

/// `Stream` is implemented on `Arc<HostStream>`: commands hold the stream while they
/// wait or run, so a stream destroyed with work in it finishes that work.
pub struct HostStreamHandle(pub Arc<HostStream>);

impl Stream for HostStreamHandle {
    fn enqueue(&self, name: &'static str, op: StreamOp, guard: Option<Guard>) -> Result<()> {
        self.0.push(Command::Run {
            name,
            work: host_work(op, guard),
        });
        Ok(())
    }

    /// On an idle, empty stream the event completes at once: nothing is ahead of it, and
    /// a trip through the worker pool would only make its waiters wait for a thread.
    fn record(&self) -> Result<Arc<dyn StreamEvent>> {
        let event = Arc::new(HostEvent::default());
        let reached_now = {
            let s = self.0.state.lock();
            (s.status == Status::Idle && s.pending.is_empty()).then(|| s.error.clone())
        };
        match reached_now {
            Some(error) => event.complete(error.map(earlier_failure)),
            None => self.0.push(Command::Record(event.clone())),
        }
        Ok(event)
    }

    fn wait(&self, event: &Arc<dyn StreamEvent>) -> Result<()> {
        if event.is_complete() {
            return Ok(());
        }
        // An event of another backend is bridged by the runtime, never given here.
        let host = own_event_arc::<HostEvent>(event, "the host device")?;
        self.0.push(Command::Wait(host));
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.0.sync()
    }

    fn is_idle(&self) -> bool {
        self.0.is_empty()
    }
}

/// The error an event reports when a command before it failed.
fn earlier_failure(error: Error) -> Error {
    error.context("an earlier command of its queue failed")
}
