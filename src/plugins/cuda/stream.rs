//! CUDA streams behind the plugin interface: a queue is a `CUstream` of the device's
//! primary context (non-blocking: it does not serialise with the NULL stream), an event
//! a pooled `CUevent` (`event.rs`), a host step a `cuLaunchHostFunc` callback
//! (`host_steps.rs`), a wait on another backend's event a gate (`gate.rs`).
//!
//! Copies go straight to `cuMemcpyAsync` (unified addressing tells the driver which side
//! is which; the driver stages pageable host memory itself). Fills run the plan of
//! `fill`; its upload buffer is kept until the stream has passed it. A host step's error
//! (a failed wait, a panicking callback) is kept and reported by the next synchronize.

use super::context::PrimaryContext;
use super::event::{CudaEvent, Timing};
use super::ffi::{CuStream, STREAM_NON_BLOCKING};
use super::fill::{plan_fill, repeated, FillStep};
use super::gate::Gates;
use super::host_steps::{run_host_step, QueueSteps};
use super::kernel::CudaKernel;
use super::staging::Staging;
use crate::plugin::device_stream::{DeviceStream, HostErrors, HostStep, Opener, StreamHooks};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{CopyDirection, Kernel, KernelArgs, LaunchConfig, OpHooks};
use std::sync::Arc;

/// Whose kernels and events this stream takes (in refusals of another backend's).
const WHOSE: &str = "a CUDA device";

/// A CUDA queue: the generic device stream over a `CUstream`.
pub type CudaStream = DeviceStream<CudaQueue>;

/// Makes the stream of a new queue.
pub fn new_stream(context: Arc<PrimaryContext>) -> Result<CudaStream> {
    DeviceStream::new(|host_errors| CudaQueue::new(context, host_errors))
}

/// The vendor half of a CUDA queue: its `CUstream`.
pub struct CudaQueue {
    context: Arc<PrimaryContext>,
    stream: CuStream,
    /// Host steps handed to the driver, released here if a fault keeps it from calling them.
    steps: QueueSteps,
    /// Waits on other backends' events, and the staging of pageable copies, held on
    /// the GPU.
    gates: Gates,
    /// Copies from and to pageable host memory (`staging.rs`).
    staging: Staging,
}

impl CudaQueue {
    fn new(context: Arc<PrimaryContext>, host_errors: HostErrors) -> Result<CudaQueue> {
        let stream = {
            let _current = context.make_current()?;
            context.driver().stream_create(STREAM_NON_BLOCKING)?
        };
        Ok(CudaQueue {
            stream,
            steps: QueueSteps::default(),
            gates: Gates::default(),
            staging: Staging::new(context.clone(), host_errors),
            context,
        })
    }
}

impl OpHooks for CudaQueue {
    type Kernel = CudaKernel;
    const WHOSE: &'static str = WHOSE;

    /// Unified addressing tells the driver which side is which; pageable host memory is
    /// staged through the queue's pinned buffers, so enqueueing never waits.
    fn copy(&self, dst: usize, src: usize, size: usize, direction: CopyDirection) -> Result<()> {
        let _current = self.context.make_current()?;
        let staged = self
            .staging
            .copy(self.stream, &self.gates, (dst, src, size), direction)?;
        if staged {
            return Ok(());
        }
        self.context
            .driver()
            .memcpy_async(dst, src, size, self.stream)
    }

