//! AMDGPU streams and events behind the plugin interface.
//!
//! A stream takes one of the device's AQL queues (shared round-robin) and keeps, under
//! its own lock only, the signal of its last operation. Every operation gets a pooled
//! completion signal and waits for the one before it: packets on the stream's queue by
//! the barrier bit (a barrier-AND packet first when the previous operation ran
//! elsewhere: a copy engine or a host step), copies by their dependency signals, host
//! steps by an async signal handler. What an operation holds (kernarg segment, staging
//! buffer, locked memory, the kernel, a waited event's signal) is dropped once its signal
//! is done: that is the completion action. An event is a barrier-AND marker packet whose
//! signal carries the packet processor's timestamps.
//!
//! Errors a GPU reports asynchronously (a failed packet, a memory fault) reach the
//! queue's or device's `ErrorSlot`; waits check them, so they come out of the next
//! synchronize with their reason instead of hanging or exiting.

use super::buffers::{Locked, Staging};
use super::copy_plan::{plan_copy, CopyPlan};
use super::device::{fill_repeated, fill_word, DeviceShared};
use super::host_step::{HostSteps, Job};
use super::kernarg::{checked_kernarg_size, write_shaped_kernarg};
use super::kernel::AmdgpuKernel;
use super::packet::{barrier_and_packet, launch_shape, shaped_dispatch_packet, DispatchTarget};
use super::queue::AqlQueue;
use super::signal::PooledSignal;
use crate::plugin::device_stream::{DeviceStream, HostErrors, HostStep, Opener, StreamHooks};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::parallel::copy_for_dma;
use crate::plugin::{
    own_event, CopyDirection, HostWork, Kernel, KernelArgs, LaunchConfig, OpHooks, StreamEvent,
};

/// Whose kernels and events this stream takes (in refusals of another backend's).
const WHOSE: &str = "an AMDGPU device";
use parking_lot::Mutex;
use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

/// How long one wait for a signal lasts before errors are checked again.
const WAIT_SLICE_NS: u64 = 20_000_000;
/// A barrier-AND packet waits for at most five signals.
const MAX_DEPS: usize = 5;

type Held = Box<dyn Any + Send>;

#[derive(Default)]
struct State {
    /// The signal of the last operation, and whether it ran on the stream's queue (then
    /// the next packet's barrier bit orders it; otherwise a barrier packet must wait).
    last: Option<Arc<PooledSignal>>,
    last_on_queue: bool,
    /// Operations not yet seen done, with what each holds until then.
    pending: VecDeque<(Arc<PooledSignal>, Vec<Held>)>,
    /// The error that stopped the queue or device; nothing runs after it.
    broken: Option<Error>,
}

impl State {
    /// Drops what completed operations held (oldest first: a stream completes in order).
    fn reap(&mut self) {
        while self.pending.front().is_some_and(|(s, _)| s.is_done()) {
            self.pending.pop_front();
        }
    }

    /// The last operation's signal where it is still pending.
    fn dependency(&self) -> Option<Arc<PooledSignal>> {
        self.last.clone().filter(|s| !s.is_done())
    }
}

/// An AMDGPU queue: the generic device stream over an AQL queue.
pub type AmdgpuStream = DeviceStream<AmdgpuQueue>;

/// Makes the stream of a new queue (or of a synchronous launch).
pub fn new_stream(device: Arc<DeviceShared>) -> Result<AmdgpuStream> {
    DeviceStream::new(|host_errors| AmdgpuQueue::new(device, host_errors))
}

/// The vendor half of an AMDGPU stream.
pub struct AmdgpuQueue {
    device: Arc<DeviceShared>,
    queue: Arc<AqlQueue>,
    state: Mutex<State>,
    /// The generic stream's: where this stream's host steps keep their failures.
    host_errors: HostErrors,
    /// This stream's host-step thread, started by its first host step: a host function
    /// that blocks (or a wait on another backend's event) holds up this stream only.
    host_steps: OnceLock<std::result::Result<HostSteps, Error>>,
}

impl AmdgpuQueue {
    fn new(device: Arc<DeviceShared>, host_errors: HostErrors) -> Result<AmdgpuQueue> {
        let queue = device.queue()?;
        Ok(AmdgpuQueue {
            device,
            queue,
            state: Mutex::new(State::default()),
            host_errors,
            host_steps: OnceLock::new(),
        })
    }

