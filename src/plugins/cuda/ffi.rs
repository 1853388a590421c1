//! The C types and constants of the CUDA driver API this backend uses, with the values
//! `cuda.h` gives them. Only what the driver layer passes across the boundary is here;
//! nothing is taken from a CUDA toolkit at build time.

use std::ffi::{c_int, c_uint, c_void};

/// `CUresult`: 0 is success, anything else an error (see `error.rs`).
pub type CuResult = c_int;
/// `CUdevice`: a device ordinal as the driver numbers it.
pub type CuDevice = c_int;
/// `CUdeviceptr`: `unsigned long long` on every 64-bit platform.
pub type CuDevicePtr = u64;

/// Defines an opaque driver handle: a pointer the driver owns, passed by value.
macro_rules! handle {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name(pub *mut c_void);

        impl $name {
            pub const NULL: $name = $name(std::ptr::null_mut());

            pub fn is_null(self) -> bool {
                self.0.is_null()
            }
        }

        // SAFETY: a driver handle is an opaque token; the driver API may be called with it
        // from any thread (the CUDA driver is thread-safe), and this type gives no access
        // to what it points to.
        unsafe impl Send for $name {}
        // SAFETY: as above: sharing the token shares no Rust-visible memory.
        unsafe impl Sync for $name {}
    )*};
}

handle! {
    /// `CUcontext`.
    CuContext;
    /// `CUmodule`: a loaded image.
    CuModule;
    /// `CUfunction`: a kernel of a module.
    CuFunction;
    /// `CUstream`; `CuStream::NULL` is the context's legacy default stream.
    CuStream;
    /// `CUevent`.
    CuEvent;
}

/// `CUuuid`: 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CuUuid {
    pub bytes: [u8; 16],
}

/// `CUmemGenericAllocationHandle`: physical memory made by `cuMemCreate`.
pub type CuMemHandle = u64;

/// `CUmemLocation`: where memory lives (`type` 1 is a device, `id` its ordinal).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CuMemLocation {
    pub kind: c_int,
    pub id: c_int,
}

/// `CU_MEM_LOCATION_TYPE_DEVICE`.
pub const MEM_LOCATION_TYPE_DEVICE: c_int = 1;
/// `CU_MEM_ALLOCATION_TYPE_PINNED`: the only allocation type `cuMemCreate` takes.
pub const MEM_ALLOCATION_TYPE_PINNED: c_int = 1;
/// `CU_MEM_ACCESS_FLAGS_PROT_READWRITE`.
pub const MEM_ACCESS_FLAGS_PROT_READWRITE: c_int = 3;
/// `CU_MEM_ALLOC_GRANULARITY_MINIMUM`.
pub const MEM_ALLOC_GRANULARITY_MINIMUM: c_int = 0;

/// `CUmemAllocationProp` (CUDA 11+): pinned device memory, no exportable handle.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuMemAllocationProp {
    pub kind: c_int,
    pub requested_handle_types: c_int,
    pub location: CuMemLocation,
    pub win32_handle_metadata: *mut c_void,
    /// `allocFlags`: compression type, RDMA capable, usage, reserved; zero here.
    pub alloc_flags: [u8; 8],
}

/// `CUmemAccessDesc`: who may read and write a mapped range.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CuMemAccessDesc {
    pub location: CuMemLocation,
    pub flags: c_int,
}

const _: () = assert!(std::mem::size_of::<CuMemAllocationProp>() == 32);
const _: () = assert!(std::mem::size_of::<CuMemAccessDesc>() == 12);

/// `CUhostFn`: a host function run in stream order.
pub type CuHostFn = unsafe extern "C" fn(user_data: *mut c_void);

/// `CUoccupancyB2DSize`: dynamic shared memory a block of the given size needs.
pub type CuOccupancyB2DSize = extern "C" fn(block_size: c_int) -> usize;

