//! Host kernels: running a launch's grid on the CPU cores.
//!
//! Kernels of the liboffload host ABI (`include/offload/host_kernel.h`) are called once
//! per work-group; the groups of a launch are spread over the worker pool with
//! `parallel_for` (the caller takes groups too, and a 1-group launch runs inline without
//! allocating), each with the launch's argument buffer. Functions without a marker follow
//! LLVM's host plugin convention and are called once per launch through libffi, the buffer
//! unpacked into one pointer-sized value per argument; or, when the launch says its buffer
//! is the kernel's C parameters (`KernelArgs::c_parameters`), with their real types
//! (`c_call`).

use super::c_call::{self, Signature};
use super::debug_types::DebugInfo;
use super::facts::MAX_GROUP_SIZE;
use super::kernel_abi::{HostKernelContext, HostKernelFn};
use super::memfd_loader::LoadedLibrary;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::parallel::parallel_for;
use crate::plugin::foundation::worker_pool::{panic_text, WorkerPool};
use crate::plugin::{Kernel, KernelArgs, LaunchConfig, LaunchLimits};
use parking_lot::{Condvar, Mutex};
use std::alloc::Layout;
use std::cell::Cell;
use std::os::raw::c_void;
use std::sync::{Arc, OnceLock};

/// The work-group size `optimal_group_size` suggests for kernels of the host ABI: large
/// enough that the per-group cost (a context and one indirect call, tens of nanoseconds)
/// is small next to the group's work, small enough that a launch over a modest range
/// still makes many groups to balance across cores.
pub const PREFERRED_GROUP_SIZE: usize = 256;

/// One argument slot of LLVM's host convention.
const WORD: usize = std::mem::size_of::<usize>();

/// Alignment of dynamic shared memory (a cache line, enough for any vector type).
const SHARED_ALIGN: usize = 64;

/// 16 bytes at a 16-byte boundary, for realigning argument buffers.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Aligned16([u8; 16]);

/// How a kernel function is called.
#[derive(Clone, Copy, Debug)]
pub enum Convention {
    /// The host kernel ABI, version 2: called per work-group with a context and the
    /// argument buffer, which must be `args_size` bytes (`None`: any size).
    HostAbi {
        function: HostKernelFn,
        args_size: Option<usize>,
    },
    /// LLVM's generic-ELF convention: `void f(void *, ...)`, called once per launch.
    Llvm { address: usize },
}

pub struct HostKernel {
    name: String,
    convention: Convention,
    /// The device's local memory size: the most dynamic shared memory a group may have.
    local_memory: usize,
    /// Keeps the program loaded while the kernel exists.
    _library: Arc<LoadedLibrary>,
    /// The program's DWARF, if any, and the signature read for typed calls (at the first
    /// launch that needs it).
    debug: Option<Arc<DebugInfo>>,
    signature: OnceLock<Result<Signature>>,
}

impl HostKernel {
    pub fn new(
        name: &str,
        convention: Convention,
        local_memory: usize,
        library: Arc<LoadedLibrary>,
        debug: Option<Arc<DebugInfo>>,
    ) -> Self {
        HostKernel {
            name: name.to_string(),
            convention,
            local_memory,
            _library: library,
            debug,
            signature: OnceLock::new(),
        }
    }

