//! The C types and constants of the HSA runtime this backend uses, declared by hand from
//! `hsa.h` and `hsa_ext_amd.h` (HSA 1.1 with AMD's extensions). `tests/amdgpu_hsa_layout.rs`
//! compiles a C program against Debian's headers and checks every value and layout here.

use std::ffi::c_void;

/// `hsa_status_t`.
pub type HsaStatus = u32;
pub const STATUS_SUCCESS: HsaStatus = 0;
pub const STATUS_INFO_BREAK: HsaStatus = 1;
pub const STATUS_ERROR_OUT_OF_RESOURCES: HsaStatus = 0x1008;
pub const STATUS_ERROR_INVALID_CODE_OBJECT: HsaStatus = 0x1010;
pub const STATUS_ERROR_INVALID_ISA: HsaStatus = 0x100F;

macro_rules! handle {
    ($($name:ident),*) => {$(
        /// An opaque HSA handle (`{ uint64_t handle; }`).
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name {
            pub handle: u64,
        }
    )*};
}
handle!(
    Agent,
    Signal,
    MemoryPool,
    Isa,
    Executable,
    ExecutableSymbol,
    CodeObjectReader,
    LoadedCodeObject,
    VmemHandle
);

/// `hsa_amd_memory_type_t`'s MEMORY_TYPE_NONE: memory of the pool as it is (device
/// memory from a GPU's pool). ROCm 6.0's virtual memory management, like the two items
/// below: not in the ROCm 5 headers `tests/amdgpu_hsa_layout.rs` checks against.
pub const VMEM_MEMORY_TYPE_NONE: u32 = 0;
/// `hsa_access_permission_t`'s HSA_ACCESS_PERMISSION_RW.
pub const ACCESS_PERMISSION_RW: u32 = 3;

/// `hsa_amd_memory_access_desc_t`: who may reach a mapped range, and how.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemoryAccessDesc {
    pub permissions: u32,
    pub agent: Agent,
}

/// `hsa_signal_value_t` on 64-bit hosts.
pub type SignalValue = i64;

/// `hsa_queue_t` (little-endian, large model: the layout of every 64-bit Linux host).
#[repr(C)]
#[derive(Debug)]
pub struct Queue {
    pub queue_type: u32,
    pub features: u32,
    pub base_address: *mut c_void,
    pub doorbell_signal: Signal,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hsa_amd_profiling_dispatch_time_t`: ticks of the system timestamp.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DispatchTime {
    pub start: u64,
    pub end: u64,
}

/// `hsa_amd_gpu_memory_fault_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemoryFaultInfo {
    pub agent: Agent,
    pub virtual_address: u64,
    pub fault_reason_mask: u32,
}

/// `hsa_amd_event_t` (its union has one member).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AmdEvent {
    pub event_type: u32,
    pub memory_fault: MemoryFaultInfo,
}

/// `hsa_amd_pointer_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PointerInfo {
    pub size: u32,
    pub pointer_type: u32,
    pub agent_base_address: *mut c_void,
    pub host_base_address: *mut c_void,
    pub size_in_bytes: usize,
    pub user_data: *mut c_void,
    pub agent_owner: Agent,
    pub global_flags: u32,
}

/// `hsa_system_info_t`.
pub mod system_info {
    pub const VERSION_MAJOR: u32 = 0;
    pub const VERSION_MINOR: u32 = 1;
    pub const TIMESTAMP_FREQUENCY: u32 = 3;
}

/// `hsa_agent_info_t` and `hsa_amd_agent_info_t`.
pub mod agent_info {
    pub const NAME: u32 = 0;
    pub const VENDOR_NAME: u32 = 1;
    pub const FEATURE: u32 = 2;
    pub const WAVEFRONT_SIZE: u32 = 6;
    pub const WORKGROUP_MAX_DIM: u32 = 7;
    pub const WORKGROUP_MAX_SIZE: u32 = 8;
    pub const GRID_MAX_DIM: u32 = 9;
    pub const GRID_MAX_SIZE: u32 = 10;
    pub const QUEUES_MAX: u32 = 12;
    pub const QUEUE_MAX_SIZE: u32 = 14;
    pub const DEVICE: u32 = 17;
    pub const CACHE_SIZE: u32 = 18;
    pub const AMD_CHIP_ID: u32 = 0xA000;
    pub const AMD_COMPUTE_UNIT_COUNT: u32 = 0xA002;
    pub const AMD_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
    pub const AMD_BDFID: u32 = 0xA006;
    pub const AMD_MEMORY_MAX_FREQUENCY: u32 = 0xA008;
    pub const AMD_PRODUCT_NAME: u32 = 0xA009;
    pub const AMD_MAX_WAVES_PER_CU: u32 = 0xA00A;
    pub const AMD_UUID: u32 = 0xA011;
}

/// `hsa_agent_feature_t`.
pub const AGENT_FEATURE_KERNEL_DISPATCH: u32 = 1;
/// `hsa_device_type_t`.
pub const DEVICE_TYPE_CPU: u32 = 0;
pub const DEVICE_TYPE_GPU: u32 = 1;

