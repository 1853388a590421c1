//! Safe wrappers of the driver calls that load and run code: modules and their
//! functions, launches, occupancy, streams and events (see `calls.rs` for the rules on
//! addresses and contexts).

use super::calls::log_text;
use super::driver::Driver;
use super::ffi::*;
use super::launch::extra_params;
use crate::plugin::foundation::error::{Error, Result};
use std::cell::Cell;
use std::ffi::{c_int, c_uint, c_void, CStr};
use std::ptr::null_mut;

/// The JIT's messages from `cuModuleLoadDataEx`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JitLog {
    pub info: String,
    pub error: String,
}

/// Bytes kept of each JIT log; a longer log is cut by the driver.
const JIT_LOG_BYTES: usize = 16 << 10;

/// Parameters no launch of any kernel on NVIDIA hardware exceeds (4 KiB of parameter
/// space before Volta, 32 KiB from CUDA 12.1): a bound on asking for parameter info.
const MAX_KERNEL_PARAMS: usize = 32 << 10;

thread_local! {
    /// Dynamic shared memory per thread for the occupancy callback below, which the
    /// driver calls on this thread during `cuOccupancyMaxPotentialBlockSize` (the C
    /// callback takes no user data).
    static SHARED_PER_THREAD: Cell<usize> = const { Cell::new(0) };
}

extern "C" fn shared_for_block(block_size: c_int) -> usize {
    let per_thread = SHARED_PER_THREAD.try_with(Cell::get).unwrap_or(0);
    per_thread.saturating_mul(block_size.max(0) as usize)
}

/// Whether `image` must get a NUL appended before the driver reads it: PTX is text the
/// driver reads up to its terminating NUL; ELF cubins and fatbins say their own size.
pub fn needs_terminator(image: &[u8]) -> bool {
    const ELF_MAGIC: &[u8] = b"\x7fELF";
    const FATBIN_MAGIC: [u8; 4] = 0xBA55_ED50u32.to_le_bytes();
    !(image.starts_with(ELF_MAGIC) || image.starts_with(&FATBIN_MAGIC) || image.last() == Some(&0))
}

/// How a launch spreads, as the driver takes it: blocks in the grid and threads in a
/// block (`[x, y, z]` each), and bytes of dynamic shared memory per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
}

impl Driver {
    // ---- modules and functions ---------------------------------------------------------

