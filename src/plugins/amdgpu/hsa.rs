//! The HSA runtime (`libhsa-runtime64.so.1`), opened at run time.
//!
//! Nothing of ROCm is needed to build this crate: the library is opened with libloading
//! when a program first asks for AMDGPU devices, every entry point this backend calls is
//! resolved once into a table, and `hsa_init` is called. A missing library or entry point,
//! or a failing `hsa_init` (no `/dev/kfd`, no amdgpu kernel driver), is a reason for zero
//! devices, not an error. The safe wrappers are in `calls.rs`.

use super::ffi::*;
use crate::plugin::foundation::error::{Error, ErrorCode};
use crate::plugin::foundation::vendor_library::{LibraryName, VendorLibrary};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The HSA runtime: `OFFLOAD_HSA_LIBRARY` names another file than
/// `libhsa-runtime64.so.1`.
pub const LIBRARY: LibraryName = LibraryName {
    default: "libhsa-runtime64.so.1",
    env: "OFFLOAD_HSA_LIBRARY",
};

/// What a library that lacks an entry point is.
const NOT_THE_RUNTIME: &str = "an HSA runtime older than 1.1, or not ROCm's";

/// Declares the table: each field, its symbol and its C signature from `hsa.h`; the
/// `optional` ones are newer than the oldest runtime this backend runs on.
macro_rules! hsa_functions {
    (
        required { $($field:ident = $sym:literal fn($($arg:ty),* $(,)?) -> $ret:ty;)* }
        optional { $($ofield:ident = $osym:literal fn($($oarg:ty),* $(,)?) -> $oret:ty;)* }
    ) => {
        /// The runtime's entry points, resolved once (`None`: an optional one the
        /// runtime lacks).
        #[allow(clippy::type_complexity)]
        pub struct Functions {
            $(pub $field: unsafe extern "C" fn($($arg),*) -> $ret,)*
            $(pub $ofield: Option<unsafe extern "C" fn($($oarg),*) -> $oret>,)*
        }

        impl Functions {
            /// Every symbol the backend needs.
            pub const SYMBOLS: &'static [&'static str] = &[$($sym),*];

            fn resolve(library: &VendorLibrary) -> std::result::Result<Functions, String> {
                Ok(Functions {
                    $($field: {
                        // SAFETY: the pointer type is the signature hsa.h / hsa_ext_amd.h
                        // declare for this symbol; the library is never closed.
                        unsafe {
                            library.require::<unsafe extern "C" fn($($arg),*) -> $ret>(
                                &[$sym],
                                NOT_THE_RUNTIME,
                            )
                        }?
                    },)*
                    $($ofield: {
                        // SAFETY: as above.
                        unsafe { library.find(&[$osym]) }
                    },)*
                })
            }
        }
    };
}

