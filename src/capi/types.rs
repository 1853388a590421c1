//! The C types of the API, exactly as the header declares them (cbindgen reads this file).
//!
//! Enumerations are `uint32_t` typedefs with one `#define` per enumerator, so they are
//! 32 bits on every compiler and an out-of-range value from C is data the library can
//! reject, never undefined behaviour in Rust.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_void};

// ---- Opaque handles ----------------------------------------------------------------

/// A platform: one backend (CUDA, AMDGPU, host, ...). Owned by the library.
pub struct ol_platform_impl_t {
    _opaque: (),
}
/// A device of a platform. Owned by the library.
pub struct ol_device_impl_t {
    _opaque: (),
}
/// An in-order queue of commands on a device. Created and destroyed by the user.
pub struct ol_queue_impl_t {
    _opaque: (),
}
/// A point in a queue. Created and destroyed by the user.
pub struct ol_event_impl_t {
    _opaque: (),
}
/// A device image loaded on a device. Created and destroyed by the user.
pub struct ol_program_impl_t {
    _opaque: (),
}
/// A kernel or global variable of a program. Owned by its program.
pub struct ol_symbol_impl_t {
    _opaque: (),
}

pub type ol_platform_handle_t = *mut ol_platform_impl_t;
pub type ol_device_handle_t = *mut ol_device_impl_t;
pub type ol_queue_handle_t = *mut ol_queue_impl_t;
pub type ol_event_handle_t = *mut ol_event_impl_t;
pub type ol_program_handle_t = *mut ol_program_impl_t;
pub type ol_symbol_handle_t = *mut ol_symbol_impl_t;

// ---- Errors ------------------------------------------------------------------------

/// Error codes.
pub type ol_errc_t = u32;
pub const OL_ERRC_SUCCESS: ol_errc_t = 0;
pub const OL_ERRC_UNKNOWN: ol_errc_t = 1;
pub const OL_ERRC_HOST_IO: ol_errc_t = 2;
pub const OL_ERRC_INVALID_BINARY: ol_errc_t = 3;
pub const OL_ERRC_INVALID_NULL_POINTER: ol_errc_t = 4;
pub const OL_ERRC_INVALID_ARGUMENT: ol_errc_t = 5;
pub const OL_ERRC_NOT_FOUND: ol_errc_t = 6;
pub const OL_ERRC_OUT_OF_RESOURCES: ol_errc_t = 7;
pub const OL_ERRC_INVALID_SIZE: ol_errc_t = 8;
pub const OL_ERRC_INVALID_ENUMERATION: ol_errc_t = 9;
pub const OL_ERRC_HOST_TOOL_NOT_FOUND: ol_errc_t = 10;
pub const OL_ERRC_INVALID_VALUE: ol_errc_t = 11;
pub const OL_ERRC_UNIMPLEMENTED: ol_errc_t = 12;
pub const OL_ERRC_UNSUPPORTED: ol_errc_t = 13;
pub const OL_ERRC_ASSEMBLE_FAILURE: ol_errc_t = 14;
pub const OL_ERRC_COMPILE_FAILURE: ol_errc_t = 15;
pub const OL_ERRC_LINK_FAILURE: ol_errc_t = 16;
pub const OL_ERRC_BACKEND_FAILURE: ol_errc_t = 17;
pub const OL_ERRC_UNINITIALIZED: ol_errc_t = 18;
pub const OL_ERRC_INVALID_NULL_HANDLE: ol_errc_t = 19;
pub const OL_ERRC_INVALID_PLATFORM: ol_errc_t = 20;
pub const OL_ERRC_INVALID_DEVICE: ol_errc_t = 21;
pub const OL_ERRC_INVALID_QUEUE: ol_errc_t = 22;
pub const OL_ERRC_INVALID_EVENT: ol_errc_t = 23;
pub const OL_ERRC_SYMBOL_KIND: ol_errc_t = 24;

/// What a failed call returns: interned by the library, valid until process exit, never
/// freed by the caller.
#[repr(C)]
pub struct ol_error_struct_t {
    /// The error's code.
    pub Code: ol_errc_t,
    /// What was wrong and what was expected, NUL-terminated.
    pub Details: *const c_char,
}

/// The result of every function: `OL_SUCCESS` (NULL) or a pointer to an error.
pub type ol_result_t = *const ol_error_struct_t;

/// Where a call was made from, for the `...WithCodeLoc` variants (shown by OFFLOAD_TRACE).
#[repr(C)]
pub struct ol_code_location_t {
    pub FunctionName: *const c_char,
    pub SourceFile: *const c_char,
    pub LineNumber: u32,
    pub ColumnNumber: u32,
}

/// A size in up to three dimensions.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ol_dimensions_t {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

// ---- Init --------------------------------------------------------------------------