    /// The kernel's parameter types, for a launch whose arguments are its C parameters.
    fn c_signature(&self) -> Result<&Signature> {
        self.signature
            .get_or_init(|| c_call::signature(&self.name, self.debug.as_deref()))
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn convention(&self) -> Convention {
        self.convention
    }

    fn launch_host_abi(
        &self,
        function: HostKernelFn,
        config: &LaunchConfig,
        args: &KernelArgs,
    ) -> Result<()> {
        let total = config.total_groups();
        let total = usize::try_from(total).map_err(|_| {
            Error::invalid_argument(format!(
                "{total} work-groups are more than this machine can count"
            ))
        })?;
        // The header promises a 16-byte aligned buffer; one the allocator placed otherwise
        // is copied once for the whole launch.
        let realigned: Vec<Aligned16>;
        let mut buffer = args.bytes.as_ptr();
        if args.is_empty() {
            buffer = std::ptr::null();
        } else if buffer as usize % 16 != 0 {
            let mut copy = vec![Aligned16([0; 16]); args.len().div_ceil(16)];
            for (block, chunk) in copy.iter_mut().zip(args.bytes.chunks(16)) {
                block.0[..chunk.len()].copy_from_slice(chunk);
            }
            realigned = copy;
            buffer = realigned.as_ptr().cast();
        }
        let grid = Grid {
            function,
            args: ArgBuffer(buffer.cast(), args.len()),
            config,
        };

        if total == 1 {
            return grid.run_group(0);
        }
        if config.cooperative {
            return self.run_cooperative(&grid, total);
        }
        let failure: OnceLock<Error> = OnceLock::new();
        parallel_for(total, &|i| {
            if failure.get().is_some() {
                return;
            }
            if let Err(e) = grid.run_group(i) {
                let _ = failure.set(e);
            }
        })
        .map_err(|panic| self.panicked(&panic))?;
        match failure.into_inner() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Every group on its own thread at the same time (the caller runs group 0), so groups
    /// may wait for one another.
    fn run_cooperative(&self, grid: &Grid<'_>, total: usize) -> Result<()> {
        // The helpers start only once all of them exist; if one cannot be started, none
        // runs (a started group might wait forever for the missing one).
        let start: Mutex<Option<bool>> = Mutex::new(None);
        let started = Condvar::new();
        let wait_for_start = || {
            let mut go = start.lock();
            while go.is_none() {
                started.wait(&mut go);
            }
            go.unwrap_or(false)
        };
        let release = |go: bool| {
            *start.lock() = Some(go);
            started.notify_all();
        };
        std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(total - 1);
            for i in 1..total {
                let wait_for_start = &wait_for_start;
                let spawned = std::thread::Builder::new()
                    .name(format!("offload-coop-{i}"))
                    .spawn_scoped(scope, move || {
                        if wait_for_start() {
                            grid.run_group(i)
                        } else {
                            Ok(())
                        }
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        release(false);
                        return Err(Error::out_of_resources(format!(
                            "a cooperative launch of kernel '{}' could not start a thread for \
                             work-group {i}: {e}",
                            self.name
                        )));
                    }
                }
            }
            release(true);
            let mut result = grid.run_group(0);
            for h in handles {
                let r = h
                    .join()
                    .unwrap_or_else(|p| Err(self.panicked(&panic_text(&p))));
                if result.is_ok() {
                    result = r;
                }
            }
            result
        })
    }

    fn panicked(&self, message: &str) -> Error {
        Error::unknown(format!(
            "a work-group of kernel '{}' panicked: {message}",
            self.name
        ))
    }

    fn launch_llvm(&self, address: usize, args: &KernelArgs) -> Result<()> {
        let mut values: Vec<usize> = args
            .bytes
            .chunks_exact(WORD)
            .map(|word| usize::from_ne_bytes(word.try_into().unwrap_or([0; WORD])))
            .collect();
        let cif = libffi::middle::Cif::new(
            (0..values.len()).map(|_| libffi::middle::Type::pointer()),
            libffi::middle::Type::void(),
        );
        let mut value_pointers: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| (v as *mut usize).cast())
            .collect();
        let mut ignored_result = [0u64; 2];
        // SAFETY: `address` is the function's address from dlsym, kept mapped by
        // `_library`; LLVM's convention says it takes `values.len()` pointer-sized
        // arguments and returns nothing, which is what `cif` describes. Each entry of
        // `value_pointers` points to one live `usize`; the result buffer is never written
        // for a void function and is large enough for any register anyway.
        unsafe {
            let function: unsafe extern "C" fn() = std::mem::transmute(address);
            libffi::raw::ffi_call(
                cif.as_raw_ptr(),
                Some(function),
                ignored_result.as_mut_ptr().cast(),
                value_pointers.as_mut_ptr(),
            );
        }
        Ok(())
    }
}