/// `hsa_isa_info_t`.
pub const ISA_INFO_NAME_LENGTH: u32 = 0;
pub const ISA_INFO_NAME: u32 = 1;

/// `hsa_amd_memory_pool_info_t`.
pub mod pool_info {
    pub const SEGMENT: u32 = 0;
    pub const GLOBAL_FLAGS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const RUNTIME_ALLOC_ALLOWED: u32 = 5;
    pub const RUNTIME_ALLOC_GRANULE: u32 = 6;
    pub const ALLOC_MAX_SIZE: u32 = 16;
}

/// `hsa_amd_agent_memory_pool_info_t` and `hsa_amd_memory_pool_access_t`.
pub const AGENT_POOL_INFO_ACCESS: u32 = 0;
pub const POOL_ACCESS_NEVER_ALLOWED: u32 = 0;

/// `hsa_amd_segment_t`.
pub const SEGMENT_GLOBAL: u32 = 0;
pub const SEGMENT_GROUP: u32 = 3;
/// `hsa_amd_memory_pool_global_flag_t`.
pub const GLOBAL_FLAG_KERNARG_INIT: u32 = 1;
pub const GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
pub const GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;

/// `hsa_queue_type_t`.
pub const QUEUE_TYPE_MULTI: u32 = 0;

/// `hsa_signal_condition_t`.
pub const SIGNAL_CONDITION_EQ: u32 = 0;
pub const SIGNAL_CONDITION_LT: u32 = 2;
/// `hsa_wait_state_t`.
pub const WAIT_STATE_BLOCKED: u32 = 0;

/// `hsa_profile_t` and `hsa_default_float_rounding_mode_t`.
pub const PROFILE_FULL: u32 = 1;
pub const ROUNDING_MODE_DEFAULT: u32 = 0;

/// `hsa_symbol_kind_t`.
pub const SYMBOL_KIND_VARIABLE: u32 = 0;
pub const SYMBOL_KIND_KERNEL: u32 = 1;

/// `hsa_executable_symbol_info_t`.
pub mod symbol_info {
    pub const TYPE: u32 = 0;
    pub const VARIABLE_SIZE: u32 = 9;
    pub const KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
    pub const KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
    pub const KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
    pub const KERNEL_DYNAMIC_CALLSTACK: u32 = 15;
    pub const VARIABLE_ADDRESS: u32 = 21;
    pub const KERNEL_OBJECT: u32 = 22;
}

/// `hsa_packet_type_t`, `hsa_fence_scope_t` and the `hsa_packet_header_t` bit offsets,
/// which `packet.rs` encodes.
pub mod packet_header {
    pub const TYPE_INVALID: u16 = 1;
    pub const TYPE_KERNEL_DISPATCH: u16 = 2;
    pub const TYPE_BARRIER_AND: u16 = 3;
    pub const FENCE_SCOPE_NONE: u16 = 0;
    pub const FENCE_SCOPE_AGENT: u16 = 1;
    pub const FENCE_SCOPE_SYSTEM: u16 = 2;
    pub const SHIFT_TYPE: u16 = 0;
    pub const SHIFT_BARRIER: u16 = 8;
    pub const SHIFT_ACQUIRE_FENCE_SCOPE: u16 = 9;
    pub const SHIFT_RELEASE_FENCE_SCOPE: u16 = 11;
    pub const SHIFT_SETUP_DIMENSIONS: u16 = 0;
}

/// `hsa_amd_event_type_t` and `hsa_amd_memory_fault_reason_t`.
pub const GPU_MEMORY_FAULT_EVENT: u32 = 0;
pub mod fault_reason {
    pub const PAGE_NOT_PRESENT: u32 = 1 << 0;
    pub const READ_ONLY: u32 = 1 << 1;
    pub const NX: u32 = 1 << 2;
    pub const HOST_ONLY: u32 = 1 << 3;
    pub const DRAMECC: u32 = 1 << 4;
    pub const IMPRECISE: u32 = 1 << 5;
    pub const SRAMECC: u32 = 1 << 6;
    pub const HANG: u32 = 1 << 31;
}

/// `hsa_amd_pointer_type_t`: memory the runtime does not know is pageable.
pub const POINTER_TYPE_UNKNOWN: u32 = 0;

/// Callback types.
pub type AgentCallback = unsafe extern "C" fn(Agent, *mut c_void) -> HsaStatus;
pub type PoolCallback = unsafe extern "C" fn(MemoryPool, *mut c_void) -> HsaStatus;
pub type IsaCallback = unsafe extern "C" fn(Isa, *mut c_void) -> HsaStatus;
pub type QueueErrorCallback = unsafe extern "C" fn(HsaStatus, *mut Queue, *mut c_void);
pub type SignalHandler = unsafe extern "C" fn(SignalValue, *mut c_void) -> bool;
pub type SystemEventHandler = unsafe extern "C" fn(*const AmdEvent, *mut c_void) -> HsaStatus;