/// Which backends a platform is.
pub type ol_platform_backend_t = u32;
pub const OL_PLATFORM_BACKEND_UNKNOWN: ol_platform_backend_t = 0;
pub const OL_PLATFORM_BACKEND_CUDA: ol_platform_backend_t = 1;
pub const OL_PLATFORM_BACKEND_AMDGPU: ol_platform_backend_t = 2;
pub const OL_PLATFORM_BACKEND_LEVEL_ZERO: ol_platform_backend_t = 3;
pub const OL_PLATFORM_BACKEND_HOST: ol_platform_backend_t = 4;
/// Extension: devices on other machines, reached through MPI.
pub const OL_PLATFORM_BACKEND_MPI: ol_platform_backend_t = 0x10000;

/// Arguments of `olInit`. Initialise with `OL_INIT_ARGS_INIT`.
#[repr(C)]
pub struct ol_init_args_t {
    /// `sizeof(ol_init_args_t)`, so the struct can grow.
    pub Size: usize,
    /// Number of entries in `Platforms`; 0 means every backend.
    pub NumPlatforms: u32,
    /// The backends to initialise (the host platform is always present).
    pub Platforms: *const ol_platform_backend_t,
}

// ---- Platforms and devices ---------------------------------------------------------

pub type ol_platform_info_t = u32;
/// `char[]`: the platform's name.
pub const OL_PLATFORM_INFO_NAME: ol_platform_info_t = 0;
/// `char[]`: the vendor's name.
pub const OL_PLATFORM_INFO_VENDOR_NAME: ol_platform_info_t = 1;
/// `char[]`: the version of the backend.
pub const OL_PLATFORM_INFO_VERSION: ol_platform_info_t = 2;
/// `ol_platform_backend_t`.
pub const OL_PLATFORM_INFO_BACKEND: ol_platform_info_t = 3;

pub type ol_device_type_t = u32;
pub const OL_DEVICE_TYPE_DEFAULT: ol_device_type_t = 0;
pub const OL_DEVICE_TYPE_ALL: ol_device_type_t = 1;
pub const OL_DEVICE_TYPE_GPU: ol_device_type_t = 2;
pub const OL_DEVICE_TYPE_CPU: ol_device_type_t = 3;
pub const OL_DEVICE_TYPE_HOST: ol_device_type_t = 4;

pub type ol_device_info_t = u32;
/// `ol_device_type_t`.
pub const OL_DEVICE_INFO_TYPE: ol_device_info_t = 0;
/// `ol_platform_handle_t`.
pub const OL_DEVICE_INFO_PLATFORM: ol_device_info_t = 1;
/// `char[]`: the device's name.
pub const OL_DEVICE_INFO_NAME: ol_device_info_t = 2;
/// `char[]`: the product's marketing name.
pub const OL_DEVICE_INFO_PRODUCT_NAME: ol_device_info_t = 3;
/// `char[]`: an identifier stable across runs on the same machine.
pub const OL_DEVICE_INFO_UID: ol_device_info_t = 4;
/// `char[]`: the vendor's name.
pub const OL_DEVICE_INFO_VENDOR: ol_device_info_t = 5;
/// `char[]`: the driver's version.
pub const OL_DEVICE_INFO_DRIVER_VERSION: ol_device_info_t = 6;
/// `uint32_t`: the most work-items in one work-group.
pub const OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE: ol_device_info_t = 7;
/// `ol_dimensions_t`: the most work-items in one work-group per dimension.
pub const OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION: ol_device_info_t = 8;
/// `uint32_t`: the most work-items in one launch.
pub const OL_DEVICE_INFO_MAX_WORK_SIZE: ol_device_info_t = 9;
/// `ol_dimensions_t`: the most work-items in one launch per dimension.
pub const OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION: ol_device_info_t = 10;
/// `uint32_t`: the PCI vendor id (0 where there is none).
pub const OL_DEVICE_INFO_VENDOR_ID: ol_device_info_t = 11;
/// `uint32_t`: compute units (logical cores on the host).
pub const OL_DEVICE_INFO_NUM_COMPUTE_UNITS: ol_device_info_t = 12;
/// `uint32_t`: the highest clock frequency, in MHz.
pub const OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY: ol_device_info_t = 13;
/// `uint32_t`: the memory clock, in MHz.
pub const OL_DEVICE_INFO_MEMORY_CLOCK_RATE: ol_device_info_t = 14;
/// `uint32_t`: bits in an address.
pub const OL_DEVICE_INFO_ADDRESS_BITS: ol_device_info_t = 15;
/// `uint64_t`: the largest single allocation, in bytes.
pub const OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE: ol_device_info_t = 16;
/// `uint64_t`: the device's memory, in bytes.
pub const OL_DEVICE_INFO_GLOBAL_MEM_SIZE: ol_device_info_t = 17;
/// `uint32_t`: work-group local (shared) memory, in bytes.
pub const OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE: ol_device_info_t = 18;
/// `uint32_t`: lanes of a SIMD unit (warp or wavefront size; 1 on the host).
pub const OL_DEVICE_INFO_NUM_LANES: ol_device_info_t = 19;

