//! A kernel of a CUDA program: launches (plain and cooperative), dynamic shared memory,
//! and the driver's occupancy answers.
//!
//! The argument buffer goes to the driver as one block (`launch.rs`), exactly as
//! `olLaunchKernel` received it. The trait's `launch` runs on the context's legacy NULL
//! stream and waits for it; `launch_on` enqueues on any stream of the context without
//! waiting, for the stream implementation.

use super::calls_exec::LaunchShape;
use super::facts::DeviceFacts;
use super::ffi::{function_attribute, CuFunction, CuStream};
use super::program::Module;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::flags::trace;
use crate::plugin::{Kernel, KernelArgs, LaunchConfig, LaunchLimits};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

pub struct CudaKernel {
    name: String,
    function: CuFunction,
    /// Keeps the module loaded while the kernel exists.
    module: Arc<Module>,
    facts: Arc<DeviceFacts>,
    /// The function's own limit on threads per block (registers may make it < 1024).
    max_threads: i32,
    /// The function's limit on dynamic shared memory as the driver has it (read when the
    /// kernel is made: by default the per-block 48 KiB less the static shared memory).
    /// Raised only under `raising`, never lowered, so two launches raising it at once
    /// cannot leave it below what either needs.
    dynamic_shared_allowed: AtomicUsize,
    raising: Mutex<()>,
    /// Bytes of parameters the kernel takes, where the driver can tell (CUDA 12.4).
    params_size: OnceLock<Option<usize>>,
}

impl CudaKernel {
    pub fn new(
        name: &str,
        function: CuFunction,
        module: Arc<Module>,
        facts: Arc<DeviceFacts>,
    ) -> CudaKernel {
        let driver = module.context().driver();
        let attribute = |which, default: i32| {
            driver
                .function_attribute(function, which)
                .unwrap_or(default)
        };
        let max_threads = attribute(
            function_attribute::MAX_THREADS_PER_BLOCK,
            facts.max_threads_per_block,
        );
        let static_shared = attribute(function_attribute::SHARED_SIZE_BYTES, 0).max(0);
        let allowed = attribute(
            function_attribute::MAX_DYNAMIC_SHARED_SIZE_BYTES,
            facts.shared_per_block - static_shared,
        );
        CudaKernel {
            name: name.to_string(),
            function,
            dynamic_shared_allowed: AtomicUsize::new(allowed.max(0) as usize),
            raising: Mutex::new(()),
            module,
            facts,
            max_threads,
            params_size: OnceLock::new(),
        }
    }

    /// The `CUfunction` handle.
    pub fn function(&self) -> CuFunction {
        self.function
    }

    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    /// The most threads one block of this kernel may have.
    pub fn max_threads_per_block(&self) -> i32 {
        self.max_threads
    }

    /// Enqueues the launch on `stream` (of this kernel's context, which must be current)
    /// and returns without waiting.
    pub fn launch_on(
        &self,
        stream: CuStream,
        config: &LaunchConfig,
        args: &KernelArgs,
    ) -> Result<()> {
        self.allow_dynamic_shared(config.dyn_shared_memory)?;
        let shared = u32::try_from(config.dyn_shared_memory).map_err(|_| {
            Error::out_of_resources(format!(
                "{} bytes of dynamic shared memory is more than any GPU has",
                config.dyn_shared_memory
            ))
        })?;
        // The extents as the driver takes them (past the dimensions: 1).
        let launched = config.normalized();
        let shape = LaunchShape {
            grid: launched.num_groups,
            block: launched.group_size,
            shared_bytes: shared,
        };
        let driver = self.module.context().driver();
        // A C struct of the parameters may end in padding the kernel's parameter list
        // lacks (`{char; int *; short}` is 24 bytes, its parameters 18): the driver
        // refuses a buffer longer than the list ("too many resources requested").
        let bytes = match self.params_size() {
            Some(needed) if needed < args.bytes.len() => &args.bytes[..needed],
            _ => &args.bytes[..],
        };
        driver
            .launch(self.function, &shape, stream, bytes, config.cooperative)
            .map_err(|e| e.context(format!("launching kernel '{}'", self.name)))
    }