hsa_functions! {
    required {
    init = "hsa_init" fn() -> HsaStatus;
    status_string = "hsa_status_string" fn(HsaStatus, *mut *const c_char) -> HsaStatus;
    system_get_info = "hsa_system_get_info" fn(u32, *mut c_void) -> HsaStatus;
    iterate_agents = "hsa_iterate_agents" fn(AgentCallback, *mut c_void) -> HsaStatus;
    agent_get_info = "hsa_agent_get_info" fn(Agent, u32, *mut c_void) -> HsaStatus;
    agent_iterate_isas = "hsa_agent_iterate_isas" fn(Agent, IsaCallback, *mut c_void) -> HsaStatus;
    isa_get_info_alt = "hsa_isa_get_info_alt" fn(Isa, u32, *mut c_void) -> HsaStatus;

    iterate_memory_pools = "hsa_amd_agent_iterate_memory_pools"
        fn(Agent, PoolCallback, *mut c_void) -> HsaStatus;
    memory_pool_get_info = "hsa_amd_memory_pool_get_info"
        fn(MemoryPool, u32, *mut c_void) -> HsaStatus;
    memory_pool_allocate = "hsa_amd_memory_pool_allocate"
        fn(MemoryPool, usize, u32, *mut *mut c_void) -> HsaStatus;
    memory_pool_free = "hsa_amd_memory_pool_free" fn(*mut c_void) -> HsaStatus;
    agent_memory_pool_get_info = "hsa_amd_agent_memory_pool_get_info"
        fn(Agent, MemoryPool, u32, *mut c_void) -> HsaStatus;
    agents_allow_access = "hsa_amd_agents_allow_access"
        fn(u32, *const Agent, *const u32, *const c_void) -> HsaStatus;
    memory_async_copy = "hsa_amd_memory_async_copy"
        fn(*mut c_void, Agent, *const c_void, Agent, usize, u32, *const Signal, Signal)
        -> HsaStatus;
    memory_lock = "hsa_amd_memory_lock"
        fn(*mut c_void, usize, *mut Agent, c_int, *mut *mut c_void) -> HsaStatus;
    memory_unlock = "hsa_amd_memory_unlock" fn(*mut c_void) -> HsaStatus;
    memory_fill = "hsa_amd_memory_fill" fn(*mut c_void, u32, usize) -> HsaStatus;
    memory_copy = "hsa_memory_copy" fn(*mut c_void, *const c_void, usize) -> HsaStatus;
    pointer_info = "hsa_amd_pointer_info"
        fn(*const c_void, *mut PointerInfo, *mut c_void, *mut u32, *mut *mut Agent)
        -> HsaStatus;

    signal_create = "hsa_signal_create"
        fn(SignalValue, u32, *const Agent, *mut Signal) -> HsaStatus;
    signal_destroy = "hsa_signal_destroy" fn(Signal) -> HsaStatus;
    signal_store_relaxed = "hsa_signal_store_relaxed" fn(Signal, SignalValue) -> ();
    signal_store_screlease = "hsa_signal_store_screlease" fn(Signal, SignalValue) -> ();
    signal_load_scacquire = "hsa_signal_load_scacquire" fn(Signal) -> SignalValue;
    signal_wait_scacquire = "hsa_signal_wait_scacquire"
        fn(Signal, u32, SignalValue, u64, u32) -> SignalValue;
    signal_async_handler = "hsa_amd_signal_async_handler"
        fn(Signal, u32, SignalValue, SignalHandler, *mut c_void) -> HsaStatus;

    queue_create = "hsa_queue_create"
        fn(Agent, u32, u32, Option<QueueErrorCallback>, *mut c_void, u32, u32, *mut *mut Queue)
        -> HsaStatus;
    queue_destroy = "hsa_queue_destroy" fn(*mut Queue) -> HsaStatus;
    queue_add_write_index_relaxed = "hsa_queue_add_write_index_relaxed"
        fn(*const Queue, u64) -> u64;
    queue_load_read_index_scacquire = "hsa_queue_load_read_index_scacquire"
        fn(*const Queue) -> u64;
    profiling_set_profiler_enabled = "hsa_amd_profiling_set_profiler_enabled"
        fn(*mut Queue, c_int) -> HsaStatus;
    profiling_get_dispatch_time = "hsa_amd_profiling_get_dispatch_time"
        fn(Agent, Signal, *mut DispatchTime) -> HsaStatus;
    register_system_event_handler = "hsa_amd_register_system_event_handler"
        fn(SystemEventHandler, *mut c_void) -> HsaStatus;

    code_object_reader_create_from_memory = "hsa_code_object_reader_create_from_memory"
        fn(*const c_void, usize, *mut CodeObjectReader) -> HsaStatus;
    code_object_reader_destroy = "hsa_code_object_reader_destroy"
        fn(CodeObjectReader) -> HsaStatus;
    executable_create_alt = "hsa_executable_create_alt"
        fn(u32, u32, *const c_char, *mut Executable) -> HsaStatus;
    executable_load_agent_code_object = "hsa_executable_load_agent_code_object"
        fn(Executable, Agent, CodeObjectReader, *const c_char, *mut LoadedCodeObject)
        -> HsaStatus;
    executable_freeze = "hsa_executable_freeze" fn(Executable, *const c_char) -> HsaStatus;
    executable_validate = "hsa_executable_validate" fn(Executable, *mut u32) -> HsaStatus;
    executable_destroy = "hsa_executable_destroy" fn(Executable) -> HsaStatus;
    executable_get_symbol_by_name = "hsa_executable_get_symbol_by_name"
        fn(Executable, *const c_char, *const Agent, *mut ExecutableSymbol) -> HsaStatus;
    executable_symbol_get_info = "hsa_executable_symbol_get_info"
        fn(ExecutableSymbol, u32, *mut c_void) -> HsaStatus;
    }
    optional {
        // ROCm 6.0: virtual memory management, memory at an address (olMemAllocAt).
        vmem_address_reserve = "hsa_amd_vmem_address_reserve"
            fn(*mut *mut c_void, usize, u64, u64) -> HsaStatus;
        vmem_address_free = "hsa_amd_vmem_address_free" fn(*mut c_void, usize) -> HsaStatus;
        vmem_handle_create = "hsa_amd_vmem_handle_create"
            fn(MemoryPool, usize, u32, u64, *mut VmemHandle) -> HsaStatus;
        vmem_handle_release = "hsa_amd_vmem_handle_release" fn(VmemHandle) -> HsaStatus;
        vmem_map = "hsa_amd_vmem_map"
            fn(*mut c_void, usize, usize, VmemHandle, u64) -> HsaStatus;
        vmem_unmap = "hsa_amd_vmem_unmap" fn(*mut c_void, usize) -> HsaStatus;
        vmem_set_access = "hsa_amd_vmem_set_access"
            fn(*mut c_void, usize, *const MemoryAccessDesc, usize) -> HsaStatus;
    }
}