/// A launch's argument buffer: its start and length.
#[derive(Clone, Copy)]
struct ArgBuffer(*const c_void, usize);

// SAFETY: the buffer is the launch's `KernelArgs` (or its realigned copy), which outlives
// the launch and is only read (by the kernel, through `const void *`), so sharing it
// across the threads that run the groups is sound.
unsafe impl Sync for ArgBuffer {}
// SAFETY: as above; moving the pointer to another thread only moves a borrow.
unsafe impl Send for ArgBuffer {}

/// What every group of one launch shares.
struct Grid<'a> {
    function: HostKernelFn,
    args: ArgBuffer,
    config: &'a LaunchConfig,
}

impl Grid<'_> {
    /// Runs group `index` (x fastest) on the calling thread.
    fn run_group(&self, index: usize) -> Result<()> {
        let c = self.config;
        let [nx, ny, _] = c.num_groups.map(|n| n as usize);
        let group_id = [
            (index % nx) as u32,
            ((index / nx) % ny) as u32,
            (index / (nx * ny)) as u32,
        ];
        let mut context = HostKernelContext {
            dimensions: c.dimensions,
            group_id,
            num_groups: c.num_groups,
            group_size: c.group_size,
            dyn_shared: std::ptr::null_mut(),
            dyn_shared_size: c.dyn_shared_memory,
        };
        let call = |context: &HostKernelContext| {
            // SAFETY: `function` is a kernel of the host ABI v2 (its marker says so),
            // kept loaded by the kernel's library; `context` is valid for the call and its
            // `dyn_shared` points to `dyn_shared_size` writable bytes private to this
            // group; `args` is the launch's 16-byte aligned argument buffer of the size
            // the marker asks for, alive for the whole launch.
            unsafe { (self.function)(context, self.args.0, self.args.1) }
        };
        if c.dyn_shared_memory == 0 {
            call(&context);
            return Ok(());
        }
        with_scratch(c.dyn_shared_memory, |scratch| {
            context.dyn_shared = scratch.cast();
            call(&context);
        })
    }
}

/// A thread's dynamic shared memory, kept between groups and launches.
struct Scratch {
    pointer: *mut u8,
    layout: Layout,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: `pointer` was allocated with `layout` by `with_scratch` and is freed once.
        unsafe { std::alloc::dealloc(self.pointer, self.layout) };
    }
}

thread_local! {
    static SCRATCH: Cell<Option<Scratch>> = const { Cell::new(None) };
}

/// Runs `body` with at least `size` bytes (> 0) of 64-byte aligned memory private to this
/// thread for the duration of the call. The buffer is taken out of the thread's slot
/// while in use, so a nested launch on the same thread gets its own.
fn with_scratch(size: usize, body: impl FnOnce(*mut u8)) -> Result<()> {
    // `try_with`: a launch from an exit handler, after thread-local destructors ran,
    // allocates afresh and frees on return.
    let kept = SCRATCH.try_with(|slot| slot.take()).ok().flatten();
    let scratch = match kept {
        Some(s) if s.layout.size() >= size => s,
        _ => {
            let layout = Layout::from_size_align(size, SHARED_ALIGN).map_err(|_| {
                Error::invalid_argument(format!("{size} bytes of shared memory is too large"))
            })?;
            // SAFETY: `layout` has a non-zero size (callers pass size > 0).
            let pointer = unsafe { std::alloc::alloc(layout) };
            if pointer.is_null() {
                return Err(Error::out_of_resources(format!(
                    "no memory for {size} bytes of dynamic shared memory"
                )));
            }
            Scratch { pointer, layout }
        }
    };
    body(scratch.pointer);
    // Kept for the next group, or freed here when the slot is gone.
    let mut scratch = Some(scratch);
    let _ = SCRATCH.try_with(|slot| slot.set(scratch.take()));
    Ok(())
}