/// `CUresult` values this backend names (the mapping to our codes is in `error.rs`).
pub mod result {
    use super::CuResult;
    pub const SUCCESS: CuResult = 0;
    pub const INVALID_VALUE: CuResult = 1;
    pub const OUT_OF_MEMORY: CuResult = 2;
    pub const NOT_INITIALIZED: CuResult = 3;
    pub const DEINITIALIZED: CuResult = 4;
    pub const STUB_LIBRARY: CuResult = 34;
    pub const DEVICE_UNAVAILABLE: CuResult = 46;
    pub const NO_DEVICE: CuResult = 100;
    pub const INVALID_DEVICE: CuResult = 101;
    pub const DEVICE_NOT_LICENSED: CuResult = 102;
    pub const INVALID_IMAGE: CuResult = 200;
    pub const INVALID_CONTEXT: CuResult = 201;
    pub const NO_BINARY_FOR_GPU: CuResult = 209;
    pub const ECC_UNCORRECTABLE: CuResult = 214;
    pub const UNSUPPORTED_LIMIT: CuResult = 215;
    pub const PEER_ACCESS_UNSUPPORTED: CuResult = 217;
    pub const INVALID_PTX: CuResult = 218;
    pub const NVLINK_UNCORRECTABLE: CuResult = 220;
    pub const JIT_COMPILER_NOT_FOUND: CuResult = 221;
    pub const UNSUPPORTED_PTX_VERSION: CuResult = 222;
    pub const JIT_COMPILATION_DISABLED: CuResult = 223;
    pub const INVALID_SOURCE: CuResult = 300;
    pub const FILE_NOT_FOUND: CuResult = 301;
    pub const SHARED_OBJECT_SYMBOL_NOT_FOUND: CuResult = 302;
    pub const OPERATING_SYSTEM: CuResult = 304;
    pub const INVALID_HANDLE: CuResult = 400;
    pub const NOT_FOUND: CuResult = 500;
    pub const NOT_READY: CuResult = 600;
    pub const ILLEGAL_ADDRESS: CuResult = 700;
    pub const LAUNCH_OUT_OF_RESOURCES: CuResult = 701;
    pub const LAUNCH_TIMEOUT: CuResult = 702;
    pub const PEER_ACCESS_ALREADY_ENABLED: CuResult = 704;
    pub const PEER_ACCESS_NOT_ENABLED: CuResult = 705;
    pub const CONTEXT_IS_DESTROYED: CuResult = 709;
    pub const ASSERT: CuResult = 710;
    pub const TOO_MANY_PEERS: CuResult = 711;
    pub const HOST_MEMORY_ALREADY_REGISTERED: CuResult = 712;
    pub const HOST_MEMORY_NOT_REGISTERED: CuResult = 713;
    pub const HARDWARE_STACK_ERROR: CuResult = 714;
    pub const ILLEGAL_INSTRUCTION: CuResult = 715;
    pub const MISALIGNED_ADDRESS: CuResult = 716;
    pub const INVALID_ADDRESS_SPACE: CuResult = 717;
    pub const INVALID_PC: CuResult = 718;
    pub const LAUNCH_FAILED: CuResult = 719;
    pub const COOPERATIVE_LAUNCH_TOO_LARGE: CuResult = 720;
    pub const NOT_PERMITTED: CuResult = 800;
    pub const NOT_SUPPORTED: CuResult = 801;
    pub const SYSTEM_NOT_READY: CuResult = 802;
    pub const SYSTEM_DRIVER_MISMATCH: CuResult = 803;
    pub const COMPAT_NOT_SUPPORTED_ON_DEVICE: CuResult = 804;
    pub const UNKNOWN: CuResult = 999;
}

/// `CUdevice_attribute` values read by `facts.rs`.
pub mod device_attribute {
    use std::ffi::c_int;
    pub const MAX_THREADS_PER_BLOCK: c_int = 1;
    pub const MAX_BLOCK_DIM_X: c_int = 2;
    pub const MAX_BLOCK_DIM_Y: c_int = 3;
    pub const MAX_BLOCK_DIM_Z: c_int = 4;
    pub const MAX_GRID_DIM_X: c_int = 5;
    pub const MAX_GRID_DIM_Y: c_int = 6;
    pub const MAX_GRID_DIM_Z: c_int = 7;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 8;
    pub const WARP_SIZE: c_int = 10;
    /// kHz.
    pub const CLOCK_RATE: c_int = 13;
    pub const MULTIPROCESSOR_COUNT: c_int = 16;
    pub const PCI_BUS_ID: c_int = 33;
    pub const PCI_DEVICE_ID: c_int = 34;
    /// kHz.
    pub const MEMORY_CLOCK_RATE: c_int = 36;
    pub const UNIFIED_ADDRESSING: c_int = 41;
    pub const PCI_DOMAIN_ID: c_int = 50;
    pub const COMPUTE_CAPABILITY_MAJOR: c_int = 75;
    pub const COMPUTE_CAPABILITY_MINOR: c_int = 76;
    pub const MANAGED_MEMORY: c_int = 83;
    pub const COOPERATIVE_LAUNCH: c_int = 95;
    pub const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
    /// `cuMemAddressReserve`, `cuMemCreate`, `cuMemMap` and the rest work on this device.
    pub const VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: c_int = 102;
}

/// `CUfunction_attribute` values.
pub mod function_attribute {
    use std::ffi::c_int;
    pub const MAX_THREADS_PER_BLOCK: c_int = 0;
    pub const SHARED_SIZE_BYTES: c_int = 1;
    pub const NUM_REGS: c_int = 4;
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
}