    /// The error that stopped this stream's device or queue, if one did (a memory
    /// fault first: it says where and why, the queue's callback only that it stopped).
    fn async_error(&self) -> Option<Error> {
        self.device.faults.get().or_else(|| self.queue.error())
    }

    /// Waits for `signal`, checking for errors that mean it will never complete.
    fn wait_signal(&self, signal: &PooledSignal) -> Result<()> {
        loop {
            if signal.wait(WAIT_SLICE_NS) {
                return Ok(());
            }
            if let Some(e) = self.async_error() {
                return Err(e);
            }
        }
    }

    fn finish(&self, st: &mut State, signal: Arc<PooledSignal>, held: Vec<Held>, on_queue: bool) {
        st.reap();
        st.pending.push_back((signal.clone(), held));
        st.last = Some(signal);
        st.last_on_queue = on_queue;
    }

    /// A barrier-AND packet on the stream's queue waiting for `deps` (at most five).
    /// Later operations wait for `signal`: a barrier-AND packet on it (and on the last
    /// operation, where that ran off the queue).
    fn wait_for_signal(&self, signal: Arc<PooledSignal>) -> Result<()> {
        let mut st = self.state.lock();
        let mut deps = vec![signal];
        if !st.last_on_queue {
            deps.extend(st.dependency());
        }
        let done = self.barrier(&deps)?;
        let held = deps.into_iter().map(|s| Box::new(s) as Held).collect();
        self.finish(&mut st, done, held, true);
        Ok(())
    }

    fn barrier(&self, deps: &[Arc<PooledSignal>]) -> Result<Arc<PooledSignal>> {
        let signal = self.device.signals.take()?;
        let handles: Vec<u64> = deps
            .iter()
            .take(MAX_DEPS)
            .map(|s| s.handle().handle)
            .collect();
        let packet = barrier_and_packet(&handles, signal.handle().handle)?;
        self.queue.submit_barrier(&packet)?;
        Ok(signal)
    }

    /// Makes the next packet on the queue wait for the last operation if it ran
    /// elsewhere.
    fn order_on_queue(&self, st: &mut State) -> Result<()> {
        if st.last_on_queue {
            return Ok(());
        }
        if let Some(dep) = st.dependency() {
            let signal = self.barrier(std::slice::from_ref(&dep))?;
            self.finish(st, signal, vec![Box::new(dep)], true);
        }
        Ok(())
    }

    fn enqueue_launch(
        &self,
        st: &mut State,
        amd: &AmdgpuKernel,
        kernel: Arc<dyn Kernel>,
        config: &LaunchConfig,
        args: &KernelArgs,
    ) -> Result<()> {
        if !Arc::ptr_eq(amd.device(), &self.device) {
            return Err(Error::invalid_argument(format!(
                "kernel '{}' was loaded on {}, not on this queue's {}",
                kernel.name(),
                amd.device().label(),
                self.device.label()
            )));
        }
        let limit = amd.metadata().max_flat_workgroup_size;
        if limit > 0 && config.items_per_group() > limit {
            // The device's limit was checked by the runtime; the kernel was compiled for
            // at most this many (OpenCL's default is 256), and more would run wrongly.
            return Err(Error::invalid_argument(format!(
                "a work-group of {} work-items is more than kernel '{}' was compiled for: \
                 at most {limit} (its max_flat_workgroup_size)",
                config.items_per_group(),
                kernel.name()
            )));
        }
        let dynamic_shared = u32::try_from(config.dyn_shared_memory).map_err(|_| {
            Error::out_of_resources(format!(
                "{} bytes of dynamic shared memory is more than any GPU has",
                config.dyn_shared_memory
            ))
        })?;
        let object = *amd.object();
        let group_segment = object
            .group_size
            .checked_add(dynamic_shared)
            .filter(|&g| u64::from(g) <= self.device.facts.lds_size);
        let Some(group_segment) = group_segment else {
            return Err(Error::out_of_resources(format!(
                "kernel '{}' needs {} bytes of LDS plus {dynamic_shared} dynamic; {} has {}",
                kernel.name(),
                object.group_size,
                self.device.label(),
                self.device.facts.lds_size
            )));
        };
        // Checked once for the kernarg segment and the packet alike.
        let shape = launch_shape(config.dimensions, config.num_groups, config.group_size)
            .map_err(|e| e.context(format!("launching kernel {}", kernel.name())))?;
        let size = checked_kernarg_size(amd.metadata())?;
        let mut segment = self.device.kernargs.block(size, &self.device.gpus)?;
        write_shaped_kernarg(
            amd.metadata(),
            &args.bytes,
            &shape,
            dynamic_shared,
            segment.as_mut_slice(),
        )?;
        self.order_on_queue(st)?;
        let signal = self.device.signals.take()?;
        let packet = shaped_dispatch_packet(
            &shape,
            &DispatchTarget {
                private_segment_size: private_segment(&object),
                group_segment_size: group_segment,
                kernel_object: object.kernel_object,
                kernarg_address: segment.address() as u64,
                completion_signal: signal.handle().handle,
            },
        );
        self.queue.submit_dispatch(&packet)?;
        // One box for both (an allocation less per launch); the segment is let go first.
        self.finish(st, signal, vec![Box::new((segment, kernel))], true);
        Ok(())
    }

