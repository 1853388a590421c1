//! A queue of a remote device: a worker thread sends its operations to the server in
//! order while the application goes on; events complete when the worker reaches them;
//! the first failure is kept for the next `synchronize`, as streams report them.
//! Kernels go to a stream of the server's own (one per queue) without waiting for an
//! answer: launches flow one message each, and while they run the server serves other
//! queues' copies. Before anything else of the queue (a copy, a host step, an event) the
//! worker waits for the kernels it queued, which keeps the queue in order.

use super::device::RemoteDevice;
use super::program::RemoteKernel;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::{own_event, run_host_work, Device, Guard, Stream, StreamEvent, StreamOp};
use parking_lot::Mutex;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Names of the servers' streams, one per queue of the process.
static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

pub struct RemoteStream {
    jobs: Mutex<Option<crossbeam_channel::Sender<Job>>>,
    shared: Arc<Shared>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// What the stream's worker runs, in order.
enum Job {
    Op(&'static str, StreamOp, Option<Guard>),
    Record(Arc<RemoteEvent>),
    Wait(Arc<dyn StreamEvent>),
}

/// What the worker and the stream share: the first failure, how many jobs wait, and
/// whether kernels queued on the server may still run.
struct Shared {
    failure: Mutex<Option<Error>>,
    pending: std::sync::atomic::AtomicUsize,
    kernels_queued: std::sync::atomic::AtomicBool,
}

/// A point of a remote queue: complete when the worker reaches it, at that host time,
/// with the queue's failure before it if there was one (a lost server's, say).
pub struct RemoteEvent {
    done: Mutex<Option<(Instant, Option<Error>)>>,
    reached: parking_lot::Condvar,
}

impl RemoteEvent {
    fn new() -> Self {
        RemoteEvent {
            done: Mutex::new(None),
            reached: parking_lot::Condvar::new(),
        }
    }

    fn complete(&self, failure: Option<Error>) {
        let failure = failure.map(|e| e.context("an earlier command of its queue failed"));
        *self.done.lock() = Some((Instant::now(), failure));
        self.reached.notify_all();
    }

    /// Waits until the worker reached it (it does: every operation before it has a
    /// deadline): when, and the failure before it.
    fn reached(&self) -> (Instant, Option<Error>) {
        let mut done = self.done.lock();
        loop {
            if let Some(reached) = done.as_ref() {
                return reached.clone();
            }
            self.reached.wait(&mut done);
        }
    }

    fn time(&self) -> Instant {
        self.reached().0
    }
}

impl RemoteStream {
    /// A stream with its own worker thread: operations go to the server in order while
    /// the application goes on (each exchange with its own tag, so the streams of one
    /// server do not wait for each other).
    pub fn new(device: Arc<RemoteDevice>) -> Result<Self> {
        let (send, receive) = crossbeam_channel::unbounded::<Job>();
        let shared = Arc::new(Shared {
            failure: Mutex::new(None),
            pending: std::sync::atomic::AtomicUsize::new(0),
            kernels_queued: std::sync::atomic::AtomicBool::new(false),
        });
        let worker_shared = shared.clone();
        let mut worker = Worker {
            device,
            stream: NEXT_STREAM.fetch_add(1, Ordering::Relaxed),
            shared: shared.clone(),
            used: false,
        };
        let worker = std::thread::Builder::new()
            .name("offload-remote-stream".into())
            .spawn(move || {
                for job in receive {
                    // An event completes last: after its failure is kept and the job no
                    // longer counts, so that whoever it wakes sees both.
                    let reached = worker_shared.run(&mut worker, job);
                    worker_shared
                        .pending
                        .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
                    if let Some(event) = reached {
                        event.complete(worker_shared.failure.lock().clone());
                    }
                }
                worker.end();
            })
            .map_err(|e| Error::new(ErrorCode::OutOfResources, format!("a stream thread: {e}")))?;
        Ok(RemoteStream {
            jobs: Mutex::new(Some(send)),
            shared,
            worker: Mutex::new(Some(worker)),
        })
    }

    fn submit(&self, job: Job) -> Result<()> {
        let jobs = self.jobs.lock();
        let sender = jobs
            .as_ref()
            .ok_or_else(|| Error::new(ErrorCode::InvalidQueue, "the remote queue is closed"))?;
        self.shared
            .pending
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        sender
            .send(job)
            .map_err(|_| Error::new(ErrorCode::InvalidQueue, "the remote queue's worker is gone"))
    }
}

impl Drop for RemoteStream {
    /// A destroyed queue does not wait: its worker finishes what was enqueued (events
    /// of it still complete) and then ends.
    fn drop(&mut self) {
        drop(self.jobs.lock().take());
        drop(self.worker.lock().take());
    }
}

/// The worker's side of a queue: its server stream, and whether kernels queued there
/// may still run.
struct Worker {
    device: Arc<RemoteDevice>,
    stream: u64,
    shared: Arc<Shared>,
    /// Whether the server has this stream (it forgets it when the queue ends).
    used: bool,
}

impl Worker {
    /// Waits for the kernels queued on the server (their first failure).
    fn settle(&mut self) -> Result<()> {
        if !self.shared.kernels_queued.load(Ordering::Acquire) {
            return Ok(());
        }
        let settled = self.device.sync_stream(self.stream, false);
        self.shared.kernels_queued.store(false, Ordering::Release);
        settled
    }