/// `CUpointer_attribute` values.
pub mod pointer_attribute {
    use std::ffi::c_int;
    pub const CONTEXT: c_int = 1;
    pub const MEMORY_TYPE: c_int = 2;
    pub const DEVICE_POINTER: c_int = 3;
    pub const HOST_POINTER: c_int = 4;
    pub const IS_MANAGED: c_int = 8;
    pub const DEVICE_ORDINAL: c_int = 9;
}

/// `CUjit_option` values for `cuModuleLoadDataEx`.
pub mod jit_option {
    use std::ffi::c_int;
    pub const INFO_LOG_BUFFER: c_int = 3;
    pub const INFO_LOG_BUFFER_SIZE_BYTES: c_int = 4;
    pub const ERROR_LOG_BUFFER: c_int = 5;
    pub const ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
}

/// `CU_MEM_ATTACH_GLOBAL`: managed memory any stream of any device may use.
pub const MEM_ATTACH_GLOBAL: c_uint = 0x1;
/// `CU_MEMHOSTREGISTER_PORTABLE`: registered memory is pinned for every context.
pub const MEMHOSTREGISTER_PORTABLE: c_uint = 0x01;
/// `CU_MEMHOSTREGISTER_DEVICEMAP`: registered memory is mapped into the device's
/// address space (implied under unified addressing; explicit for clarity).
pub const MEMHOSTREGISTER_DEVICEMAP: c_uint = 0x02;
/// `CU_STREAM_DEFAULT` / `CU_STREAM_NON_BLOCKING` (`cuStreamCreate` flags).
pub const STREAM_DEFAULT: c_uint = 0x0;
pub const STREAM_NON_BLOCKING: c_uint = 0x1;
/// `CUevent_flags`.
pub const EVENT_DEFAULT: c_uint = 0x0;
pub const EVENT_BLOCKING_SYNC: c_uint = 0x1;
pub const EVENT_DISABLE_TIMING: c_uint = 0x2;

/// The markers of `cuLaunchKernel`'s `extra` array: the argument buffer's address, its
/// size's address, and the end of the list (`CU_LAUNCH_PARAM_*`, pointer values 1, 2, 0).
pub const LAUNCH_PARAM_END: usize = 0x00;
pub const LAUNCH_PARAM_BUFFER_POINTER: usize = 0x01;
pub const LAUNCH_PARAM_BUFFER_SIZE: usize = 0x02;

/// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` (`CUlaunchAttributeID`).
pub const LAUNCH_ATTRIBUTE_COOPERATIVE: c_uint = 2;

/// `CUlaunchAttribute`: an id, padding to 8 bytes, then a 64-byte union whose
/// `cooperative` member is an `int` at its start.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug)]
pub struct CuLaunchAttribute {
    pub id: c_uint,
    pub pad: [u8; 4],
    pub value: [u8; 64],
}

impl CuLaunchAttribute {
    /// The attribute that makes a launch cooperative.
    pub fn cooperative() -> CuLaunchAttribute {
        let mut value = [0u8; 64];
        value[..4].copy_from_slice(&(1 as c_int).to_ne_bytes());
        CuLaunchAttribute {
            id: LAUNCH_ATTRIBUTE_COOPERATIVE,
            pad: [0; 4],
            value,
        }
    }
}

/// `CUlaunchConfig` (`cuLaunchKernelEx`, CUDA 12.0 and later).
#[repr(C)]
#[derive(Debug)]
pub struct CuLaunchConfig {
    pub grid_dim: [c_uint; 3],
    pub block_dim: [c_uint; 3],
    pub shared_mem_bytes: c_uint,
    pub stream: CuStream,
    pub attrs: *mut CuLaunchAttribute,
    pub num_attrs: c_uint,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn launch_structs_have_the_header_layout() {
        assert_eq!(size_of::<CuLaunchAttribute>(), 72);
        assert_eq!(align_of::<CuLaunchAttribute>(), 8);
        assert_eq!(offset_of!(CuLaunchAttribute, value), 8);
        if cfg!(target_pointer_width = "64") {
            assert_eq!(offset_of!(CuLaunchConfig, shared_mem_bytes), 24);
            assert_eq!(offset_of!(CuLaunchConfig, stream), 32);
            assert_eq!(offset_of!(CuLaunchConfig, attrs), 40);
            assert_eq!(offset_of!(CuLaunchConfig, num_attrs), 48);
            assert_eq!(size_of::<CuLaunchConfig>(), 56);
        }
        let attr = CuLaunchAttribute::cooperative();
        assert_eq!(attr.id, 2);
        assert_eq!(&attr.value[..4], &1i32.to_ne_bytes());
        assert!(attr.value[4..].iter().all(|&b| b == 0));
    }

    #[test]
    fn handles_are_pointer_sized() {
        assert_eq!(size_of::<CuContext>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<CuUuid>(), 16);
        assert!(CuStream::NULL.is_null());
    }
}