/// The opened, initialised runtime. Everything made from it holds it in an `Arc`.
pub struct Hsa {
    pub(super) f: Functions,
    version: (u16, u16),
    /// Never closed: the table points into it, and the runtime's threads stay (HSA is
    /// not shut down: another library of the process may use it too).
    library: VendorLibrary,
}

impl Hsa {
    /// Opens `path`, resolves the table and calls `hsa_init`; the reason it cannot.
    pub fn open(path: &Path) -> std::result::Result<Hsa, String> {
        // SAFETY: loading the HSA runtime runs its initialisers, which only set up its
        // own state (agents are discovered in hsa_init, not at load).
        let library = unsafe { VendorLibrary::open(path) }?;
        let f = Functions::resolve(&library)?;
        // SAFETY: hsa_init takes no arguments; it is reference counted by the runtime.
        let status = unsafe { (f.init)() };
        let mut hsa = Hsa {
            f,
            version: (0, 0),
            library,
        };
        if status != STATUS_SUCCESS {
            return Err(format!(
                "hsa_init failed: {} (is the amdgpu kernel driver loaded and /dev/kfd \
                 readable?)",
                hsa.status_text(status)
            ));
        }
        let major = hsa.system_u16(system_info::VERSION_MAJOR).unwrap_or(0);
        let minor = hsa.system_u16(system_info::VERSION_MINOR).unwrap_or(0);
        hsa.version = (major, minor);
        Ok(hsa)
    }

    /// The process's runtime (`OFFLOAD_HSA_LIBRARY` or `libhsa-runtime64.so.1`), opened
    /// once; the reason it cannot be, as often as asked.
    pub fn global() -> std::result::Result<Arc<Hsa>, String> {
        static GLOBAL: OnceLock<std::result::Result<Arc<Hsa>, String>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Hsa::open(&LIBRARY.path()).map(Arc::new))
            .clone()
    }

    pub fn path(&self) -> &Path {
        self.library.path()
    }

    /// The HSA version the runtime implements, e.g. (1, 1).
    pub fn version(&self) -> (u16, u16) {
        self.version
    }

    fn system_u16(&self, attribute: u32) -> Option<u16> {
        let mut v = 0u16;
        // SAFETY: the version attributes are uint16_t.
        let s = unsafe { (self.f.system_get_info)(attribute, &mut v as *mut u16 as *mut c_void) };
        (s == STATUS_SUCCESS).then_some(v)
    }

    /// The runtime's own words for `status`, with its name and number.
    pub fn status_text(&self, status: HsaStatus) -> String {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: hsa_status_string writes a pointer to a static string.
        let s = unsafe { (self.f.status_string)(status, &mut text) };
        let words = if s == STATUS_SUCCESS && !text.is_null() {
            // SAFETY: the runtime returns a NUL-terminated static string.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        } else {
            String::from("unknown status")
        };
        format!("{words} (0x{status:x})")
    }

    /// `Ok` on success, else an `Error` saying which call failed and the runtime's words.
    pub fn check(
        &self,
        status: HsaStatus,
        call: &str,
    ) -> crate::plugin::foundation::error::Result<()> {
        if status == STATUS_SUCCESS {
            return Ok(());
        }
        Err(Error::new(
            error_code(status),
            format!("{call} failed: {}", self.status_text(status)),
        ))
    }
}

/// Our code for an HSA status: out of resources is retried by the memory manager.
pub fn error_code(status: HsaStatus) -> ErrorCode {
    match status {
        STATUS_ERROR_OUT_OF_RESOURCES => ErrorCode::OutOfResources,
        STATUS_ERROR_INVALID_CODE_OBJECT | STATUS_ERROR_INVALID_ISA => ErrorCode::InvalidBinary,
        _ => ErrorCode::BackendFailure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_a_reason() {
        let why = Hsa::open(Path::new("/nonexistent/libhsa-runtime64.so.1"))
            .err()
            .expect("no runtime there");
        assert!(why.contains("/nonexistent/libhsa-runtime64.so.1"), "{why}");
    }

    #[test]
    fn statuses_map_to_codes() {
        assert_eq!(
            error_code(STATUS_ERROR_OUT_OF_RESOURCES),
            ErrorCode::OutOfResources
        );
        assert_eq!(
            error_code(STATUS_ERROR_INVALID_CODE_OBJECT),
            ErrorCode::InvalidBinary
        );
        assert_eq!(error_code(0x1001), ErrorCode::BackendFailure);
    }
}
