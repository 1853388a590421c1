//! A queue of a remote device: a stream run on host threads (`plugin::host_run_stream`)
//! whose operations are exchanges with the server, run by a thread of the queue's own
//! (they wait on the network; the host device's pool is not theirs to hold) or by a
//! thread that synchronizes. Kernels go to a stream of the server's own (one per queue)
//! without waiting for an answer: launches flow one message each, and while they run the
//! server serves other queues' copies. Before anything else of the queue (a copy, a host
//! step, an event) the stream waits for the kernels it queued (`settle`), which keeps
//! the queue in order.

use super::device::RemoteDevice;
use super::program::RemoteKernel;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::host_run_stream::{HostRunStream, RunHooks, RunTask};
use crate::plugin::{CopyDirection, Device, Kernel, KernelArgs, LaunchConfig, OpHooks};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Names of the servers' streams, one per queue of the process.
static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

/// A remote queue's operations, its server stream and its thread.
pub struct RemoteOps {
    device: Arc<RemoteDevice>,
    /// The queue's stream on the server.
    stream: u64,
    /// Whether kernels queued on the server stream may still run.
    kernels_queued: AtomicBool,
    /// Whether the server has the stream (it forgets it when the queue ends).
    used: AtomicBool,
    thread: crossbeam_channel::Sender<RunTask>,
}

pub type RemoteStream = HostRunStream<RemoteOps>;

/// A queue with its own thread.
pub fn new_stream(device: Arc<RemoteDevice>) -> Result<RemoteStream> {
    let (thread, tasks) = crossbeam_channel::unbounded::<RunTask>();
    std::thread::Builder::new()
        .name("offload-remote-stream".into())
        .spawn(move || tasks.into_iter().for_each(|task| task()))
        .map_err(|e| Error::new(ErrorCode::OutOfResources, format!("a stream thread: {e}")))?;
    Ok(HostRunStream::new(RemoteOps {
        device,
        stream: NEXT_STREAM.fetch_add(1, Ordering::Relaxed),
        kernels_queued: AtomicBool::new(false),
        used: AtomicBool::new(false),
        thread,
    }))
}

impl OpHooks for RemoteOps {
    type Kernel = RemoteKernel;
    const WHOSE: &'static str = "a remote device";

    fn copy(&self, dst: usize, src: usize, size: usize, direction: CopyDirection) -> Result<()> {
        direction.copy_with(self.device.as_ref() as &dyn Device, dst, src, size)
    }

    fn fill(&self, dst: usize, pattern: Vec<u8>, size: usize) -> Result<()> {
        self.device.fill(dst, &pattern, size)
    }

    /// Queued on the server's stream: no answer awaited.
    fn launch(
        &self,
        kernel: &RemoteKernel,
        _: &Arc<dyn Kernel>,
        config: &LaunchConfig,
        args: KernelArgs,
    ) -> Result<()> {
        self.kernels_queued.store(true, Ordering::Release);
        self.used.store(true, Ordering::Relaxed);
        self.device.launch(kernel, config, args, self.stream)
    }
}

impl RunHooks for RemoteOps {
    fn schedule(&self, task: RunTask) {
        // The thread ends only after this sender is gone.
        let _ = self.thread.send(task);
    }

    /// Waits for the kernels queued on the server (their first failure).
    fn settle(&self) -> Result<()> {
        let settled = self.device.sync_stream(self.stream, false);
        self.kernels_queued.store(false, Ordering::Release);
        settled
    }

    fn settled(&self) -> bool {
        !self.kernels_queued.load(Ordering::Acquire)
    }
}

impl Drop for RemoteOps {
    /// The queue is gone and its work done: the server finishes and forgets its stream
    /// (best effort, on the queue's thread, which then ends), so destroying a queue does
    /// not wait for the server.
    fn drop(&mut self) {
        if self.used.load(Ordering::Relaxed) {
            let (device, stream) = (self.device.clone(), self.stream);
            let _ = self.thread.send(Box::new(move || {
                let _ = device.sync_stream(stream, true);
            }));
        }
    }
}
