//! A device's primary context: the one context per device that the CUDA runtime also
//! uses, so memory and modules are shared with CUDA code in the same process.
//!
//! Retained once per `CudaDevice` and released when the last holder (the device, its
//! programs, later its streams) drops it. Driver calls act on the context current on the
//! calling thread, so each entry point makes this one current first (`make_current`):
//! the threads calling in are the application's, and anything may have changed theirs.
//! Calls whose handles tie them to this context (a stream's, an event's, a module's)
//! skip that read and make it current only when the driver refuses them (`on_handles`).

use super::driver::Driver;
use super::event::EventPool;
use super::ffi::{CuContext, CuDevice};
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::foundation::flags::trace;
use std::sync::Arc;

/// `CU_LIMIT_STACK_SIZE` and `CU_LIMIT_MALLOC_HEAP_SIZE`, by LLVM's variable names.
const LIMITS: [(&str, std::ffi::c_int); 2] = [
    ("LIBOMPTARGET_STACK_SIZE", 0x00),
    ("LIBOMPTARGET_HEAP_SIZE", 0x02),
];

pub struct PrimaryContext {
    driver: Arc<Driver>,
    device: CuDevice,
    context: CuContext,
    /// Events not in use, for reuse.
    events: EventPool,
}

impl PrimaryContext {
    /// Retains `device`'s primary context (creating it the first time; a few hundred
    /// milliseconds on a large GPU).
    pub fn retain(driver: Arc<Driver>, device: CuDevice) -> Result<PrimaryContext> {
        if let Some(flags) = schedule_flags(std::env::var("OFFLOAD_CUDA_SCHEDULE").ok().as_deref())
        {
            // Only takes effect before the context first becomes active in the process.
            if let Some(Err(e)) = driver.primary_ctx_set_flags(device, flags) {
                trace(|| {
                    format!("CUDA: OFFLOAD_CUDA_SCHEDULE not applied to device {device:?}: {e}")
                });
            }
        }
        let context = driver.primary_ctx_retain(device)?;
        let primary = PrimaryContext {
            driver,
            device,
            context,
            events: EventPool::default(),
        };
        primary.apply_limits(|name| std::env::var(name).ok());
        Ok(primary)
    }

    /// LLVM's variables for a context's limits, which its CUDA plugin (under libomptarget
    /// and liboffload alike) applies when it sets a device up: `LIBOMPTARGET_HEAP_SIZE`,
    /// the bytes device-side `malloc` may take, and `LIBOMPTARGET_STACK_SIZE`, each GPU
    /// thread's stack. A value that is no number, or one the driver refuses, is said on
    /// stderr (the device stays usable with the driver's default).
    fn apply_limits(&self, env: impl Fn(&str) -> Option<String>) {
        for (name, limit) in LIMITS {
            let Some(text) = env(name) else {
                continue;
            };
            let applied = match text.trim().parse::<usize>() {
                Err(_) => Err(format!("'{text}' is not a number of bytes")),
                Ok(bytes) => match self.make_current() {
                    Err(e) => Err(e.details.clone()),
                    Ok(_current) => match self.driver.set_limit(limit, bytes) {
                        None => Err("the driver has no cuCtxSetLimit".into()),
                        Some(result) => result.map_err(|e| e.details.clone()),
                    },
                },
            };
            if let Err(why) = applied {
                eprintln!(
                    "offload: {name}={text} not applied to CUDA device {}: {why}",
                    self.device
                );
            }
        }
    }

    pub fn driver(&self) -> &Arc<Driver> {
        &self.driver
    }

    pub fn device(&self) -> CuDevice {
        self.device
    }

    pub fn events(&self) -> &EventPool {
        &self.events
    }

    /// The `CUcontext` handle (for `cuMemcpyPeerAsync`, `cuCtxEnablePeerAccess`).
    pub fn handle(&self) -> CuContext {
        self.context
    }

