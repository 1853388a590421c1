//! The stream of a backend whose operations run on host threads (the host device; the
//! remote device, whose operations are exchanges with its server): the queue, who runs
//! it, events and waits, the first failure and synchronize are here once; the backend
//! supplies hooks (`RunHooks`) that run one copy, fill or launch and hand the stream to
//! a thread of its own.
//!
//! A stream is a list of commands run one after another by whichever thread holds it: a
//! thread the hooks give it, or the thread calling `synchronize`, which drains the
//! stream itself instead of waiting for another to wake. A stream whose next command
//! waits on a pending event gives its thread back and is rescheduled when the event
//! completes, so a wait never holds a thread. After a command fails the later ones are
//! skipped until the next synchronize, which reports the first failure and how many
//! were skipped.

use super::stream::{
    catch_panic, dispatch_op, own_event, own_event_arc, Guard, OpHooks, Stream, StreamEvent,
    StreamOp,
};
use crate::plugin::foundation::error::{Error, Result};
use parking_lot::{Condvar, Mutex};
use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a sync looks again at work another thread is finishing before it sleeps:
/// short work ends sooner than a sleeping thread is woken.
const SYNC_SPIN: Duration = Duration::from_micros(50);

/// A stream handed to a thread to run.
pub type RunTask = Box<dyn FnOnce() + Send>;

/// What a backend does for a stream run on host threads besides its operations
/// (`OpHooks`: copy, fill, launch), which run on the calling thread and are done when
/// they return, unless the backend hands them on (see `settle`).
pub trait RunHooks: OpHooks {
    /// Has `task` run on a thread of the backend's (a pool worker, a thread of the
    /// stream's own).
    fn schedule(&self, task: RunTask);

    /// Waits for launches `launch` handed on without waiting (a remote kernel queued on
    /// its server): their first failure. Runs before any command but a launch, so the
    /// stream stays in order.
    fn settle(&self) -> Result<()> {
        Ok(())
    }

    /// Whether no launch handed on may still run.
    fn settled(&self) -> bool {
        true
    }
}

enum Command {
    /// An operation; `name` (the C function) names it in an error.
    Op {
        name: &'static str,
        op: StreamOp,
        guard: Option<Guard>,
    },
    /// Completes the event.
    Record(Arc<RunEvent>),
    /// Later commands wait for the event.
    Wait(Arc<RunEvent>),
    /// Waits for launches handed on (a sync's or an idle query's, not the application's).
    Settle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Nobody holds the stream and nothing is scheduled.
    Idle,
    /// A task handed to `schedule` will run it.
    Scheduled,
    /// A thread is running its commands.
    Running,
    /// Its next command waits on a pending event, which will reschedule it.
    Blocked,
}

struct State {
    pending: VecDeque<Command>,
    status: Status,
    /// The application's commands run so far, to number the one that failed.
    ran: u64,
    /// The first failure since the last sync, and the commands skipped since.
    error: Option<Error>,
    skipped: u64,
}

struct Queue<H: RunHooks> {
    hooks: H,
    state: Mutex<State>,
    idle: Condvar,
}

/// A stream run on host threads. Commands hold its queue while they wait or run, so a
/// stream destroyed with work in it finishes that work (and its events complete).
pub struct HostRunStream<H: RunHooks>(Arc<Queue<H>>);

impl<H: RunHooks> HostRunStream<H> {
    pub fn new(hooks: H) -> Self {
        HostRunStream(Arc::new(Queue {
            hooks,
            state: Mutex::new(State {
                pending: VecDeque::new(),
                status: Status::Idle,
                ran: 0,
                error: None,
                skipped: 0,
            }),
            idle: Condvar::new(),
        }))
    }
}

/// What an event calls on the streams waiting for it.
trait Waiter: Send + Sync {
    fn wake(self: Arc<Self>);
}