    /// A kernel, queued on the server's stream: no answer awaited.
    fn launch(&mut self, op: StreamOp) -> Result<()> {
        let StreamOp::Launch {
            kernel,
            config,
            args,
        } = op
        else {
            return run(&self.device, op);
        };
        let remote = crate::plugin::own_kernel::<RemoteKernel>(kernel.as_ref(), "a remote device")?;
        self.shared.kernels_queued.store(true, Ordering::Release);
        self.used = true;
        self.device.launch(remote, &config, args.bytes, self.stream)
    }

    /// The queue is gone: the server finishes and forgets its stream (best effort).
    fn end(self) {
        if self.used {
            let _ = self.device.sync_stream(self.stream, true);
        }
    }
}

impl Shared {
    /// Runs `job`, keeping its failure; an event it reached is returned, to complete.
    fn run(&self, worker: &mut Worker, job: Job) -> Option<Arc<RemoteEvent>> {
        let mut reached = None;
        let (name, outcome) = match job {
            Job::Record(event) => {
                reached = Some(event);
                ("olLaunchKernel", worker.settle())
            }
            Job::Wait(event) => ("a wait", event.synchronize()),
            Job::Op(name, op @ StreamOp::Launch { .. }, guard) => (
                name,
                guard
                    .map_or(Ok(()), |g| g())
                    .and_then(|()| worker.launch(op)),
            ),
            Job::Op(name, op, guard) => {
                if let Err(e) = worker.settle() {
                    self.keep("olLaunchKernel", e);
                }
                (
                    name,
                    guard
                        .map_or(Ok(()), |g| g())
                        .and_then(|()| run(&worker.device, op)),
                )
            }
        };
        if let Err(e) = outcome {
            self.keep(name, e);
        }
        reached
    }

    /// Keeps the queue's first failure.
    fn keep(&self, name: &str, e: Error) {
        let mut failure = self.failure.lock();
        if failure.is_none() {
            *failure = Some(Error::new(e.code, format!("{name}: {}", e.details)));
        }
    }
}

/// One operation, done when the server has answered.
fn run(d: &RemoteDevice, op: StreamOp) -> Result<()> {
    match op {
        StreamOp::Copy {
            dst,
            src,
            size,
            direction,
        } => direction.copy_with(d, dst, src, size),
        StreamOp::Fill { dst, pattern, size } => d.fill(dst, &pattern, size),
        StreamOp::Launch {
            kernel,
            config,
            args,
        } => kernel.run(&config, &args),
        StreamOp::Host(work) => run_host_work(work),
    }
}

impl Stream for RemoteStream {
    fn enqueue(&self, name: &'static str, op: StreamOp, guard: Option<Guard>) -> Result<()> {
        self.submit(Job::Op(name, op, guard))
    }

    fn record(&self) -> Result<Arc<dyn StreamEvent>> {
        let event = Arc::new(RemoteEvent::new());
        if self.is_idle() {
            // Nothing before it: complete at once (a later job cannot come before it).
            event.complete(self.shared.failure.lock().clone());
        } else {
            self.submit(Job::Record(event.clone()))?;
        }
        Ok(event)
    }

    /// Later operations wait for `event` (the worker blocks on it).
    fn wait(&self, event: &Arc<dyn StreamEvent>) -> Result<()> {
        self.submit(Job::Wait(event.clone()))
    }

    fn synchronize(&self) -> Result<()> {
        let marker = Arc::new(RemoteEvent::new());
        self.submit(Job::Record(marker.clone()))?;
        marker.time();
        match self.shared.failure.lock().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Idle when no job waits and no kernel queued on the server may still run; when
    /// only such kernels remain, the worker is asked to wait for them, so a later call
    /// sees the queue idle once they ended.
    fn is_idle(&self) -> bool {
        if self.shared.pending.load(Ordering::Acquire) != 0 {
            return false;
        }
        if !self.shared.kernels_queued.load(Ordering::Acquire) {
            return true;
        }
        let _ = self.submit(Job::Record(Arc::new(RemoteEvent::new())));
        false
    }
}

impl StreamEvent for RemoteEvent {
    fn is_complete(&self) -> bool {
        self.done.lock().is_some()
    }

    fn synchronize(&self) -> Result<()> {
        match self.reached().1 {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32> {
        let end = own_event::<RemoteEvent>(end, "a remote device")?;
        let (start, stop) = (self.time(), end.time());
        let ms = if stop >= start {
            stop.duration_since(start).as_secs_f32() * 1000.0
        } else {
            -(start.duration_since(stop).as_secs_f32() * 1000.0)
        };
        Ok(ms)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}