    /// Raises the function's dynamic shared memory limit to `bytes` where it does not
    /// allow that yet (up to what the device lets a block opt in to, less the kernel's
    /// static shared memory).
    fn allow_dynamic_shared(&self, bytes: usize) -> Result<()> {
        if bytes <= self.dynamic_shared_allowed.load(Ordering::Acquire) {
            return Ok(());
        }
        let _raising = self.raising.lock();
        if bytes <= self.dynamic_shared_allowed.load(Ordering::Acquire) {
            return Ok(()); // raised meanwhile by another launch
        }
        let value = i32::try_from(bytes).unwrap_or(i32::MAX);
        self.module
            .context()
            .driver()
            .set_function_attribute(
                self.function,
                function_attribute::MAX_DYNAMIC_SHARED_SIZE_BYTES,
                value,
            )
            .map_err(|e| {
                e.context(format!(
                    "kernel '{}' cannot have {bytes} bytes of dynamic shared memory on {} \
                     (at most {} per block, less the kernel's static shared memory)",
                    self.name,
                    self.facts.label(),
                    self.facts.local_memory()
                ))
            })?;
        self.dynamic_shared_allowed.store(bytes, Ordering::Release);
        Ok(())
    }

    /// Bytes of parameters, from the driver's parameter info (`None` where unknown).
    fn params_size(&self) -> Option<usize> {
        *self.params_size.get_or_init(|| {
            let context = self.module.context();
            let _current = context.make_current().ok()?;
            match context.driver().function_params(self.function)? {
                Ok(params) => Some(params_block_size(&params)),
                Err(e) => {
                    trace(|| format!("CUDA: parameters of kernel '{}': {e}", self.name));
                    None
                }
            }
        })
    }
}

/// The bytes a parameter block must have: the end of the last parameter.
pub fn params_block_size(params: &[(usize, usize)]) -> usize {
    params
        .iter()
        .map(|&(offset, size)| offset + size)
        .max()
        .unwrap_or(0)
}

impl CudaKernel {
    fn run_on_null_stream(&self, config: &LaunchConfig, args: &KernelArgs) -> Result<()> {
        let context = self.module.context();
        let _current = context.make_current()?;
        self.launch_on(CuStream::NULL, config, args)?;
        context
            .driver()
            .stream_synchronize(CuStream::NULL)
            .map_err(|e| e.context(format!("running kernel '{}'", self.name)))
    }
}

impl Kernel for CudaKernel {
    fn name(&self) -> &str {
        &self.name
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// A buffer shorter than the kernel's parameters would launch it with bytes read
    /// past the caller's data; refused when the driver says how long they are. A longer
    /// one is accepted (a C struct's trailing padding).
    fn check_args(&self, args: &KernelArgs) -> Result<()> {
        match self.params_size() {
            Some(needed) if args.len() < needed => Err(Error::invalid_argument(format!(
                "kernel '{}' takes {needed} bytes of parameters; ArgumentsSize is {}",
                self.name,
                args.len()
            ))),
            _ => Ok(()),
        }
    }

    /// Its registers or launch bounds can allow fewer threads a block than the device.
    fn limits(&self) -> LaunchLimits {
        LaunchLimits {
            max_group_items: Some(self.max_threads.max(0) as u64),
            local_memory: None,
        }
    }

    /// On the NULL stream.
    fn run_direct(&self, config: &LaunchConfig, args: &KernelArgs) -> Option<Result<()>> {
        Some(self.run_on_null_stream(config, args))
    }

    fn optimal_group_size(&self, shared_memory_per_item: usize) -> Result<usize> {
        let context = self.module.context();
        let _current = context.make_current()?;
        let (_, block) = context.driver().occupancy_max_potential_block_size(
            self.function,
            shared_memory_per_item,
            0,
        )?;
        Ok(block.max(1) as usize)
    }

    fn max_cooperative_groups(&self, config: &LaunchConfig) -> Result<u32> {
        if !self.facts.cooperative_launch {
            return Err(Error::unsupported(format!(
                "{} does not support cooperative launches",
                self.facts.label()
            )));
        }
        // The block as launched: dimensions past `config.dimensions` count as 1.
        let block = config.normalized().group_size;
        let threads = block.iter().map(|&n| n as u64).product::<u64>();
        let Ok(block) = i32::try_from(threads) else {
            return Ok(0);
        };
        let context = self.module.context();
        let _current = context.make_current()?;
        self.allow_dynamic_shared(config.dyn_shared_memory)?;
        let per_sm = context.driver().occupancy_max_active_blocks(
            self.function,
            block,
            config.dyn_shared_memory,
        )?;
        Ok((per_sm.max(0) as u32).saturating_mul(self.facts.multiprocessors.max(0) as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameter_block_ends_after_the_last_parameter() {
        assert_eq!(params_block_size(&[]), 0);
        // (float *x, float a, size_t n): 0+8, 8+4, 16+8.
        assert_eq!(params_block_size(&[(0, 8), (8, 4), (16, 8)]), 24);
        // Order does not matter.
        assert_eq!(params_block_size(&[(16, 8), (0, 8)]), 24);
    }
}
