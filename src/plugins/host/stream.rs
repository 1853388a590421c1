//! The host device's streams: streams run on host threads (`plugin::host_run_stream`)
//! with the host's operations: they run on the shared worker pool (or on a thread that
//! synchronizes), copies and fills are plain ones of host memory, and a kernel runs its
//! groups from the thread that runs the stream.

use super::kernel::HostKernel;
use super::memory;
use crate::plugin::foundation::error::Result;
use crate::plugin::foundation::worker_pool::WorkerPool;
use crate::plugin::host_run_stream::{HostRunStream, RunHooks, RunTask};
use crate::plugin::{CopyDirection, Kernel, KernelArgs, LaunchConfig, OpHooks};
use std::sync::Arc;

/// The host's operations of a stream.
pub struct HostOps;

pub type HostStream = HostRunStream<HostOps>;

impl RunHooks for HostOps {
    fn schedule(&self, task: RunTask) {
        WorkerPool::global().spawn(task);
    }
}

impl OpHooks for HostOps {
    type Kernel = HostKernel;
    const WHOSE: &'static str = "the host device";

    fn copy(&self, dst: usize, src: usize, size: usize, _: CopyDirection) -> Result<()> {
        memory::copy(dst, src, size);
        Ok(())
    }

    fn fill(&self, dst: usize, pattern: Vec<u8>, size: usize) -> Result<()> {
        memory::fill(dst, &pattern, size);
        Ok(())
    }

    fn launch(
        &self,
        kernel: &HostKernel,
        _: &Arc<dyn Kernel>,
        config: &LaunchConfig,
        args: KernelArgs,
    ) -> Result<()> {
        kernel.run(config, &args)
    }
}
