//! Streams and events: the plugin interface of asynchronous work.
//!
//! A device creates streams; a stream runs what is enqueued on it in order,
//! asynchronously, and reports what failed at its next `synchronize`. An event marks a
//! point of a stream: it can be queried, waited for (by the host or by another stream of
//! the same backend) and timed. A GPU backend maps these onto its own (CUDA streams and
//! events, HSA queues and signals); the host backend runs them on its worker pool. What
//! is the same for every backend (handles, validation, waits across backends, profiling)
//! is the runtime's, around these traits.

use super::program::{own_kernel, Kernel, KernelArgs, LaunchConfig};
use super::Device;
use crate::plugin::foundation::copy;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::worker_pool::panic_text;
use parking_lot::Mutex;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Which memory each side of a copy is, seen from the stream's device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyDirection {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    HostToHost,
}

impl CopyDirection {
    /// The direction of a copy whose destination and source are host memory or not
    /// (the one place that says so: the runtime's copies, queued or not).
    pub fn between(dst_is_host: bool, src_is_host: bool) -> CopyDirection {
        match (dst_is_host, src_is_host) {
            (true, true) => CopyDirection::HostToHost,
            (false, true) => CopyDirection::HostToDevice,
            (true, false) => CopyDirection::DeviceToHost,
            (false, false) => CopyDirection::DeviceToDevice,
        }
    }

    /// A copy between host memory and a device whose two ranges overlap is of one memory
    /// seen from both sides (the device's HOST or MANAGED memory, named by the host
    /// device on one side): it runs within the device, which copies overlapping ranges as
    /// memmove does, where a transfer from one side to the other would read bytes it had
    /// already overwritten.
    pub fn of_ranges(self, dst: usize, src: usize, size: usize) -> CopyDirection {
        let overlap = dst < src.saturating_add(size) && src < dst.saturating_add(size);
        match self {
            CopyDirection::HostToDevice | CopyDirection::DeviceToHost if overlap => {
                CopyDirection::DeviceToDevice
            }
            direction => direction,
        }
    }

    /// Runs the copy with the calls of `device`, the device side of it (device to device:
    /// within it); host to host is a plain copy of host memory.
    pub fn copy_with(self, device: &dyn Device, dst: usize, src: usize, size: usize) -> Result<()> {
        match self {
            CopyDirection::HostToDevice => device.copy_to_device(dst, src, size),
            CopyDirection::DeviceToHost => device.copy_from_device(dst, src, size),
            CopyDirection::DeviceToDevice => device.copy_within_device(dst, src, size),
            CopyDirection::HostToHost => {
                // SAFETY: the caller hands two host ranges of `size` bytes.
                unsafe { copy::move_bytes(dst as *mut u8, src as *const u8, size) };
                Ok(())
            }
        }
    }
}

/// Runs a checked launch and returns when it is done: the kernel's direct path where it
/// has one, else enqueued on a new stream of `device` (the kernel's) and synchronized.
#[inline]
pub fn launch_now(
    device: &dyn Device,
    kernel: &Arc<dyn Kernel>,
    config: &LaunchConfig,
    args: &KernelArgs,
) -> Result<()> {
    if let Some(done) = kernel.run_direct(config, args) {
        return done;
    }
    let stream = device.create_stream()?;
    let launch = StreamOp::Launch {
        kernel: kernel.clone(),
        config: *config,
        args: args.clone(),
    };
    stream.enqueue("olLaunchKernel", launch, None)?;
    stream.synchronize()
}

/// Work run on a host thread in stream order (host functions, and the runtime's own
/// steps, such as waiting for an event of another backend).
pub type HostWork = Box<dyn FnOnce() -> Result<()> + Send>;

/// Runs a host step's work on the calling thread: its result, a panic in it being an
/// error that says so (it never unwinds into the backend's thread or callback).
pub fn run_host_work(work: HostWork) -> Result<()> {
    catch_panic(work)
}

/// Runs `f`: its result, or a panic in it as an error that says so.
pub fn catch_panic(f: impl FnOnce() -> Result<()>) -> Result<()> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => Err(Error::unknown(format!("panicked: {}", panic_text(&panic)))),
    }
}

/// Keeps the failure of the asynchronous operation `name` in `first` unless an earlier
/// one is there (the stream's next sync reports the first).
pub fn keep_first_failure(first: &Mutex<Option<Error>>, name: &str, result: Result<()>) {
    if let Err(e) = result {
        first
            .lock()
            .get_or_insert_with(|| e.context(format!("asynchronous {name} failed")));
    }
}

/// A check run just before an operation, where the backend runs operations on the host
/// (the host backend: "was the memory freed meanwhile?"); a backend whose operations run
/// on the device runs it when the operation is enqueued.
pub type Guard = Box<dyn FnOnce() -> Result<()> + Send>;

/// One operation of a stream.
pub enum StreamOp {
    Copy {
        dst: usize,
        src: usize,
        size: usize,
        direction: CopyDirection,
    },
    /// `size` bytes at `dst` (device memory) with repetitions of `pattern`.
    Fill {
        dst: usize,
        pattern: Vec<u8>,
        size: usize,
    },
    Launch {
        kernel: Arc<dyn Kernel>,
        config: LaunchConfig,
        args: KernelArgs,
    },
    Host(HostWork),
}