    /// An async copy after the last operation (and `also`, where given).
    fn engine_copy(
        &self,
        st: &mut State,
        dst: usize,
        src: usize,
        size: usize,
        agents: (bool, bool),
        held: Vec<Held>,
    ) -> Result<()> {
        let d = &self.device;
        let agent = |on_gpu: bool| if on_gpu { d.agent } else { d.cpu };
        let deps: Vec<_> = st.dependency().into_iter().collect();
        let handles: Vec<_> = deps.iter().map(|s| s.handle()).collect();
        let signal = d.signals.take()?;
        d.hsa.async_copy(
            dst,
            agent(agents.0),
            src,
            agent(agents.1),
            size,
            &handles,
            signal.handle(),
        )?;
        let mut held = held;
        held.extend(deps.into_iter().map(|s| Box::new(s) as Held));
        self.finish(st, signal, held, false);
        Ok(())
    }

    /// Runs `work` on the device's host-step thread after the last operation.
    fn enqueue_host_step(&self, st: &mut State, name: &'static str, work: HostWork) -> Result<()> {
        let done = self.device.signals.take()?;
        let job = Job {
            name,
            work,
            done: done.clone(),
            errors: self.host_errors.clone(),
            after: st.dependency(),
        };
        let steps = self
            .host_steps
            .get_or_init(|| HostSteps::start(&self.device.label()))
            .as_ref()
            .map_err(Clone::clone)?;
        steps.schedule(&self.device.hsa, job)?;
        self.finish(st, done, Vec::new(), false);
        Ok(())
    }

    fn enqueue_copy(
        &self,
        st: &mut State,
        dst: usize,
        src: usize,
        size: usize,
        direction: CopyDirection,
    ) -> Result<()> {
        let d = &self.device;
        let host_side = match direction {
            CopyDirection::HostToDevice => src,
            _ => dst,
        };
        let known = matches!(
            direction,
            CopyDirection::HostToDevice | CopyDirection::DeviceToHost
        ) && d.hsa.is_known_memory(host_side, size);
        let to_device = direction == CopyDirection::HostToDevice;
        match plan_copy(direction, known, size, d.lock_threshold) {
            CopyPlan::Direct => {
                let agents = match direction {
                    CopyDirection::HostToDevice => (true, false),
                    CopyDirection::DeviceToHost => (false, true),
                    _ => (true, true),
                };
                self.engine_copy(st, dst, src, size, agents, Vec::new())
            }
            CopyPlan::Lock => {
                let gpu = [d.agent];
                let agent_addr = d.hsa.lock(host_side, size, &gpu)?;
                let locked = Locked {
                    hsa: d.hsa.clone(),
                    host: host_side,
                    agent_addr,
                };
                let (dst, src, agents) = if to_device {
                    (dst, agent_addr, (true, false))
                } else {
                    (agent_addr, src, (false, true))
                };
                self.engine_copy(st, dst, src, size, agents, vec![Box::new(locked)])
            }
            CopyPlan::StageIn => {
                let staging = Arc::new(Mutex::new(d.staging(size)?));
                let fill = staging.clone();
                // In stream order: an earlier operation may still be writing `src`.
                let (src_addr, n) = (src, size);
                self.enqueue_host_step(
                    st,
                    "olMemcpy",
                    Box::new(move || {
                        let to = fill.lock().as_mut_slice().as_mut_ptr() as usize;
                        // SAFETY: `src` is the caller's host memory of `size` bytes, valid
                        // until the copy completes (the API's contract for async copies);
                        // the staging buffer holds `size` bytes, this step's alone.
                        unsafe { copy_for_dma(to, src_addr, n) };
                        Ok(())
                    }),
                )?;
                let addr = staging.lock().address();
                self.engine_copy(st, dst, addr, size, (true, false), vec![Box::new(staging)])
            }
            CopyPlan::StageOut => {
                let staging: Staging = d.staging(size)?;
                let addr = staging.address();
                self.engine_copy(st, addr, src, size, (false, true), Vec::new())?;
                let (dst_addr, n) = (dst, size);
                self.enqueue_host_step(
                    st,
                    "olMemcpy",
                    Box::new(move || {
                        // SAFETY: `dst` is the caller's host memory of `size` bytes, valid
                        // until the copy completes; the staging buffer holds the copy's
                        // `size` bytes (its DMA completed before this step).
                        unsafe { copy_for_dma(dst_addr, staging.as_slice().as_ptr() as usize, n) };
                        Ok(())
                    }),
                )
            }
            CopyPlan::HostMemcpy => self.enqueue_host_step(
                st,
                "olMemcpy",
                Box::new(move || {
                    // SAFETY: both are the caller's host memory of `size` bytes, valid until
                    // the copy completes; `ptr::copy` allows overlap.
                    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size) };
                    Ok(())
                }),
            ),
        }
    }

    fn enqueue_fill(
        &self,
        st: &mut State,
        dst: usize,
        pattern: Vec<u8>,
        size: usize,
    ) -> Result<()> {
        if let Some(word) = fill_word(dst, &pattern, size) {
            let hsa = self.device.hsa.clone();
            return self.enqueue_host_step(
                st,
                "olMemFill",
                Box::new(move || hsa.fill_u32(dst, word, size / 4)),
            );
        }
        let mut staging = self.device.staging(size)?;
        fill_repeated(staging.as_mut_slice(), &pattern);
        let addr = staging.address();
        self.engine_copy(st, dst, addr, size, (true, false), vec![Box::new(staging)])
    }
}

