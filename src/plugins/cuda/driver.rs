//! The CUDA driver library (`libcuda.so.1`), opened at run time.
//!
//! Nothing of CUDA is needed to build this crate: the library is opened with libloading
//! when a program first asks for CUDA devices, every entry point this backend calls is
//! resolved once into a table of typed function pointers, and `cuInit` is called. A
//! missing library, a missing entry point or a failing `cuInit` (no GPU, no kernel
//! module) is a reason, not an error: the plugin reports zero devices and traces why.
//!
//! Entry points are resolved under the versioned names that `cuda.h` maps the API names
//! to (`cuMemAlloc` is `cuMemAlloc_v2`, and so on), with the default-stream semantics of
//! the legacy NULL stream (not the `_ptds`/`_ptsz` per-thread forms). The safe wrappers
//! that call them are in `calls.rs` and `calls_exec.rs`.

use super::error::driver_error;
use super::ffi::*;
use crate::plugin::foundation::error::Error;
use crate::plugin::foundation::vendor_library::{LibraryName, VendorLibrary};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The driver library: `OFFLOAD_CUDA_LIBRARY` names another file (a path or a name the
/// dynamic loader searches for) than `libcuda.so.1`.
pub const LIBRARY: LibraryName = LibraryName {
    default: "libcuda.so.1",
    env: "OFFLOAD_CUDA_LIBRARY",
};

/// Declares the table of entry points: each field, the symbols tried in order, and the
/// C signature `cuda.h` gives it (every one returns `CUresult`).
macro_rules! driver_functions {
    (
        required { $($field:ident = [$($sym:literal),+] fn($($arg:ty),* $(,)?);)* }
        optional { $($ofield:ident = [$($osym:literal),+] fn($($oarg:ty),* $(,)?);)* }
    ) => {
        /// The driver's entry points, resolved once. The `optional` ones are newer than
        /// the oldest driver this backend runs on, and `None` where the driver lacks them.
        #[allow(clippy::type_complexity)]
        pub struct Functions {
            $(pub $field: unsafe extern "C" fn($($arg),*) -> CuResult,)*
            $(pub $ofield: Option<unsafe extern "C" fn($($oarg),*) -> CuResult>,)*
        }

        impl Functions {
            /// The symbols each required entry point is looked up as, in order.
            pub const REQUIRED_SYMBOLS: &'static [&'static [&'static str]] =
                &[$(&[$($sym),+],)*];

            fn resolve(library: &VendorLibrary) -> std::result::Result<Functions, String> {
                Ok(Functions {
                    $($field: {
                        // SAFETY: the pointer type is the signature cuda.h declares for
                        // these symbols (the versioned names keep the API's signature).
                        unsafe { library.require(&[$($sym),+], NOT_THE_DRIVER) }?
                    },)*
                    $($ofield: {
                        // SAFETY: as above.
                        unsafe { library.find(&[$($osym),+]) }
                    },)*
                })
            }
        }
    };
}

driver_functions! {
    required {
        init = ["cuInit"] fn(c_uint);
        driver_get_version = ["cuDriverGetVersion"] fn(*mut c_int);
        get_error_name = ["cuGetErrorName"] fn(CuResult, *mut *const c_char);
        get_error_string = ["cuGetErrorString"] fn(CuResult, *mut *const c_char);

        device_get_count = ["cuDeviceGetCount"] fn(*mut c_int);
        device_get = ["cuDeviceGet"] fn(*mut CuDevice, c_int);
        device_get_name = ["cuDeviceGetName"] fn(*mut c_char, c_int, CuDevice);
        device_get_attribute = ["cuDeviceGetAttribute"] fn(*mut c_int, c_int, CuDevice);
        device_total_mem = ["cuDeviceTotalMem_v2"] fn(*mut usize, CuDevice);
        // _v2 (CUDA 11.4) tells MIG instances apart; the first form is the fallback.
        device_get_uuid = ["cuDeviceGetUuid_v2", "cuDeviceGetUuid"] fn(*mut CuUuid, CuDevice);
        device_can_access_peer = ["cuDeviceCanAccessPeer"] fn(*mut c_int, CuDevice, CuDevice);

        primary_ctx_retain = ["cuDevicePrimaryCtxRetain"] fn(*mut CuContext, CuDevice);
        primary_ctx_release = ["cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"]
            fn(CuDevice);
        ctx_set_current = ["cuCtxSetCurrent"] fn(CuContext);
        ctx_get_current = ["cuCtxGetCurrent"] fn(*mut CuContext);
        ctx_synchronize = ["cuCtxSynchronize"] fn();
        ctx_enable_peer_access = ["cuCtxEnablePeerAccess"] fn(CuContext, c_uint);

        mem_alloc = ["cuMemAlloc_v2"] fn(*mut CuDevicePtr, usize);
        mem_free = ["cuMemFree_v2"] fn(CuDevicePtr);
        mem_alloc_host = ["cuMemAllocHost_v2"] fn(*mut *mut c_void, usize);
        mem_free_host = ["cuMemFreeHost"] fn(*mut c_void);
        mem_alloc_managed = ["cuMemAllocManaged"] fn(*mut CuDevicePtr, usize, c_uint);
        mem_host_register = ["cuMemHostRegister_v2"] fn(*mut c_void, usize, c_uint);
        mem_host_unregister = ["cuMemHostUnregister"] fn(*mut c_void);
        pointer_get_attribute = ["cuPointerGetAttribute"] fn(*mut c_void, c_int, CuDevicePtr);

        memcpy = ["cuMemcpy"] fn(CuDevicePtr, CuDevicePtr, usize);
        memcpy_async = ["cuMemcpyAsync"] fn(CuDevicePtr, CuDevicePtr, usize, CuStream);
        memcpy_htod = ["cuMemcpyHtoD_v2"] fn(CuDevicePtr, *const c_void, usize);
        memcpy_dtoh = ["cuMemcpyDtoH_v2"] fn(*mut c_void, CuDevicePtr, usize);
        memcpy_dtod = ["cuMemcpyDtoD_v2"] fn(CuDevicePtr, CuDevicePtr, usize);
        memcpy_htod_async = ["cuMemcpyHtoDAsync_v2"]
            fn(CuDevicePtr, *const c_void, usize, CuStream);
        memcpy_dtoh_async = ["cuMemcpyDtoHAsync_v2"]
            fn(*mut c_void, CuDevicePtr, usize, CuStream);
        memcpy_dtod_async = ["cuMemcpyDtoDAsync_v2"]
            fn(CuDevicePtr, CuDevicePtr, usize, CuStream);
        memcpy_peer_async = ["cuMemcpyPeerAsync"]
            fn(CuDevicePtr, CuContext, CuDevicePtr, CuContext, usize, CuStream);

        memset_d8 = ["cuMemsetD8_v2"] fn(CuDevicePtr, u8, usize);
        memset_d16 = ["cuMemsetD16_v2"] fn(CuDevicePtr, u16, usize);
        memset_d32 = ["cuMemsetD32_v2"] fn(CuDevicePtr, c_uint, usize);
        memset_d8_async = ["cuMemsetD8Async"] fn(CuDevicePtr, u8, usize, CuStream);
        memset_d16_async = ["cuMemsetD16Async"] fn(CuDevicePtr, u16, usize, CuStream);
        memset_d32_async = ["cuMemsetD32Async"] fn(CuDevicePtr, c_uint, usize, CuStream);

        module_load_data_ex = ["cuModuleLoadDataEx"]
            fn(*mut CuModule, *const c_void, c_uint, *mut c_int, *mut *mut c_void);
        module_unload = ["cuModuleUnload"] fn(CuModule);
        module_get_function = ["cuModuleGetFunction"] fn(*mut CuFunction, CuModule, *const c_char);
        module_get_global = ["cuModuleGetGlobal_v2"]
            fn(*mut CuDevicePtr, *mut usize, CuModule, *const c_char);
        func_get_attribute = ["cuFuncGetAttribute"] fn(*mut c_int, c_int, CuFunction);
        func_set_attribute = ["cuFuncSetAttribute"] fn(CuFunction, c_int, c_int);

        launch_kernel = ["cuLaunchKernel"] fn(
            CuFunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CuStream,
            *mut *mut c_void, *mut *mut c_void);
        launch_cooperative_kernel = ["cuLaunchCooperativeKernel"] fn(
            CuFunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CuStream,
            *mut *mut c_void);
        occupancy_max_potential_block_size = ["cuOccupancyMaxPotentialBlockSize"]
            fn(*mut c_int, *mut c_int, CuFunction, Option<CuOccupancyB2DSize>, usize, c_int);
        occupancy_max_active_blocks = ["cuOccupancyMaxActiveBlocksPerMultiprocessor"]
            fn(*mut c_int, CuFunction, c_int, usize);

        stream_create = ["cuStreamCreate"] fn(*mut CuStream, c_uint);
        stream_destroy = ["cuStreamDestroy_v2"] fn(CuStream);
        stream_synchronize = ["cuStreamSynchronize"] fn(CuStream);
        stream_query = ["cuStreamQuery"] fn(CuStream);
        stream_wait_event = ["cuStreamWaitEvent"] fn(CuStream, CuEvent, c_uint);
        launch_host_func = ["cuLaunchHostFunc"] fn(CuStream, CuHostFn, *mut c_void);

        event_create = ["cuEventCreate"] fn(*mut CuEvent, c_uint);
        event_record = ["cuEventRecord"] fn(CuEvent, CuStream);
        event_synchronize = ["cuEventSynchronize"] fn(CuEvent);
        event_query = ["cuEventQuery"] fn(CuEvent);
        event_elapsed_time = ["cuEventElapsedTime"] fn(*mut f32, CuEvent, CuEvent);
        event_destroy = ["cuEventDestroy_v2"] fn(CuEvent);
    }
    optional {
        // CUDA 12.0: launches with attributes (cooperative) that still take `extra`.
        launch_kernel_ex = ["cuLaunchKernelEx"]
            fn(*const CuLaunchConfig, CuFunction, *mut *mut c_void, *mut *mut c_void);
        // CUDA 12.4: the offset and size of each kernel parameter.
        func_get_param_info = ["cuFuncGetParamInfo"] fn(CuFunction, usize, *mut usize, *mut usize);
        // CUDA 11.7: a stream waits for a 32-bit word (waits on other backends' events).
        stream_wait_value32 = ["cuStreamWaitValue32_v2"]
            fn(CuStream, CuDevicePtr, c_uint, c_uint);
        // How a thread waiting for the GPU waits (OFFLOAD_CUDA_SCHEDULE).
        primary_ctx_set_flags = ["cuDevicePrimaryCtxSetFlags_v2", "cuDevicePrimaryCtxSetFlags"]
            fn(CuDevice, c_uint);
        // A context's limits (device-side malloc's heap, the threads' stack).
        ctx_set_limit = ["cuCtxSetLimit"] fn(c_int, usize);
        // CUDA 10.2: virtual memory management, memory at an address (olMemAllocAt).
        mem_get_allocation_granularity = ["cuMemGetAllocationGranularity"]
            fn(*mut usize, *const CuMemAllocationProp, c_int);
        mem_address_reserve = ["cuMemAddressReserve"]
            fn(*mut CuDevicePtr, usize, usize, CuDevicePtr, u64);
        mem_address_free = ["cuMemAddressFree"] fn(CuDevicePtr, usize);
        mem_create = ["cuMemCreate"] fn(*mut CuMemHandle, usize, *const CuMemAllocationProp, u64);
        mem_release = ["cuMemRelease"] fn(CuMemHandle);
        mem_map = ["cuMemMap"] fn(CuDevicePtr, usize, usize, CuMemHandle, u64);
        mem_unmap = ["cuMemUnmap"] fn(CuDevicePtr, usize);
        mem_set_access = ["cuMemSetAccess"] fn(CuDevicePtr, usize, *const CuMemAccessDesc, usize);
    }
}

/// What a library that lacks a required entry point is.
const NOT_THE_DRIVER: &str = "a driver older than this backend needs, or not NVIDIA's";

/// The opened, initialised driver. Devices, programs and streams hold it in an `Arc`,
/// so the library stays loaded while anything made from it lives.
pub struct Driver {
    functions: Functions,
    /// `cuDriverGetVersion`: 1000 * major + 10 * minor (12080 is CUDA 12.8).
    version: i32,
    /// Never closed: the table points into it, and the driver does not support being
    /// unloaded from a process that initialised it (its threads and callbacks stay).
    library: VendorLibrary,
}

impl Driver {
    /// Opens the driver at `path`, resolves its entry points and calls `cuInit(0)`. The
    /// error is the reason, as a sentence, why there is no CUDA here.
    pub fn open(path: &Path) -> std::result::Result<Driver, String> {
        // SAFETY: opening the NVIDIA driver runs its initialisers, which have no
        // preconditions; a library that is not the driver is refused below when it does
        // not export the driver's entry points.
        let library = unsafe { VendorLibrary::open(path) }?;
        let functions = Functions::resolve(&library)?;
        let mut driver = Driver {
            functions,
            version: 0,
            library,
        };
        // SAFETY: cuInit takes a flags word (0 is the only value defined).
        let r = unsafe { (driver.functions.init)(0) };
        if r != result::SUCCESS {
            return Err(format!(
                "{} is loaded but {}",
                path.display(),
                driver.error("cuInit(0)", r).details
            ));
        }
        let mut version: c_int = 0;
        // SAFETY: writes one int to a valid location.
        let r = unsafe { (driver.functions.driver_get_version)(&mut version) };
        if r != result::SUCCESS {
            return Err(driver.error("cuDriverGetVersion", r).details.clone());
        }
        driver.version = version;
        Ok(driver)
    }

    /// The driver of this process: `OFFLOAD_CUDA_LIBRARY` or `libcuda.so.1`, opened and
    /// initialised the first time it is asked for. The error is why there is none.
    pub fn global() -> std::result::Result<Arc<Driver>, String> {
        static GLOBAL: OnceLock<std::result::Result<Arc<Driver>, String>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Driver::open(&LIBRARY.path()).map(Arc::new))
            .clone()
    }

    /// The entry points, for callers that need one no wrapper in `calls*.rs` covers.
    /// Calling them is `unsafe`: the caller upholds what the CUDA documentation asks.
    pub fn functions(&self) -> &Functions {
        &self.functions
    }

    /// The library this driver was opened from.
    pub fn path(&self) -> &Path {
        self.library.path()
    }

    /// `cuDriverGetVersion`'s number (12080 for CUDA 12.8).
    pub fn version(&self) -> i32 {
        self.version
    }

    /// `Ok` for `CUDA_SUCCESS`, otherwise the error naming `call`.
    #[inline]
    pub fn check(&self, call: &str, r: CuResult) -> crate::plugin::foundation::error::Result<()> {
        if r == result::SUCCESS {
            Ok(())
        } else {
            Err(self.error(call, r))
        }
    }

    /// A query's answer: `NOT_READY` is "not yet" (false), success "done" (true), any
    /// other result an error.
    pub fn check_done(
        &self,
        call: &str,
        r: CuResult,
    ) -> crate::plugin::foundation::error::Result<bool> {
        if r == result::NOT_READY {
            return Ok(false);
        }
        self.check(call, r).map(|()| true)
    }

    /// The error for a failed call, with the driver's name and description of `r`.
    pub fn error(&self, call: &str, r: CuResult) -> Error {
        driver_error(call, r, self.error_name(r), self.error_string(r))
    }

    /// `cuGetErrorName`: "CUDA_ERROR_OUT_OF_MEMORY"; `None` for a code it does not know.
    pub fn error_name(&self, r: CuResult) -> Option<&'static str> {
        self.static_string(self.functions.get_error_name, r)
    }

    /// `cuGetErrorString`: "out of memory"; `None` for a code it does not know.
    pub fn error_string(&self, r: CuResult) -> Option<&'static str> {
        self.static_string(self.functions.get_error_string, r)
    }

    fn static_string(
        &self,
        f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
        r: CuResult,
    ) -> Option<&'static str> {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: writes one pointer to a valid location.
        let status = unsafe { f(r, &mut text) };
        if status != result::SUCCESS || text.is_null() {
            return None;
        }
        // SAFETY: the driver returns pointers to static NUL-terminated strings, valid for
        // the life of the process (the library is never unloaded while `self` lives, and
        // the global driver never is).
        unsafe { CStr::from_ptr(text) }.to_str().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_a_reason_naming_it() {
        let Err(reason) = Driver::open(Path::new("/nonexistent/dir/libcuda.so.1")) else {
            panic!("a missing file opened");
        };
        assert!(
            reason.contains("cannot open /nonexistent/dir/libcuda.so.1"),
            "{reason}"
        );
    }

    #[test]
    fn a_library_that_is_not_the_driver_is_refused() {
        // libc is on every machine this builds on and exports none of the driver's names.
        let Err(reason) = Driver::open(Path::new("libc.so.6")) else {
            panic!("libc taken for the CUDA driver");
        };
        assert!(reason.contains("does not export cuInit"), "{reason}");
    }

    #[test]
    fn required_symbols_use_the_versioned_names() {
        let all: Vec<&str> = Functions::REQUIRED_SYMBOLS
            .iter()
            .flat_map(|names| names.iter().copied())
            .collect();
        for name in [
            "cuMemAlloc_v2",
            "cuMemFree_v2",
            "cuMemAllocHost_v2",
            "cuDeviceTotalMem_v2",
            "cuMemHostRegister_v2",
            "cuModuleGetGlobal_v2",
            "cuMemcpyHtoD_v2",
            "cuMemcpyDtoHAsync_v2",
            "cuMemsetD32_v2",
            "cuStreamDestroy_v2",
            "cuEventDestroy_v2",
            "cuDevicePrimaryCtxRelease_v2",
        ] {
            assert!(all.contains(&name), "{name}");
        }
        for api_name in [
            "cuMemAlloc",
            "cuMemFree",
            "cuStreamDestroy",
            "cuEventDestroy",
        ] {
            assert!(!all.contains(&api_name), "{api_name} must be versioned");
        }
    }
}