    /// Loads a PTX, cubin or fatbin image into the current context; `with_logs` asks the
    /// JIT for its info and error logs (two 16 KiB buffers: zeroing them cost more than
    /// the rest of a small program's load, so they are asked for only when wanted).
    pub fn module_load(&self, image: &[u8], with_logs: bool) -> (Result<CuModule>, JitLog) {
        let terminated;
        let bytes = if needs_terminator(image) {
            terminated = [image, &[0]].concat();
            &terminated[..]
        } else {
            image
        };
        // Without logs the buffers are empty (no allocation) and no option is passed.
        let log_bytes = if with_logs { JIT_LOG_BYTES } else { 0 };
        let mut info = vec![0u8; log_bytes];
        let mut error = vec![0u8; log_bytes];
        let mut options = [
            jit_option::INFO_LOG_BUFFER,
            jit_option::INFO_LOG_BUFFER_SIZE_BYTES,
            jit_option::ERROR_LOG_BUFFER,
            jit_option::ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // Sizes travel in the pointer-sized value slots, as the JIT option ABI says.
        let mut values: [*mut c_void; 4] = [
            info.as_mut_ptr() as *mut c_void,
            (JIT_LOG_BYTES - 1) as *mut c_void,
            error.as_mut_ptr() as *mut c_void,
            (JIT_LOG_BYTES - 1) as *mut c_void,
        ];
        let option_count = if with_logs { options.len() } else { 0 };
        let mut module = CuModule::NULL;
        // SAFETY: `bytes` is a whole image (text NUL-terminated); with logs, the option
        // arrays have 4 entries each and the log buffers hold the sizes given (one byte
        // to spare for the NUL); without, the driver reads no option. Everything
        // outlives the call.
        let r = unsafe {
            (self.functions().module_load_data_ex)(
                &mut module,
                bytes.as_ptr() as *const c_void,
                option_count as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        let log = JitLog {
            info: log_text(&info),
            error: log_text(&error),
        };
        (self.check("cuModuleLoadDataEx", r).map(|()| module), log)
    }

    pub fn module_unload(&self, module: CuModule) -> Result<()> {
        // SAFETY: a module handle, which the driver checks.
        let r = unsafe { (self.functions().module_unload)(module) };
        self.check("cuModuleUnload", r)
    }

    /// The named kernel, or `None` if the module has none of that name.
    pub fn module_function(&self, module: CuModule, name: &CStr) -> Result<Option<CuFunction>> {
        let mut function = CuFunction::NULL;
        // SAFETY: `name` is NUL-terminated; writes one handle to a valid location.
        let r =
            unsafe { (self.functions().module_get_function)(&mut function, module, name.as_ptr()) };
        if r == result::NOT_FOUND {
            return Ok(None);
        }
        self.check("cuModuleGetFunction", r)
            .map(|()| Some(function))
    }

    /// The named global variable's address and size, or `None` if there is none.
    pub fn module_global(
        &self,
        module: CuModule,
        name: &CStr,
    ) -> Result<Option<(CuDevicePtr, usize)>> {
        let mut address: CuDevicePtr = 0;
        let mut size = 0usize;
        // SAFETY: `name` is NUL-terminated; writes an address and a size to valid
        // locations.
        let r = unsafe {
            (self.functions().module_get_global)(&mut address, &mut size, module, name.as_ptr())
        };
        if r == result::NOT_FOUND {
            return Ok(None);
        }
        self.check("cuModuleGetGlobal_v2", r)
            .map(|()| Some((address, size)))
    }

    pub fn function_attribute(&self, function: CuFunction, attribute: c_int) -> Result<i32> {
        let mut value: c_int = 0;
        // SAFETY: writes one int to a valid location.
        let r = unsafe { (self.functions().func_get_attribute)(&mut value, attribute, function) };
        self.check("cuFuncGetAttribute", r).map(|()| value)
    }

    pub fn set_function_attribute(
        &self,
        function: CuFunction,
        attribute: c_int,
        value: i32,
    ) -> Result<()> {
        // SAFETY: a function handle and two ints, which the driver checks.
        let r = unsafe { (self.functions().func_set_attribute)(function, attribute, value) };
        self.check("cuFuncSetAttribute", r)
    }

    /// The (offset, size) of each of the kernel's parameters, or `None` where the driver
    /// cannot tell (before CUDA 12.4).
    pub fn function_params(&self, function: CuFunction) -> Option<Result<Vec<(usize, usize)>>> {
        let get = self.functions().func_get_param_info?;
        let mut params = Vec::new();
        while params.len() < MAX_KERNEL_PARAMS {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: writes an offset and a size to valid locations.
            let r = unsafe { get(function, params.len(), &mut offset, &mut size) };
            if r == result::INVALID_VALUE {
                break; // past the last parameter
            }
            if let Err(e) = self.check("cuFuncGetParamInfo", r) {
                return Some(Err(e));
            }
            params.push((offset, size));
        }
        Some(Ok(params))
    }

    // ---- launches and occupancy --------------------------------------------------------

    /// Launches `function` over `shape` with `args` as its parameter block (see
    /// `launch.rs`); `cooperative`: with every block resident at once. A cooperative
    /// launch with arguments needs `cuLaunchKernelEx` (CUDA 12.0): the older
    /// `cuLaunchCooperativeKernel` takes only per-parameter pointers, which a packed
    /// buffer cannot be split into without the kernel's parameter layout.
    pub fn launch(
        &self,
        function: CuFunction,
        shape: &LaunchShape,
        stream: CuStream,
        args: &[u8],
        cooperative: bool,
    ) -> Result<()> {
        let mut size = args.len();
        let mut extra = extra_params(args.as_ptr(), &mut size);
        let extra_ptr = if args.is_empty() {
            null_mut()
        } else {
            extra.as_mut_ptr()
        };
        let LaunchShape {
            grid,
            block,
            shared_bytes,
        } = *shape;
        let functions = self.functions();
        let (call, r) = if !cooperative {
            // SAFETY: `extra` (when given) names `args` and `size`, both alive for the
            // call; the driver copies the block before returning. No kernelParams.
            let r = unsafe {
                (functions.launch_kernel)(
                    function,
                    grid[0],
                    grid[1],
                    grid[2],
                    block[0],
                    block[1],
                    block[2],
                    shared_bytes,
                    stream,
                    null_mut(),
                    extra_ptr,
                )
            };
            ("cuLaunchKernel", r)
        } else if let Some(launch_ex) = functions.launch_kernel_ex {
            let mut attribute = CuLaunchAttribute::cooperative();
            let config = CuLaunchConfig {
                grid_dim: grid,
                block_dim: block,
                shared_mem_bytes: shared_bytes,
                stream,
                attrs: &mut attribute,
                num_attrs: 1,
            };
            // SAFETY: `config` points to one attribute; `extra` as for cuLaunchKernel;
            // all alive for the call.
            let r = unsafe { launch_ex(&config, function, null_mut(), extra_ptr) };
            ("cuLaunchKernelEx", r)
        } else if args.is_empty() {
            // SAFETY: no parameters (NULL kernelParams) for a kernel launched without any.
            let r = unsafe {
                (functions.launch_cooperative_kernel)(
                    function,
                    grid[0],
                    grid[1],
                    grid[2],
                    block[0],
                    block[1],
                    block[2],
                    shared_bytes,
                    stream,
                    null_mut(),
                )
            };
            ("cuLaunchCooperativeKernel", r)
        } else {
            return Err(Error::unsupported(format!(
                "a cooperative launch with arguments needs cuLaunchKernelEx (CUDA 12.0); this \
                 driver is version {}",
                super::facts::driver_version_string(self.version())
            )));
        };
        self.check(call, r)
    }

    /// `(min_grid, block)`: the block size with the best occupancy for `function` when
    /// each thread needs `shared_per_thread` bytes of dynamic shared memory, and the
    /// fewest blocks that fill the device with it. `block_limit` 0 means none.
    pub fn occupancy_max_potential_block_size(
        &self,
        function: CuFunction,
        shared_per_thread: usize,
        block_limit: i32,
    ) -> Result<(i32, i32)> {
        let (mut min_grid, mut block): (c_int, c_int) = (0, 0);
        let callback = if shared_per_thread == 0 {
            None
        } else {
            SHARED_PER_THREAD.with(|c| c.set(shared_per_thread));
            Some(shared_for_block as CuOccupancyB2DSize)
        };
        // SAFETY: writes two ints to valid locations; the callback (if any) only reads a
        // thread-local, never unwinds, and is called during this call on this thread.
        let r = unsafe {
            (self.functions().occupancy_max_potential_block_size)(
                &mut min_grid,
                &mut block,
                function,
                callback,
                0,
                block_limit,
            )
        };
        self.check("cuOccupancyMaxPotentialBlockSize", r)
            .map(|()| (min_grid, block))
    }

    /// How many blocks of `block_size` threads with `dynamic_shared` bytes each can be
    /// resident on one multiprocessor.
    pub fn occupancy_max_active_blocks(
        &self,
        function: CuFunction,
        block_size: i32,
        dynamic_shared: usize,
    ) -> Result<i32> {
        let mut blocks: c_int = 0;
        // SAFETY: writes one int to a valid location.
        let r = unsafe {
            (self.functions().occupancy_max_active_blocks)(
                &mut blocks,
                function,
                block_size,
                dynamic_shared,
            )
        };
        self.check("cuOccupancyMaxActiveBlocksPerMultiprocessor", r)
            .map(|()| blocks)
    }

    // ---- streams and events ------------------------------------------------------------

    /// A stream of the current context (`STREAM_DEFAULT` / `STREAM_NON_BLOCKING`).
    pub fn stream_create(&self, flags: c_uint) -> Result<CuStream> {
        let mut stream = CuStream::NULL;
        // SAFETY: writes one handle to a valid location.
        let r = unsafe { (self.functions().stream_create)(&mut stream, flags) };
        self.check("cuStreamCreate", r).map(|()| stream)
    }

    pub fn stream_destroy(&self, stream: CuStream) -> Result<()> {
        // SAFETY: a stream handle, which the driver checks.
        let r = unsafe { (self.functions().stream_destroy)(stream) };
        self.check("cuStreamDestroy_v2", r)
    }

    pub fn stream_synchronize(&self, stream: CuStream) -> Result<()> {
        // SAFETY: a stream handle (NULL: the legacy default stream).
        let r = unsafe { (self.functions().stream_synchronize)(stream) };
        self.check("cuStreamSynchronize", r)
    }

    /// True when all the stream's work is done.
    pub fn stream_query(&self, stream: CuStream) -> Result<bool> {
        // SAFETY: a stream handle (NULL: the legacy default stream).
        let r = unsafe { (self.functions().stream_query)(stream) };
        self.check_done("cuStreamQuery", r)
    }

    /// Later work of `stream` waits for `event`.
    pub fn stream_wait_event(&self, stream: CuStream, event: CuEvent) -> Result<()> {
        // SAFETY: handles the driver checks; flags 0 (CU_EVENT_WAIT_DEFAULT).
        let r = unsafe { (self.functions().stream_wait_event)(stream, event, 0) };
        self.check("cuStreamWaitEvent", r)
    }

    /// Later work of `stream` waits until the 32-bit word at `addr` (memory the device
    /// can read: pinned host memory here) is at least `value`; `None` if the driver
    /// lacks the call.
    pub fn stream_wait_value32(
        &self,
        stream: CuStream,
        addr: usize,
        value: u32,
    ) -> Option<Result<()>> {
        let wait = self.functions().stream_wait_value32?;
        // SAFETY: a stream handle and an address the driver checks; flags 0 is
        // CU_STREAM_WAIT_VALUE_GEQ.
        let r = unsafe { wait(stream, addr as CuDevicePtr, value, 0) };
        Some(self.check("cuStreamWaitValue32_v2", r))
    }

    /// Runs `function(data)` on a driver thread once the stream's earlier work is done.
    ///
    /// # Safety
    /// `function` must not call CUDA and must be safe to call with `data` from another
    /// thread, once; `data` must stay valid until then (typically a `Box::into_raw` that
    /// `function` takes back). If this returns an error, `function` is never called.
    pub unsafe fn launch_host_func(
        &self,
        stream: CuStream,
        function: CuHostFn,
        data: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller upholds the contract above.
        let r = unsafe { (self.functions().launch_host_func)(stream, function, data) };
        self.check("cuLaunchHostFunc", r)
    }

    /// An event of the current context (`EVENT_*` flags).
    pub fn event_create(&self, flags: c_uint) -> Result<CuEvent> {
        let mut event = CuEvent::NULL;
        // SAFETY: writes one handle to a valid location.
        let r = unsafe { (self.functions().event_create)(&mut event, flags) };
        self.check("cuEventCreate", r).map(|()| event)
    }

    pub fn event_record(&self, event: CuEvent, stream: CuStream) -> Result<()> {
        // SAFETY: handles the driver checks.
        let r = unsafe { (self.functions().event_record)(event, stream) };
        self.check("cuEventRecord", r)
    }

    pub fn event_synchronize(&self, event: CuEvent) -> Result<()> {
        // SAFETY: a handle the driver checks.
        let r = unsafe { (self.functions().event_synchronize)(event) };
        self.check("cuEventSynchronize", r)
    }

    /// True when the event's work is done (or it was never recorded).
    pub fn event_query(&self, event: CuEvent) -> Result<bool> {
        // SAFETY: a handle the driver checks.
        let r = unsafe { (self.functions().event_query)(event) };
        self.check_done("cuEventQuery", r)
    }

    /// Milliseconds between two completed events (about 0.5 us resolution).
    pub fn event_elapsed_ms(&self, start: CuEvent, end: CuEvent) -> Result<f32> {
        let mut ms = 0f32;
        // SAFETY: writes one float to a valid location.
        let r = unsafe { (self.functions().event_elapsed_time)(&mut ms, start, end) };
        self.check("cuEventElapsedTime", r).map(|()| ms)
    }

    pub fn event_destroy(&self, event: CuEvent) -> Result<()> {
        // SAFETY: a handle the driver checks.
        let r = unsafe { (self.functions().event_destroy)(event) };
        self.check("cuEventDestroy_v2", r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_images_get_a_terminator() {
        assert!(needs_terminator(b".version 8.0\n.target sm_80\n"));
        assert!(!needs_terminator(b".version 8.0\n.target sm_80\n\0"));
        assert!(!needs_terminator(b"\x7fELF\x02\x01\x01\x33"));
        assert!(!needs_terminator(&[0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0]));
        assert!(needs_terminator(b""));
    }

    #[test]
    fn the_occupancy_callback_scales_with_the_block() {
        SHARED_PER_THREAD.with(|c| c.set(12));
        assert_eq!(shared_for_block(256), 3072);
        assert_eq!(shared_for_block(-1), 0);
        SHARED_PER_THREAD.with(|c| c.set(usize::MAX));
        assert_eq!(shared_for_block(2), usize::MAX);
    }
}