impl OpHooks for AmdgpuQueue {
    type Kernel = AmdgpuKernel;
    const WHOSE: &'static str = WHOSE;

    fn copy(&self, dst: usize, src: usize, size: usize, direction: CopyDirection) -> Result<()> {
        self.enqueue_copy(&mut self.state.lock(), dst, src, size, direction)
    }

    fn fill(&self, dst: usize, pattern: Vec<u8>, size: usize) -> Result<()> {
        self.enqueue_fill(&mut self.state.lock(), dst, pattern, size)
    }

    fn launch(
        &self,
        kernel: &AmdgpuKernel,
        held: &Arc<dyn Kernel>,
        config: &LaunchConfig,
        args: KernelArgs,
    ) -> Result<()> {
        self.enqueue_launch(&mut self.state.lock(), kernel, held.clone(), config, &args)
    }
}

impl StreamHooks for AmdgpuQueue {
    type Event = AmdgpuEvent;

    fn begin(&self, name: &'static str) -> Result<()> {
        match &self.state.lock().broken {
            Some(e) => Err(e
                .clone()
                .context(format!("enqueueing {name} after the queue stopped"))),
            None => Ok(()),
        }
    }

    /// The host-step thread keeps the work's failure in this stream's `host_errors`, the
    /// ones the generic stream gave it.
    fn host_step(&self, name: &'static str, step: HostStep) -> Result<()> {
        self.enqueue_host_step(&mut self.state.lock(), name, step.into_work())
    }

    fn record(&self) -> Result<AmdgpuEvent> {
        let mut st = self.state.lock();
        let deps: Vec<_> = if st.last_on_queue {
            Vec::new()
        } else {
            st.dependency().into_iter().collect()
        };
        let signal = self.barrier(&deps)?;
        let held = deps.into_iter().map(|s| Box::new(s) as Held).collect();
        self.finish(&mut st, signal.clone(), held, true);
        Ok(AmdgpuEvent {
            signal,
            device: self.device.clone(),
            queue: self.queue.clone(),
        })
    }

    fn wait(&self, event: &Arc<AmdgpuEvent>) -> Result<()> {
        if event.signal.is_done() {
            return Ok(());
        }
        self.wait_for_signal(event.signal.clone())
    }

    /// A barrier-AND packet on a fresh signal that the opener brings to 0: HSA runs every
    /// async handler (our host steps) on one thread, which a wait on another backend's
    /// event must not hold.
    fn gate(&self) -> Result<Option<Opener>> {
        let gate = self.device.signals.take()?;
        self.wait_for_signal(gate.clone())?;
        Ok(Some(Box::new(move || gate.complete())))
    }

