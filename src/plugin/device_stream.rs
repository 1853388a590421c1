//! The stream of a backend whose operations run on the device (CUDA, AMDGPU): what
//! every such stream does alike is here once, and the backend supplies hooks
//! (`StreamHooks`) that enqueue one kind of operation each with the vendor's calls.
//!
//! Here: the operation's guard (run when the operation is enqueued: on the device no
//! host check can run just before it), the dispatch of each `StreamOp`, recognising the
//! backend's own kernels and events, host steps (their panic caught, their first
//! failure kept), and a synchronize that reports the device's failure first, then a host
//! step's. The runtime bridges waits on other backends' events before they get here.

use super::stream::{
    dispatch_op, keep_first_failure, own_event_arc, run_host_work, wait_by_host_step, Guard,
    HostWork, OpHooks, Stream, StreamEvent, StreamOp,
};
use crate::plugin::foundation::error::{Error, Result};
use parking_lot::Mutex;
use std::sync::Arc;

/// Where a stream's host steps keep their first failure until the next synchronize.
pub type HostErrors = Arc<Mutex<Option<Error>>>;

/// A host step as a hook receives it. Running it (`run`) never fails or unwinds: the
/// work's failure or panic is kept for the stream's next synchronize. One value, not a
/// closure around the work: a host function costs the one allocation of its work.
pub struct HostStep(Step);

enum Step {
    /// Work whose failure the stream keeps.
    Kept {
        name: &'static str,
        work: HostWork,
        errors: HostErrors,
    },
    /// The backend's own step, which cannot fail (a release of what a copy read).
    Infallible(Box<dyn FnOnce() + Send>),
}

impl HostStep {
    /// The backend's own step that cannot fail.
    pub fn infallible(step: impl FnOnce() + Send + 'static) -> HostStep {
        HostStep(Step::Infallible(Box::new(step)))
    }

    /// Runs the step on the calling thread.
    pub fn run(self) {
        match self.0 {
            Step::Kept { name, work, errors } => {
                keep_first_failure(&errors, name, run_host_work(work))
            }
            Step::Infallible(step) => step(),
        }
    }

    /// The work alone, for a backend whose host-step runner catches and keeps failures
    /// in the same `HostErrors` itself.
    pub fn into_work(self) -> HostWork {
        match self.0 {
            Step::Kept { work, .. } => work,
            Step::Infallible(step) => Box::new(move || {
                step();
                Ok(())
            }),
        }
    }
}

/// Opens a gate (`StreamHooks::gate`).
pub type Opener = Box<dyn FnOnce() + Send>;

/// What a device backend does for one stream besides its operations (`OpHooks`: copy,
/// fill, launch). Each is enqueued and the hook returns without waiting for it; an error
/// returned means nothing was enqueued.
pub trait StreamHooks: OpHooks {
    type Event: StreamEvent + 'static;

    /// Before each operation is enqueued (a context made current, a stopped queue
    /// refused).
    fn begin(&self, name: &'static str) -> Result<()> {
        let _ = name;
        Ok(())
    }

    /// Enqueues a wait that holds later operations until the returned opener is called
    /// (from a thread of the runtime's); `None` where the backend cannot, and a wait on
    /// another backend's event becomes a host step.
    fn gate(&self) -> Result<Option<Opener>> {
        Ok(None)
    }

    /// Runs `step` on a host thread once everything enqueued before it is done; later
    /// operations wait for it.
    fn host_step(&self, name: &'static str, step: HostStep) -> Result<()>;

    /// An event that completes once everything enqueued so far is done.
    fn record(&self) -> Result<Self::Event>;

    /// Later operations wait for `event`.
    fn wait(&self, event: &Arc<Self::Event>) -> Result<()>;

    /// Waits until everything enqueued is done on the device: its failure, if one.
    fn synchronize(&self) -> Result<()>;

    /// Nothing pending; the device's error where the stream stopped on one.
    fn is_idle(&self) -> Result<bool>;

    /// The vendor's queue (see `Stream::native_handle`).
    fn native_handle(&self) -> usize;
}

/// A stream of a device backend: the hooks, and what the generic part keeps.
pub struct DeviceStream<H: StreamHooks> {
    hooks: H,
    host_errors: HostErrors,
}

impl<H: StreamHooks> DeviceStream<H> {
    /// A stream whose hooks `make` builds, given where host steps keep their failures
    /// (the backend's own host steps, the staging halves of its copies say, report there).
    pub fn new(make: impl FnOnce(HostErrors) -> Result<H>) -> Result<Self> {
        let host_errors = HostErrors::default();
        Ok(DeviceStream {
            hooks: make(host_errors.clone())?,
            host_errors,
        })
    }

    fn dispatch(&self, name: &'static str, op: StreamOp) -> Result<()> {
        let Some(work) = dispatch_op(&self.hooks, op)? else {
            return Ok(());
        };
        let step = HostStep(Step::Kept {
            name,
            work,
            errors: self.host_errors.clone(),
        });
        self.hooks.host_step(name, step)
    }
}

impl<H: StreamHooks> Stream for DeviceStream<H> {
    fn enqueue(&self, name: &'static str, op: StreamOp, guard: Option<Guard>) -> Result<()> {
        if let Some(guard) = guard {
            guard()?;
        }
        self.hooks.begin(name)?;
        self.dispatch(name, op)
            .map_err(|e| e.context(format!("enqueueing {name}")))
    }

    fn record(&self) -> Result<Arc<dyn StreamEvent>> {
        Ok(Arc::new(self.hooks.record()?))
    }

    /// Through a gate where the backend has them: a thread of ours waits for the event
    /// and opens it, so the wait never holds the driver's callback thread (which runs
    /// every stream's host steps, one at a time). The event's failure is this stream's.
    fn wait_foreign(&self, event: Arc<dyn StreamEvent>) -> Result<()> {
        let Some(open) = self.hooks.gate()? else {
            return wait_by_host_step(self, event);
        };
        let errors = self.host_errors.clone();
        let bridge = move || {
            keep_first_failure(&errors, "olWaitEvents", event.synchronize());
            open();
        };
        std::thread::Builder::new()
            .name("offload-wait-bridge".into())
            .spawn(bridge)
            .map(|_| ())
            .map_err(|e| Error::out_of_resources(format!("a thread to wait on an event: {e}")))
    }

    fn wait(&self, event: &Arc<dyn StreamEvent>) -> Result<()> {
        let own = own_event_arc::<H::Event>(event, H::WHOSE)?;
        self.hooks.wait(&own)
    }

    /// The device's failure first (it stopped the stream); a host step's failure is
    /// taken either way, reported once.
    fn synchronize(&self) -> Result<()> {
        let device = self.hooks.synchronize();
        let host = self.host_errors.lock().take();
        match (device, host) {
            (Err(e), _) | (Ok(()), Some(e)) => Err(e),
            (Ok(()), None) => Ok(()),
        }
    }

    fn is_idle(&self) -> Result<bool> {
        self.hooks.is_idle()
    }

    fn runs_on_host(&self) -> bool {
        false
    }

    fn native_handle(&self) -> Result<usize> {
        Ok(self.hooks.native_handle())
    }
}