impl HostKernel {
    /// Runs the whole grid from the calling thread and returns when every group is done
    /// (a launch checked already).
    pub fn run(&self, config: &LaunchConfig, args: &KernelArgs) -> Result<()> {
        match self.convention {
            Convention::HostAbi { function, .. } => self.launch_host_abi(function, config, args),
            Convention::Llvm { address } if args.c_parameters => {
                c_call::call(address, self.c_signature()?, &args.bytes)
            }
            Convention::Llvm { address } => self.launch_llvm(address, args),
        }
    }
}

impl Kernel for HostKernel {
    fn name(&self) -> &str {
        &self.name
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// Host ABI kernels take the size their marker gives; LLVM-convention kernels a
    /// whole number of pointer-sized slots, or, called with their C parameters, those
    /// parameters (whose types must be known).
    fn check_args(&self, args: &KernelArgs) -> Result<()> {
        let size = args.len();
        if args.c_parameters && matches!(self.convention, Convention::Llvm { .. }) {
            let signature = self.c_signature()?;
            if !signature.fits(size) {
                return Err(Error::invalid_argument(format!(
                    "kernel '{}' takes {} bytes of parameters, but ArgumentsSize is {size}",
                    self.name, signature.size
                )));
            }
            return Ok(());
        }
        match self.convention {
            Convention::HostAbi {
                args_size: Some(expected),
                ..
            } if expected != size => Err(Error::invalid_argument(format!(
                "kernel '{}' takes a {expected}-byte argument buffer (the size its \
                 OL_HOST_KERNEL marker gives), but ArgumentsSize is {size}",
                self.name
            ))),
            Convention::Llvm { .. } if size % WORD != 0 => Err(Error::invalid_argument(format!(
                "kernel '{}' has no OL_HOST_KERNEL marker, so it follows LLVM's host plugin \
                 convention: one pointer-sized value per argument, so ArgumentsSize must be a \
                 multiple of {WORD}, not {size}. Pass pointers, or define the kernel with \
                 OL_HOST_KERNEL from offload/host_kernel.h",
                self.name
            ))),
            _ => Ok(()),
        }
    }

    /// A work-group of at most `MAX_GROUP_SIZE` items, its dynamic shared memory within
    /// local memory (the L2 cache's size).
    fn limits(&self) -> LaunchLimits {
        LaunchLimits {
            max_group_items: Some(u64::from(MAX_GROUP_SIZE)),
            local_memory: Some(self.local_memory as u64),
        }
    }

    /// On the calling thread (and the pool's workers).
    fn run_direct(&self, config: &LaunchConfig, args: &KernelArgs) -> Option<Result<()>> {
        Some(self.run(config, args))
    }

    /// 256 work-items for kernels of the host ABI, fewer when that much shared memory
    /// per item would not fit in local memory; 1 for LLVM-convention kernels, which run
    /// the launch as one call.
    fn optimal_group_size(&self, shared_memory_per_item: usize) -> Result<usize> {
        match self.convention {
            Convention::Llvm { .. } => Ok(1),
            Convention::HostAbi { .. } => {
                let fits = self
                    .local_memory
                    .checked_div(shared_memory_per_item)
                    .unwrap_or(usize::MAX);
                if fits == 0 {
                    return Err(Error::out_of_resources(format!(
                        "{shared_memory_per_item} bytes of shared memory per work-item is more \
                         than the host device's {} bytes of local memory",
                        self.local_memory
                    )));
                }
                Ok(fits.min(PREFERRED_GROUP_SIZE))
            }
        }
    }

    /// One group per worker thread: a cooperative launch runs each group on its own
    /// thread, and the host runs as many at once as it has cores.
    fn max_cooperative_groups(&self, config: &LaunchConfig) -> Result<u32> {
        if matches!(self.convention, Convention::HostAbi { .. })
            && config.dyn_shared_memory > self.local_memory
        {
            return Ok(0);
        }
        Ok(WorkerPool::global().threads().min(u32::MAX as usize) as u32)
    }
}