    /// A stopped queue stays stopped: its error again at every sync.
    fn synchronize(&self) -> Result<()> {
        let last = {
            let st = self.state.lock();
            if let Some(e) = &st.broken {
                return Err(e.clone());
            }
            st.last.clone()
        };
        if let Some(last) = last {
            if let Err(e) = self.wait_signal(&last) {
                let e = e.context("an asynchronous operation failed");
                self.state.lock().broken = Some(e.clone());
                return Err(e);
            }
        }
        self.state.lock().reap();
        Ok(())
    }

    fn is_idle(&self) -> Result<bool> {
        let state = self.state.lock();
        if let Some(e) = &state.broken {
            return Err(e.clone());
        }
        Ok(state.last.as_ref().map_or(true, |s| s.is_done()))
    }

    /// The AQL queue's `hsa_queue_t *` (kept for the stream's life).
    fn native_handle(&self) -> usize {
        self.queue.raw() as usize
    }
}

impl Drop for AmdgpuQueue {
    /// Work still enqueued completes before its buffers are released; after a fault
    /// nothing will complete, so what it holds is leaked rather than reused under the GPU.
    fn drop(&mut self) {
        let broken =
            StreamHooks::synchronize(self).is_err() && self.state.get_mut().broken.is_some();
        if broken {
            let pending = std::mem::take(&mut self.state.get_mut().pending);
            std::mem::forget(pending);
        }
    }
}

pub struct AmdgpuEvent {
    signal: Arc<PooledSignal>,
    device: Arc<DeviceShared>,
    queue: Arc<AqlQueue>,
}

impl AmdgpuEvent {
    fn end_ticks(&self) -> Result<u64> {
        self.device
            .hsa
            .dispatch_time(self.device.agent, self.signal.handle())
            .map(|t| t.end)
    }
}

impl StreamEvent for AmdgpuEvent {
    fn is_complete(&self) -> Result<bool> {
        if self.signal.is_done() {
            return Ok(true);
        }
        match self.device.faults.get().or_else(|| self.queue.error()) {
            Some(e) => Err(e.context("an operation before the event failed")),
            None => Ok(false),
        }
    }

    fn synchronize(&self) -> Result<()> {
        loop {
            if self.signal.wait(WAIT_SLICE_NS) {
                return Ok(());
            }
            if let Some(e) = self.device.faults.get().or_else(|| self.queue.error()) {
                return Err(e.context("an operation before the event failed"));
            }
        }
    }

    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32> {
        let end = own_event::<AmdgpuEvent>(end, WHOSE)?;
        if !Arc::ptr_eq(&self.device, &end.device) {
            return Err(Error::invalid_argument(
                "the two events are of different AMDGPU devices",
            ));
        }
        self.synchronize()?;
        end.synchronize()?;
        let frequency = self.device.hsa.timestamp_frequency()?;
        let (a, b) = (self.end_ticks()?, end.end_ticks()?);
        Ok(ticks_to_ms(a, b, frequency))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// Scratch per work-item for a kernel whose stack the compiler could not bound
/// (recursion, indirect calls) when `OFFLOAD_AMDGPU_STACK_SIZE` does not say (upstream's
/// default too).
pub const DEFAULT_STACK_SIZE: u32 = 1024;

/// The private segment a dispatch asks for: the kernel's, or at least the stack size
/// where its call stack is dynamic.
fn private_segment(object: &super::kernel::KernelObject) -> u32 {
    if !object.dynamic_callstack {
        return object.private_size;
    }
    static STACK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let stack = *STACK.get_or_init(|| {
        std::env::var("OFFLOAD_AMDGPU_STACK_SIZE")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_STACK_SIZE)
    });
    object.private_size.max(stack)
}

/// Milliseconds from tick `start` to tick `end` (negative when `end` came first).
pub fn ticks_to_ms(start: u64, end: u64, frequency: u64) -> f32 {
    let delta = end as f64 - start as f64;
    (delta * 1000.0 / frequency as f64) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_become_milliseconds() {
        assert_eq!(ticks_to_ms(0, 1_000_000, 1_000_000_000), 1.0);
        assert_eq!(ticks_to_ms(100_000_000, 100_000_000, 100_000_000), 0.0);
        assert_eq!(ticks_to_ms(2_000, 1_000, 1_000_000), -1.0);
        assert_eq!(ticks_to_ms(0, 25_000_000, 100_000_000), 250.0);
    }
}
