//! CUDA streams and events behind the plugin interface: a queue is a `CUstream` of the
//! device's primary context (non-blocking: it does not serialise with the NULL stream),
//! an event a `CUevent` with timing, a host step a `cuLaunchHostFunc` callback.
//!
//! Copies go straight to `cuMemcpyAsync` (unified addressing tells the driver which side
//! is which; the driver stages pageable host memory itself). Fills run the plan of
//! `fill`; its upload buffer is kept until the stream has passed it. A host step's error
//! (a failed wait, a panicking callback) is kept and reported by the next synchronize.

use super::context::PrimaryContext;
use super::ffi::{CuEvent, CuStream, EVENT_DEFAULT, STREAM_NON_BLOCKING};
use super::fill::{plan_fill, repeated, FillStep};
use super::kernel::CudaKernel;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{
    keep_first_failure, own_event, own_kernel, run_host_work, Guard, HostWork, Stream, StreamEvent,
    StreamOp,
};

/// Whose kernels and events this stream takes (in refusals of another backend's).
const WHOSE: &str = "a CUDA device";
use parking_lot::Mutex;
use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

pub struct CudaStream {
    context: Arc<PrimaryContext>,
    stream: CuStream,
    /// What host steps report back: the first error since the last synchronize.
    host_error: Arc<Mutex<Option<Error>>>,
}

impl CudaStream {
    pub fn new(context: Arc<PrimaryContext>) -> Result<CudaStream> {
        context.make_current()?;
        let stream = context.driver().stream_create(STREAM_NON_BLOCKING)?;
        Ok(CudaStream {
            context,
            stream,
            host_error: Arc::default(),
        })
    }

    fn run(&self, name: &'static str, op: StreamOp) -> Result<()> {
        let driver = self.context.driver();
        match op {
            StreamOp::Copy { dst, src, size, .. } => {
                driver.memcpy_async(dst, src, size, self.stream)
            }
            StreamOp::Fill { dst, pattern, size } => self.fill(dst, &pattern, size),
            StreamOp::Launch {
                kernel,
                config,
                args,
            } => {
                let cuda = own_kernel::<CudaKernel>(kernel.as_ref(), WHOSE)?;
                // The argument buffer is passed by value: the driver copies it now.
                cuda.launch_on(self.stream, &config, &args)
            }
            StreamOp::Host(work) => self.host_step(name, work),
        }
    }

    fn fill(&self, dst: usize, pattern: &[u8], size: usize) -> Result<()> {
        let driver = self.context.driver();
        for step in plan_fill(dst as u64, pattern, size) {
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
                    let seed = repeated(pattern, size);
                    driver.memcpy_htod_async(dst, seed.as_ptr() as usize, size, self.stream)?;
                    // The copy reads `seed` when the stream reaches it: keep it until then.
                    self.host_step(
                        "olMemFill",
                        Box::new(move || {
                            drop(seed);
                            Ok(())
                        }),
                    )?;
                }
                FillStep::Replicate { dst, src, size } => {
                    driver.memcpy_dtod_async(dst, src, size, self.stream)?
                }
            }
        }
        Ok(())
    }

    /// Runs `work` on the driver's callback thread in stream order.
    fn host_step(&self, name: &'static str, work: HostWork) -> Result<()> {
        let step = Box::new(HostStep {
            name,
            work,
            error: self.host_error.clone(),
        });
        let data = Box::into_raw(step) as *mut c_void;
        // SAFETY: `run_host_step` takes the box back exactly once and calls no CUDA; on
        // an error the driver never calls it, so the box is reclaimed here instead.
        let queued = unsafe {
            self.context
                .driver()
                .launch_host_func(self.stream, run_host_step, data)
        };
        if queued.is_err() {
            // SAFETY: the driver refused the callback, so `data` is still ours.
            drop(unsafe { Box::from_raw(data as *mut HostStep) });
        }
        queued
    }
}

/// A host step on its way to the driver's callback thread.
struct HostStep {
    name: &'static str,
    work: HostWork,
    error: Arc<Mutex<Option<Error>>>,
}

unsafe extern "C" fn run_host_step(data: *mut c_void) {
    // SAFETY: `data` is the `Box<HostStep>` leaked by `host_step`, given to us once.
    let step = unsafe { Box::from_raw(data as *mut HostStep) };
    let HostStep { name, work, error } = *step;
    keep_first_failure(&error, name, run_host_work(work));
}

impl Stream for CudaStream {
    /// The guard runs now: the operation itself runs on the GPU, where no host check can
    /// run just before it.
    fn enqueue(&self, name: &'static str, op: StreamOp, guard: Option<Guard>) -> Result<()> {
        if let Some(guard) = guard {
            guard()?;
        }
        self.context.make_current()?;
        self.run(name, op)
            .map_err(|e| e.context(format!("enqueueing {name}")))
    }

    fn record(&self) -> Result<Arc<dyn StreamEvent>> {
        self.context.make_current()?;
        let driver = self.context.driver();
        let event = driver.event_create(EVENT_DEFAULT)?;
        let event = CudaEvent {
            context: self.context.clone(),
            event,
        };
        driver.event_record(event.event, self.stream)?;
        Ok(Arc::new(event))
    }

    fn wait(&self, event: &Arc<dyn StreamEvent>) -> Result<()> {
        let cuda = own_event::<CudaEvent>(event.as_ref(), WHOSE)?;
        self.context.make_current()?;
        self.context
            .driver()
            .stream_wait_event(self.stream, cuda.event)
    }

    fn synchronize(&self) -> Result<()> {
        self.context.make_current()?;
        let device = self.context.driver().stream_synchronize(self.stream);
        let host = self.host_error.lock().take();
        match (device, host) {
            (Err(e), _) => Err(e.context("an asynchronous operation failed")),
            (Ok(()), Some(e)) => Err(e),
            (Ok(()), None) => Ok(()),
        }
    }

    fn is_idle(&self) -> bool {
        self.context.make_current().is_ok()
            && self
                .context
                .driver()
                .stream_query(self.stream)
                .unwrap_or(false)
    }
}

impl Drop for CudaStream {
    /// Work still enqueued completes: the driver releases the stream after it.
    fn drop(&mut self) {
        if self.context.make_current().is_ok() {
            let _ = self.context.driver().stream_destroy(self.stream);
        }
    }
}

pub struct CudaEvent {
    context: Arc<PrimaryContext>,
    event: CuEvent,
}

impl StreamEvent for CudaEvent {
    fn is_complete(&self) -> bool {
        self.context.make_current().is_ok()
            && self
                .context
                .driver()
                .event_query(self.event)
                .unwrap_or(false)
    }

    fn synchronize(&self) -> Result<()> {
        self.context.make_current()?;
        self.context.driver().event_synchronize(self.event)
    }

    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32> {
        let end = own_event::<CudaEvent>(end, WHOSE)?;
        self.synchronize()?;
        end.synchronize()?;
        self.context
            .driver()
            .event_elapsed_ms(self.event, end.event)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        if self.context.make_current().is_ok() {
            let _ = self.context.driver().event_destroy(self.event);
        }
    }
}