    /// Makes this context current on the calling thread. Where the thread had another
    /// context current (the application's own CUDA code, on another GPU say), the guard
    /// makes that one current again when dropped. Where it had none, ours stays current,
    /// as the CUDA runtime's first call leaves a primary context current: the next call
    /// then finds it and sets nothing (a set and a restore added up to 10% to a queued
    /// launch on an H200). Reading the current context is a thread-local read in the
    /// driver, cheaper than setting it each time.
    #[inline]
    pub fn make_current(&self) -> Result<Current<'_>> {
        let previous = self.driver.current_context()?;
        if previous == self.context {
            return Ok(Current {
                driver: &self.driver,
                previous: None,
                switched: false,
            });
        }
        self.driver.set_current_context(self.context)?;
        Ok(Current {
            driver: &self.driver,
            previous: (!previous.is_null()).then_some(previous),
            switched: true,
        })
    }

    /// Runs `call`, driver calls on this context's streams, events or modules (their
    /// handles tie them to it), without reading the thread's current context first. A
    /// thread that calls again finds ours current already (`make_current` leaves it where
    /// the thread had none), and the read is a driver call of its own: it added 0.25 and
    /// 0.28 µs to a queued launch of 3.2-3.5 µs in two H200 runs (`bench_cuda_paths`).
    /// The documentation says whose context such a call uses only for a `CUkernel`
    /// launch (the stream's); where the driver refuses one because another context or
    /// none is current (`CUDA_ERROR_INVALID_CONTEXT`, to us an invalid argument like every
    /// handle error), it runs once more with ours current. It cannot have acted on
    /// another context instead: the handles are ours. Not for calls that make something
    /// (memory, modules, events, streams): those belong to whichever context is current
    /// and need `make_current`. `bench_cuda_paths` prints what the real driver answers
    /// (its PROBE lines).
    #[inline]
    pub fn on_handles<T>(&self, mut call: impl FnMut() -> Result<T>) -> Result<T> {
        match call() {
            Err(e) if e.code == ErrorCode::InvalidArgument => self.again_current(e, call),
            done => done,
        }
    }

    /// `call` once more with this context current, after the driver refused it with
    /// `refused`; where ours was current already, the refusal was for something else.
    #[cold]
    fn again_current<T>(&self, refused: Error, mut call: impl FnMut() -> Result<T>) -> Result<T> {
        let current = self.make_current()?;
        if !current.switched {
            return Err(refused);
        }
        call()
    }
}

/// This context made current for a while; the caller's comes back on drop.
#[must_use = "the context is current only while this lives"]
pub struct Current<'a> {
    driver: &'a Driver,
    /// The caller's context, where it had another one current.
    previous: Option<CuContext>,
    /// Ours was made current (it was not already).
    switched: bool,
}

impl Drop for Current<'_> {
    fn drop(&mut self) {
        if let Some(previous) = self.previous {
            if let Err(e) = self.driver.set_current_context(previous) {
                trace(|| format!("CUDA: making the caller's context current again: {e}"));
            }
        }
    }
}

impl Drop for PrimaryContext {
    /// The last holder is gone; queues destroyed while busy may still have work on the
    /// device (a destroyed `CUstream` finishes it), which releasing the context would
    /// lose: wait for it first.
    fn drop(&mut self) {
        // A thread that had no context current gets none back: ours ends here.
        let had_none =
            matches!(self.driver.current_context(), Ok(c) if c.is_null() || c == self.context);
        match self.make_current() {
            Ok(_current) => {
                if let Err(e) = self.driver.context_synchronize() {
                    trace(|| format!("CUDA: work left in device {}'s context: {e}", self.device));
                }
                self.events.destroy_all(&self.driver);
            }
            Err(e) => trace(|| format!("CUDA: device {}'s context: {e}", self.device)),
        }
        if had_none {
            let _ = self.driver.set_current_context(CuContext::NULL);
        }
        if let Err(e) = self.driver.primary_ctx_release(self.device) {
            trace(|| {
                format!(
                    "CUDA: releasing the primary context of device {}: {e}",
                    self.device
                )
            });
        }
    }
}

/// `OFFLOAD_CUDA_SCHEDULE`: how a host thread waiting for the GPU (a sync) waits, the
/// context's CU_CTX_SCHED_* flag. Unset: the driver's default (`auto`: spin while the GPU
/// has fewer active contexts than the host has cores, else yield), the same choice a
/// program using the driver directly gets. `spin` answers fastest and keeps a core busy;
/// `yield` spins but gives the core up; `blocking` sleeps until the GPU signals (what
/// LLVM 22's plugin chooses: a launch + sync then takes ~3x as long). Anything else is
/// traced and ignored.
pub fn schedule_flags(value: Option<&str>) -> Option<std::ffi::c_uint> {
    let flags = match value?.trim().to_ascii_lowercase().as_str() {
        "" => return None,
        "auto" => 0x0,
        "spin" => 0x1,
        "yield" => 0x2,
        "blocking" | "blocking_sync" => 0x4,
        other => {
            trace(|| {
                format!("CUDA: OFFLOAD_CUDA_SCHEDULE={other} is not auto, spin, yield or blocking; ignored")
            });
            return None;
        }
    };
    Some(flags)
}

#[cfg(test)]
mod tests {
    use super::schedule_flags;

    #[test]
    fn schedules_map_to_cu_ctx_sched_flags() {
        assert_eq!(schedule_flags(None), None);
        assert_eq!(schedule_flags(Some("auto")), Some(0));
        assert_eq!(schedule_flags(Some("Spin")), Some(1));
        assert_eq!(schedule_flags(Some("yield")), Some(2));
        assert_eq!(schedule_flags(Some("blocking")), Some(4));
        assert_eq!(schedule_flags(Some("fast")), None);
    }
}