impl<H: RunHooks> Queue<H> {
    fn push(self: &Arc<Self>, command: Command) {
        let schedule = {
            let mut s = self.state.lock();
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
        self.hooks.schedule(Box::new(move || {
            let mut s = queue.state.lock();
            // A syncing thread may have taken the stream over meanwhile.
            if s.status == Status::Scheduled {
                s.status = Status::Running;
                drop(s);
                queue.run();
            }
        }));
    }

    /// Runs commands until the stream is empty or blocked. The caller has set `Running`.
    fn run(self: &Arc<Self>) {
        loop {
            let command = {
                let mut s = self.state.lock();
                if let Some(Command::Wait(event)) = s.pending.front() {
                    // Registering under the stream's lock: a completion that races with
                    // us finds the stream `Blocked` and reschedules it.
                    if event.add_waiter_if_pending(self.clone()) {
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
            Command::Settle => self.settle(),
            Command::Wait(_) => self.state.lock().ran += 1,
            Command::Record(event) => {
                self.settle();
                let error = {
                    let mut s = self.state.lock();
                    s.ran += 1;
                    s.error.clone()
                };
                event.complete(error.map(|e| e.context("an earlier command of its queue failed")));
            }
            Command::Op { name, op, guard } => {
                if !matches!(op, StreamOp::Launch { .. }) {
                    self.settle();
                }
                let number = {
                    let mut s = self.state.lock();
                    s.ran += 1;
                    if s.error.is_some() {
                        s.skipped += 1;
                        return;
                    }
                    s.ran
                };
                let outcome = catch_panic(|| {
                    if let Some(guard) = guard {
                        guard()?;
                    }
                    dispatch_op(&self.hooks, op)?.map_or(Ok(()), |work| work())
                });
                if let Err(e) = outcome {
                    self.fail(format!("{name} (command {number} of its queue)"), e);
                }
            }
        }
    }

    /// Waits for launches the hooks handed on; their failure is the stream's, named as
    /// theirs.
    fn settle(&self) {
        if self.hooks.settled() {
            return;
        }
        if let Err(e) = catch_panic(|| self.hooks.settle()) {
            self.fail("olLaunchKernel".to_string(), e);
        }
    }

    /// Keeps the stream's first failure.
    fn fail(&self, what: String, e: Error) {
        let mut s = self.state.lock();
        if s.error.is_none() {
            s.error = Some(Error::new(
                e.code,
                format!("asynchronous {what} failed: {}", e.details),
            ));
        }
    }

    /// Blocks until every command enqueued so far is done, running them on this thread if
    /// no other holds the stream. Returns (and clears) the first failure.
    fn sync(self: &Arc<Self>) -> Result<()> {
        let mut s = self.state.lock();
        let spin_until = Instant::now() + SYNC_SPIN;
        loop {
            match s.status {
                Status::Idle if s.pending.is_empty() => {
                    if self.hooks.settled() {
                        break;
                    }
                    s.pending.push_back(Command::Settle);
                }
                Status::Idle | Status::Scheduled => {
                    s.status = Status::Running;
                    drop(s);
                    self.run();
                    s = self.state.lock();
                }
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

    /// Nothing pending or running, and nothing handed on that may still run.
    fn nothing_pending(&self, s: &State) -> bool {
        s.pending.is_empty()
            && matches!(s.status, Status::Idle | Status::Scheduled)
            && self.hooks.settled()
    }
}

impl<H: RunHooks> Waiter for Queue<H> {
    /// The event this stream waits on completed.
    fn wake(self: Arc<Self>) {
        let mut s = self.state.lock();
        if s.status == Status::Blocked {
            s.status = Status::Scheduled;
            drop(s);
            self.schedule();
        }
    }
}

impl<H: RunHooks> Stream for HostRunStream<H> {
    fn enqueue(&self, name: &'static str, op: StreamOp, guard: Option<Guard>) -> Result<()> {
        self.0.push(Command::Op { name, op, guard });
        Ok(())
    }

    /// On a stream with nothing pending the event completes at once: nothing is ahead of
    /// it, and a trip through another thread would only make its waiters wait.
    fn record(&self) -> Result<Arc<dyn StreamEvent>> {
        let event = Arc::new(RunEvent::default());
        let reached_now = {
            let s = self.0.state.lock();
            self.0.nothing_pending(&s).then(|| s.error.clone())
        };
        match reached_now {
            Some(error) => {
                event.complete(error.map(|e| e.context("an earlier command of its queue failed")))
            }
            None => self.0.push(Command::Record(event.clone())),
        }
        Ok(event)
    }

    fn wait(&self, event: &Arc<dyn StreamEvent>) -> Result<()> {
        if event.is_complete()? {
            return Ok(());
        }
        // An event of another backend is bridged by the runtime, never given here.
        let own = own_event_arc::<RunEvent>(event, H::WHOSE)?;
        self.0.push(Command::Wait(own));
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.0.sync()
    }

    /// When only launches handed on remain, a settle is queued, so that a later call
    /// finds the stream idle once they ended.
    fn is_idle(&self) -> Result<bool> {
        let settle = {
            let s = self.0.state.lock();
            if self.0.nothing_pending(&s) {
                return Ok(true);
            }
            s.pending.is_empty() && matches!(s.status, Status::Idle | Status::Scheduled)
        };
        if settle {
            self.0.push(Command::Settle);
        }
        Ok(false)
    }
}

#[derive(Default)]
struct EventState {
    completed_at: Option<Instant>,
    /// The failure of the stream before the event, if any.
    error: Option<Error>,
    /// Streams blocked on this event, woken on completion.
    waiters: Vec<Arc<dyn Waiter>>,
}

/// A point of a stream run on host threads: it completes when every command enqueued
/// before it is done, at that host time; streams that wait on it are woken then.
#[derive(Default)]
pub struct RunEvent {
    state: Mutex<EventState>,
    done: Condvar,
}

impl RunEvent {
    fn complete(&self, error: Option<Error>) {
        let waiters = {
            let mut s = self.state.lock();
            s.completed_at = Some(Instant::now());
            s.error = error;
            std::mem::take(&mut s.waiters)
        };
        self.done.notify_all();
        for stream in waiters {
            stream.wake();
        }
    }

    /// If the event is still pending, remembers `stream` to wake on completion and
    /// returns true; false if it is complete already.
    fn add_waiter_if_pending(&self, stream: Arc<dyn Waiter>) -> bool {
        let mut s = self.state.lock();
        if s.completed_at.is_some() {
            return false;
        }
        s.waiters.push(stream);
        true
    }

    /// Waits for completion (every command before the event ends, each with its
    /// deadline where it has one): when, and the failure before it.
    fn completion(&self) -> (Instant, Option<Error>) {
        let mut s = self.state.lock();
        let spin_until = Instant::now() + SYNC_SPIN;
        loop {
            if let Some(at) = s.completed_at {
                return (at, s.error.clone());
            }
            // Work just ahead of the event ends sooner than a sleeping thread is woken.
            if Instant::now() < spin_until {
                drop(s);
                std::hint::spin_loop();
                s = self.state.lock();
            } else {
                self.done.wait(&mut s);
            }
        }
    }
}

impl StreamEvent for RunEvent {
    fn is_complete(&self) -> Result<bool> {
        Ok(self.state.lock().completed_at.is_some())
    }

    fn synchronize(&self) -> Result<()> {
        match self.completion().1 {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32> {
        let end = own_event::<RunEvent>(end, "the same device")?;
        let (t0, t1) = (self.completion().0, end.completion().0);
        Ok(if t1 >= t0 {
            t1.duration_since(t0).as_secs_f64() as f32 * 1000.0
        } else {
            -(t0.duration_since(t1).as_secs_f64() as f32 * 1000.0)
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}