    fn fill(&self, dst: usize, pattern: Vec<u8>, size: usize) -> Result<()> {
        let _current = self.context.make_current()?;
        let driver = self.context.driver();
        for step in plan_fill(dst as u64, &pattern, size) {
            match step {
                FillStep::Set8 { dst, value, count } => {
                    driver.memset_d8_async(dst, value, count, self.stream)?
                }
                FillStep::Set16 { dst, value, count } => {
                    driver.memset_d16_async(dst, value, count, self.stream)?
                }
                FillStep::Set32 { dst, value, count } => {
                    driver.memset_d32_async(dst, value, count, self.stream)?
                }
                FillStep::Upload { dst, size } => {
                    let seed = repeated(&pattern, size);
                    driver.memcpy_htod_async(dst, seed.as_ptr() as usize, size, self.stream)?;
                    // The copy reads `seed` when the stream reaches it: keep it until then.
                    self.host_step("olMemFill", HostStep::infallible(move || drop(seed)))?;
                }
                FillStep::Replicate { dst, src, size } => {
                    driver.memcpy_dtod_async(dst, src, size, self.stream)?
                }
            }
        }
        Ok(())
    }

    /// The argument buffer is passed by value: the driver copies it now.
    fn launch(
        &self,
        kernel: &CudaKernel,
        _held: &Arc<dyn Kernel>,
        config: &LaunchConfig,
        args: KernelArgs,
    ) -> Result<()> {
        self.context
            .on_handles(|| kernel.launch_on(self.stream, config, &args))
    }
}

impl StreamHooks for CudaQueue {
    type Event = CudaEvent;

    /// A wait for a word of pinned memory (`gate.rs`).
    fn gate(&self) -> Result<Option<Opener>> {
        let _current = self.context.make_current()?;
        let opener = self.gates.close(&self.context, self.stream)?;
        Ok(opener.map(|o| Box::new(move || o.open()) as Opener))
    }

    /// On the driver's callback thread, as a `cuLaunchHostFunc` callback.
    fn host_step(&self, _name: &'static str, step: HostStep) -> Result<()> {
        let data = self.steps.hand_out(step);
        let queued = self.context.on_handles(|| {
            // SAFETY: `run_host_step` takes `data` as the number of a kept step and calls
            // no CUDA; it never dereferences it.
            unsafe {
                self.context
                    .driver()
                    .launch_host_func(self.stream, run_host_step, data)
            }
        });
        if queued.is_err() {
            self.steps.take_back(data);
        }
        queued
    }

    /// A timed event (the application may ask for the time between two), from the
    /// context's pool.
    fn record(&self) -> Result<CudaEvent> {
        CudaEvent::record(&self.context, self.stream, Timing::Timed)
    }

    fn wait(&self, event: &Arc<CudaEvent>) -> Result<()> {
        self.context.on_handles(|| {
            self.context
                .driver()
                .stream_wait_event(self.stream, event.handle())
        })
    }

    /// After a fault, the host steps the driver will not call are released and counted.
    fn synchronize(&self) -> Result<()> {
        let gates = self.gates.in_use();
        let synchronized = self
            .context
            .on_handles(|| self.context.driver().stream_synchronize(self.stream));
        match synchronized {
            Ok(()) => {
                self.steps.all_called();
                self.gates.passed(gates);
                Ok(())
            }
            Err(e) => {
                let e = e.context("an asynchronous operation failed");
                let unrun = match self.steps.release_uncalled() {
                    0 => return Err(e),
                    1 => "1 host function queued before the fault was not run".to_string(),
                    n => format!("{n} host functions queued before the fault were not run"),
                };
                Err(Error::new(e.code, format!("{}; {unrun}", e.details)))
            }
        }
    }

    /// `cuStreamQuery`: after a fault it answers the context's error on every call.
    fn is_idle(&self) -> Result<bool> {
        self.context
            .on_handles(|| self.context.driver().stream_query(self.stream))
    }

    fn native_handle(&self) -> usize {
        self.stream.0 as usize
    }
}

impl Drop for CudaQueue {
    /// Work still enqueued completes: the driver releases the stream after it.
    fn drop(&mut self) {
        if let Ok(_current) = self.context.make_current() {
            let idle = matches!(self.context.driver().stream_query(self.stream), Ok(true));
            let _ = self.context.driver().stream_destroy(self.stream);
            self.gates.free(&self.context);
            self.staging.free(idle);
        }
    }
}