/// Called once per platform; return false to stop.
pub type ol_platform_iterate_cb_t =
    Option<unsafe extern "C" fn(Platform: ol_platform_handle_t, UserData: *mut c_void) -> bool>;
/// Called once per device; return false to stop.
pub type ol_device_iterate_cb_t =
    Option<unsafe extern "C" fn(Device: ol_device_handle_t, UserData: *mut c_void) -> bool>;

// ---- Memory ------------------------------------------------------------------------

pub type ol_alloc_type_t = u32;
/// Host memory the device can read and write.
pub const OL_ALLOC_TYPE_HOST: ol_alloc_type_t = 0;
/// Memory of the device.
pub const OL_ALLOC_TYPE_DEVICE: ol_alloc_type_t = 1;
/// Memory visible to the host and the device, migrated on demand.
pub const OL_ALLOC_TYPE_MANAGED: ol_alloc_type_t = 2;

pub type ol_mem_info_t = u32;
/// `ol_device_handle_t`: the device the allocation was made on.
pub const OL_MEM_INFO_DEVICE: ol_mem_info_t = 0;
/// `void *`: the start of the allocation.
pub const OL_MEM_INFO_BASE: ol_mem_info_t = 1;
/// `size_t`: the size requested from `olMemAlloc`.
pub const OL_MEM_INFO_SIZE: ol_mem_info_t = 2;
/// `ol_alloc_type_t`.
pub const OL_MEM_INFO_TYPE: ol_mem_info_t = 3;

/// Flags of `olMemRegister`; reserved, must be 0 in this version.
pub type ol_memory_register_flags_t = u32;

// ---- Queues and events -------------------------------------------------------------

pub type ol_queue_info_t = u32;
/// `ol_device_handle_t`: the queue's device.
pub const OL_QUEUE_INFO_DEVICE: ol_queue_info_t = 0;
/// `bool`: true when no enqueued work is pending.
pub const OL_QUEUE_INFO_EMPTY: ol_queue_info_t = 1;

pub type ol_event_info_t = u32;
/// `ol_queue_handle_t`: the queue the event was created on.
pub const OL_EVENT_INFO_QUEUE: ol_event_info_t = 0;
/// `bool`: true once all work before the event is done.
pub const OL_EVENT_INFO_IS_COMPLETE: ol_event_info_t = 1;

/// A host function run in queue order by `olLaunchHostFunction`.
pub type ol_host_function_cb_t = Option<unsafe extern "C" fn(UserData: *mut c_void)>;

// ---- Programs, symbols, kernels ----------------------------------------------------

pub type ol_symbol_kind_t = u32;
pub const OL_SYMBOL_KIND_KERNEL: ol_symbol_kind_t = 0;
pub const OL_SYMBOL_KIND_GLOBAL_VARIABLE: ol_symbol_kind_t = 1;

pub type ol_symbol_info_t = u32;
/// `ol_symbol_kind_t`.
pub const OL_SYMBOL_INFO_KIND: ol_symbol_info_t = 0;
/// `void *`: a global variable's address on its device.
pub const OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS: ol_symbol_info_t = 1;
/// `size_t`: a global variable's size in bytes.
pub const OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE: ol_symbol_info_t = 2;
/// `char[]`: the symbol's name.
pub const OL_SYMBOL_INFO_NAME: ol_symbol_info_t = 3;

/// Size-related arguments of a kernel launch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ol_kernel_launch_size_args_t {
    /// Number of dimensions used, 1 to 3.
    pub Dimensions: usize,
    /// Work-groups in each dimension.
    pub NumGroups: ol_dimensions_t,
    /// Work-items of a work-group in each dimension.
    pub GroupSize: ol_dimensions_t,
    /// Bytes of dynamic shared memory per work-group.
    pub DynSharedMemory: usize,
}

pub type ol_kernel_launch_prop_type_t = u32;
/// Ends the property array; `data` is ignored.
pub const OL_KERNEL_LAUNCH_PROP_TYPE_NONE: ol_kernel_launch_prop_type_t = 0;
/// `data` points to a `bool`: launch cooperatively (all groups resident at once).
pub const OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE: ol_kernel_launch_prop_type_t = 1;

/// An optional property of a launch; an array of them ends with `OL_KERNEL_LAUNCH_PROP_END`.
#[repr(C)]
pub struct ol_kernel_launch_prop_t {
    pub r#type: ol_kernel_launch_prop_type_t,
    pub data: *mut c_void,
}
