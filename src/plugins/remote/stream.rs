//! A queue of a remote device: a worker thread sends its operations to the server in
//! order while the application goes on; events complete when the worker reaches them;
//! the first failure is kept for the next `synchronize`, as streams report them.
//! (Overlap of transfers and kernels on one server is the next step: a progress engine
//! with non-blocking MPI.)

use super::device::RemoteDevice;
use crate::plugin::{CopyDirection, Device, Guard, Stream, StreamEvent, StreamOp};
use crate::runtime::error::{Error, ErrorCode, Result};
use parking_lot::Mutex;
use std::any::Any;
use std::sync::Arc;
use std::time::Instant;

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

/// What the worker and the stream share: the first failure, and how many jobs wait.
struct Shared {
    failure: Mutex<Option<Error>>,
    pending: std::sync::atomic::AtomicUsize,
}

/// A point of a remote queue: complete when the worker reaches it, at that host time.
pub struct RemoteEvent {
    done: Mutex<Option<Instant>>,
    reached: parking_lot::Condvar,
}

impl RemoteEvent {
    fn new() -> Self {
        RemoteEvent {
            done: Mutex::new(None),
            reached: parking_lot::Condvar::new(),
        }
    }

    fn complete(&self) {
        *self.done.lock() = Some(Instant::now());
        self.reached.notify_all();
    }

    fn time(&self) -> Instant {
        let mut done = self.done.lock();
        loop {
            if let Some(at) = *done {
                return at;
            }
            self.reached.wait(&mut done);
        }
    }
}

impl RemoteStream {
    /// A stream with its own worker thread: operations go to the server in order while
    /// the application goes on (one exchange at a time per server, so streams of one
    /// server take turns).
    pub fn new(device: Arc<RemoteDevice>) -> Result<Self> {
        let (send, receive) = crossbeam_channel::unbounded::<Job>();
        let shared = Arc::new(Shared {
            failure: Mutex::new(None),
            pending: std::sync::atomic::AtomicUsize::new(0),
        });
        let worker_shared = shared.clone();
        let worker = std::thread::Builder::new()
            .name("offload-remote-stream".into())
            .spawn(move || {
                for job in receive {
                    worker_shared.run(&device, job);
                    worker_shared
                        .pending
                        .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
                }
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

impl Shared {
    fn run(&self, device: &RemoteDevice, job: Job) {
        let (name, outcome) = match job {
            Job::Record(event) => {
                event.complete();
                return;
            }
            Job::Wait(event) => ("a wait", event.synchronize()),
            Job::Op(name, op, guard) => (
                name,
                guard.map_or(Ok(()), |g| g()).and_then(|()| run(device, op)),
            ),
        };
        if let Err(e) = outcome {
            let mut failure = self.failure.lock();
            if failure.is_none() {
                *failure = Some(Error::new(e.code, format!("{name}: {}", e.details)));
            }
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
        } => match direction {
            CopyDirection::HostToDevice => d.copy_to_device(dst, src, size),
            CopyDirection::DeviceToHost => d.copy_from_device(dst, src, size),
            CopyDirection::DeviceToDevice => d.copy_within_device(dst, src, size),
            CopyDirection::HostToHost => {
                // SAFETY: the runtime hands two host ranges of `size` bytes.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size) };
                Ok(())
            }
        },
        StreamOp::Fill { dst, pattern, size } => d.fill(dst, &pattern, size),
        StreamOp::Launch {
            kernel,
            config,
            args,
        } => kernel.launch(&config, &args),
        StreamOp::Host(work) => work(),
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
            event.complete();
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

    fn is_idle(&self) -> bool {
        self.shared
            .pending
            .load(std::sync::atomic::Ordering::Acquire)
            == 0
    }
}

impl StreamEvent for RemoteEvent {
    fn is_complete(&self) -> bool {
        self.done.lock().is_some()
    }

    fn synchronize(&self) -> Result<()> {
        self.time();
        Ok(())
    }

    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32> {
        let end = end.as_any().downcast_ref::<RemoteEvent>().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidEvent,
                "elapsed time between events of different backends",
            )
        })?;
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