/// The operations a backend's stream hooks run, whether on the device (`StreamHooks`)
/// or on host threads (`RunHooks`). Each returns once the operation is enqueued or, on
/// host threads, done.
pub trait OpHooks: Send + Sync + 'static {
    type Kernel: Kernel + 'static;

    /// The backend's devices, in refusals ("a CUDA device").
    const WHOSE: &'static str;

    fn copy(&self, dst: usize, src: usize, size: usize, direction: CopyDirection) -> Result<()>;

    /// `size` bytes at `dst` (device memory) with repetitions of `pattern`.
    fn fill(&self, dst: usize, pattern: Vec<u8>, size: usize) -> Result<()>;

    /// A launch of `kernel`, checked already; `held` is the same kernel, for a stream
    /// that keeps it until the launch is done.
    fn launch(
        &self,
        kernel: &Self::Kernel,
        held: &Arc<dyn Kernel>,
        config: &LaunchConfig,
        args: KernelArgs,
    ) -> Result<()>;
}

/// Runs a copy, fill or launch with `hooks` (a launch only of the backend's own kernels);
/// a host step is handed back, for the stream to run its way.
pub fn dispatch_op<H: OpHooks>(hooks: &H, op: StreamOp) -> Result<Option<HostWork>> {
    match op {
        StreamOp::Copy {
            dst,
            src,
            size,
            direction,
        } => hooks.copy(dst, src, size, direction)?,
        StreamOp::Fill { dst, pattern, size } => hooks.fill(dst, pattern, size)?,
        StreamOp::Launch {
            kernel,
            config,
            args,
        } => {
            let own = own_kernel::<H::Kernel>(kernel.as_ref(), H::WHOSE)?;
            hooks.launch(own, &kernel, &config, args)?
        }
        StreamOp::Host(work) => return Ok(Some(work)),
    }
    Ok(None)
}

/// An in-order stream of operations on one device.
pub trait Stream: Send + Sync {
    /// Appends `op`; `name` (the C function, e.g. "olMemcpy") names it in the error a
    /// later `synchronize` reports if it fails. An error returned here means nothing was
    /// enqueued.
    fn enqueue(&self, name: &'static str, op: StreamOp, guard: Option<Guard>) -> Result<()>;

    /// An event that completes once everything enqueued so far is done.
    fn record(&self) -> Result<Arc<dyn StreamEvent>>;

    /// Later operations wait for `event`, an event of this backend (`as_any` tells).
    fn wait(&self, event: &Arc<dyn StreamEvent>) -> Result<()>;

    /// Later operations wait for `event` of another backend; its failure becomes this
    /// stream's. By default a host step that waits for it.
    fn wait_foreign(&self, event: Arc<dyn StreamEvent>) -> Result<()> {
        wait_by_host_step(self, event)
    }

    /// Blocks until everything enqueued is done; returns (and forgets) the first error of
    /// an operation since the last synchronize.
    fn synchronize(&self) -> Result<()>;

    /// True when nothing enqueued is pending (may be false when the backend cannot tell);
    /// the stream's error where it has stopped on one (a GPU's fault), so a caller polling
    /// it learns of the failure instead of waiting for ever.
    fn is_idle(&self) -> Result<bool>;

    /// Whether operations run on host threads, where a guard runs just before each. A
    /// stream whose operations run on the device runs a guard when it is enqueued, just
    /// after the runtime's own look at the memory: the runtime then gives none.
    fn runs_on_host(&self) -> bool {
        true
    }

    /// The vendor's own queue under this stream (a `CUstream`, an `hsa_queue_t *`), for
    /// programs that hand it to the vendor's libraries; `Unsupported` where there is none.
    fn native_handle(&self) -> Result<usize> {
        Err(crate::plugin::unsupported(
            "OL_QUEUE_INFO_NATIVE_HANDLE (this device's queues are not a vendor's)",
        ))
    }
}

/// `stream`'s later operations wait for `event` (of any backend) by a host step that
/// synchronizes it; its failure becomes the stream's.
pub fn wait_by_host_step(
    stream: &(impl Stream + ?Sized),
    event: Arc<dyn StreamEvent>,
) -> Result<()> {
    let wait = StreamOp::Host(Box::new(move || event.synchronize()));
    stream.enqueue("olWaitEvents", wait, None)
}

/// A point in a stream.
pub trait StreamEvent: Send + Sync {
    /// Whether the event was reached; the error that stopped its stream where the event
    /// can no longer be reached (a GPU's fault), so a caller polling it is told.
    fn is_complete(&self) -> Result<bool>;

    /// Blocks until the event completes; the error of its stream, if an operation before
    /// it failed.
    fn synchronize(&self) -> Result<()>;

    /// Milliseconds from this event's completion to `end`'s (an event of the same
    /// device), waiting for both.
    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32>;

    /// For a backend to recognise its own events.
    fn as_any(&self) -> &dyn Any;

    /// The same, keeping a reference: a stream that waits holds the event.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

/// `event` as backend type `E`, for a stream or an event of that backend; refused,
/// naming what was expected, when it is another backend's (`whose`: "a CUDA device" and
/// so on). The runtime bridges waits across backends and times only events of one
/// device, so this refusal is a backstop.
pub fn own_event<'a, E: 'static>(event: &'a dyn StreamEvent, whose: &str) -> Result<&'a E> {
    event
        .as_any()
        .downcast_ref::<E>()
        .ok_or_else(|| not_an_event_of(whose))
}

/// As `own_event`, keeping a reference to the event.
pub fn own_event_arc<E: Send + Sync + 'static>(
    event: &Arc<dyn StreamEvent>,
    whose: &str,
) -> Result<Arc<E>> {
    Arc::clone(event)
        .into_any()
        .downcast::<E>()
        .map_err(|_| not_an_event_of(whose))
}

fn not_an_event_of(whose: &str) -> Error {
    Error::invalid_argument(format!("the event is not an event of {whose}"))
}
