//! The C types of the API, exactly as LLVM 22.1's `OffloadAPI.h` declares them, plus the
//! extensions of API.md (cbindgen reads this file).
//!
//! Each enumeration is written twice on purpose: as a `#[repr(C)]` enum, from which
//! cbindgen generates the header's `typedef enum`, and as the `u32` the functions
//! actually take (`*_raw_t`, renamed to the enum's name in the header by cbindgen.toml).
//! A value from C is therefore plain data the library can reject, never an invalid Rust
//! enum. The `u32` constants of the same names, for Rust callers, come from
//! `raw_values!`, which cbindgen does not expand, so they never reach the header.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_void};

/// Defines `pub const NAME: u32` for enumerators of a C enum, for Rust callers. With
/// `named`, also `NAMES`, each enumerator's value and name: the one table the library
/// names them by (the trace). The sentinels after `;` (`*_LAST`) are no value a caller
/// passes and get no name. `ol_errc_t` has no `NAMES`: `ErrorCode::c_name` names codes.
macro_rules! raw_values {
    (named $enum:ident: $($name:ident),+ ; $($sentinel:ident),*) => {
        raw_values!($enum: $($name,)+ $($sentinel),*);
        impl $enum {
            pub const NAMES: &'static [(u32, &'static str)] =
                &[$(($enum::$name as u32, stringify!($name))),+];
        }
    };
    ($enum:ident: $($name:ident),* $(,)?) => {
        $(pub const $name: u32 = $enum::$name as u32;)*
    };
}

// ---- Opaque handles ----------------------------------------------------------------

/// A platform: one backend (CUDA, AMDGPU, host, ...). Owned by the library.
pub struct ol_platform_impl_t {
    _opaque: (),
}
/// A device of a platform. Owned by the library.
pub struct ol_device_impl_t {
    _opaque: (),
}
/// A context (declared by LLVM 22.1's header; no function takes one yet).
pub struct ol_context_impl_t {
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
pub type ol_context_handle_t = *mut ol_context_impl_t;
pub type ol_queue_handle_t = *mut ol_queue_impl_t;
pub type ol_event_handle_t = *mut ol_event_impl_t;
pub type ol_program_handle_t = *mut ol_program_impl_t;
pub type ol_symbol_handle_t = *mut ol_symbol_impl_t;

// ---- Errors ------------------------------------------------------------------------

/// Error codes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_errc_t {
    /// no error
    OL_ERRC_SUCCESS = 0,
    /// an internal error of unknown cause
    OL_ERRC_UNKNOWN = 1,
    /// reading or writing on the host failed
    OL_ERRC_HOST_IO = 2,
    /// the image is malformed or not for this device
    OL_ERRC_INVALID_BINARY = 3,
    /// a pointer argument is NULL where one is required
    OL_ERRC_INVALID_NULL_POINTER = 4,
    /// an argument is wrong
    OL_ERRC_INVALID_ARGUMENT = 5,
    /// the object asked for does not exist
    OL_ERRC_NOT_FOUND = 6,
    /// memory or another resource ran out
    OL_ERRC_OUT_OF_RESOURCES = 7,
    /// a size is 0, too small or out of bounds
    OL_ERRC_INVALID_SIZE = 8,
    /// an enumeration argument is out of range
    OL_ERRC_INVALID_ENUMERATION = 9,
    /// a tool the operation needs is missing on the host
    OL_ERRC_HOST_TOOL_NOT_FOUND = 10,
    /// a value is wrong
    OL_ERRC_INVALID_VALUE = 11,
    /// not implemented (yet) by this backend
    OL_ERRC_UNIMPLEMENTED = 12,
    /// not supported by this device or backend
    OL_ERRC_UNSUPPORTED = 13,
    /// assembling the image failed
    OL_ERRC_ASSEMBLE_FAILURE = 14,
    /// compiling the image failed
    OL_ERRC_COMPILE_FAILURE = 15,
    /// linking the image failed
    OL_ERRC_LINK_FAILURE = 16,
    /// the vendor backend failed or is in a bad state
    OL_ERRC_BACKEND_FAILURE = 17,
    /// called before olInit or after the last olShutDown
    OL_ERRC_UNINITIALIZED = 18,
    /// a handle argument is NULL
    OL_ERRC_INVALID_NULL_HANDLE = 19,
    /// not a live platform handle
    OL_ERRC_INVALID_PLATFORM = 20,
    /// not a live device handle
    OL_ERRC_INVALID_DEVICE = 21,
    /// not a live queue handle
    OL_ERRC_INVALID_QUEUE = 22,
    /// not a live event handle
    OL_ERRC_INVALID_EVENT = 23,
    /// the symbol is of the wrong kind for the operation
    OL_ERRC_SYMBOL_KIND = 24,
    OL_ERRC_LAST = 25,
    OL_ERRC_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(ol_errc_t: OL_ERRC_SUCCESS, OL_ERRC_UNKNOWN, OL_ERRC_HOST_IO,
    OL_ERRC_INVALID_BINARY, OL_ERRC_INVALID_NULL_POINTER, OL_ERRC_INVALID_ARGUMENT,
    OL_ERRC_NOT_FOUND, OL_ERRC_OUT_OF_RESOURCES, OL_ERRC_INVALID_SIZE,
    OL_ERRC_INVALID_ENUMERATION, OL_ERRC_HOST_TOOL_NOT_FOUND, OL_ERRC_INVALID_VALUE,
    OL_ERRC_UNIMPLEMENTED, OL_ERRC_UNSUPPORTED, OL_ERRC_ASSEMBLE_FAILURE,
    OL_ERRC_COMPILE_FAILURE, OL_ERRC_LINK_FAILURE, OL_ERRC_BACKEND_FAILURE,
    OL_ERRC_UNINITIALIZED, OL_ERRC_INVALID_NULL_HANDLE, OL_ERRC_INVALID_PLATFORM,
    OL_ERRC_INVALID_DEVICE, OL_ERRC_INVALID_QUEUE, OL_ERRC_INVALID_EVENT,
    OL_ERRC_SYMBOL_KIND, OL_ERRC_LAST);
pub type ol_errc_raw_t = u32;

/// What a failed call returns: interned by the library, valid until process exit, never
/// freed by the caller.
#[repr(C)]
pub struct ol_error_struct_t {
    /// The error's code.
    pub Code: ol_errc_raw_t,
    /// What was wrong and what was expected, NUL-terminated.
    pub Details: *const c_char,
}

/// The result of every function: `OL_SUCCESS` (NULL) or a pointer to an error.
pub type ol_result_t = *const ol_error_struct_t;

/// Where a call was made from, for the `...WithCodeLoc` variants (shown by OFFLOAD_TRACE).
#[repr(C)]
pub struct ol_code_location_t {
    /// Function name
    pub FunctionName: *const c_char,
    /// Source code file
    pub SourceFile: *const c_char,
    /// Source code line number
    pub LineNumber: u32,
    /// Source code column number
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

// ---- Platforms ---------------------------------------------------------------------

/// The native backend of a platform.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_platform_backend_t {
    /// not known
    OL_PLATFORM_BACKEND_UNKNOWN = 0,
    /// NVIDIA CUDA
    OL_PLATFORM_BACKEND_CUDA = 1,
    /// AMD GPUs (HSA)
    OL_PLATFORM_BACKEND_AMDGPU = 2,
    /// Intel Level Zero
    OL_PLATFORM_BACKEND_LEVEL_ZERO = 3,
    /// the CPU this runs on
    OL_PLATFORM_BACKEND_HOST = 4,
    OL_PLATFORM_BACKEND_LAST = 5,
    /// Extension: devices on other machines, reached through MPI.
    OL_PLATFORM_BACKEND_MPI = 0x10000,
    OL_PLATFORM_BACKEND_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_platform_backend_t: OL_PLATFORM_BACKEND_UNKNOWN, OL_PLATFORM_BACKEND_CUDA,
    OL_PLATFORM_BACKEND_AMDGPU, OL_PLATFORM_BACKEND_LEVEL_ZERO, OL_PLATFORM_BACKEND_HOST,
    OL_PLATFORM_BACKEND_MPI; OL_PLATFORM_BACKEND_LAST);
pub type ol_platform_backend_raw_t = u32;

/// Keys of `olGetPlatformInfo`; the value's type is in brackets.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_platform_info_t {
    /// [char[]] the platform's name
    OL_PLATFORM_INFO_NAME = 0,
    /// [char[]] the vendor's name
    OL_PLATFORM_INFO_VENDOR_NAME = 1,
    /// [char[]] the version of the platform
    OL_PLATFORM_INFO_VERSION = 2,
    /// [ol_platform_backend_t] the native backend
    OL_PLATFORM_INFO_BACKEND = 3,
    OL_PLATFORM_INFO_LAST = 4,
    OL_PLATFORM_INFO_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_platform_info_t: OL_PLATFORM_INFO_NAME, OL_PLATFORM_INFO_VENDOR_NAME,
    OL_PLATFORM_INFO_VERSION, OL_PLATFORM_INFO_BACKEND; OL_PLATFORM_INFO_LAST);
pub type ol_platform_info_raw_t = u32;

/// Arguments of `olInitWithArgs` (extension). Initialise with `OL_INIT_ARGS_INIT`.
#[repr(C)]
pub struct ol_init_args_t {
    /// `sizeof(ol_init_args_t)`, so the struct can grow.
    pub Size: usize,
    /// Number of entries in `Platforms`; 0 means every backend.
    pub NumPlatforms: u32,
    /// The backends to initialise (the host platform is always present).
    pub Platforms: *const ol_platform_backend_raw_t,
}

// ---- Devices -----------------------------------------------------------------------

/// Device types.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_device_type_t {
    /// whatever the runtime prefers
    OL_DEVICE_TYPE_DEFAULT = 0,
    /// every type
    OL_DEVICE_TYPE_ALL = 1,
    /// a GPU
    OL_DEVICE_TYPE_GPU = 2,
    /// a CPU
    OL_DEVICE_TYPE_CPU = 3,
    /// the host
    OL_DEVICE_TYPE_HOST = 4,
    OL_DEVICE_TYPE_LAST = 5,
    OL_DEVICE_TYPE_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_device_type_t: OL_DEVICE_TYPE_DEFAULT, OL_DEVICE_TYPE_ALL, OL_DEVICE_TYPE_GPU,
    OL_DEVICE_TYPE_CPU, OL_DEVICE_TYPE_HOST; OL_DEVICE_TYPE_LAST);

/// Keys of `olGetDeviceInfo`; the value's type is in brackets.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_device_info_t {
    /// [ol_device_type_t] type of the device
    OL_DEVICE_INFO_TYPE = 0,
    /// [ol_platform_handle_t] the platform of the device
    OL_DEVICE_INFO_PLATFORM = 1,
    /// [char[]] device name
    OL_DEVICE_INFO_NAME = 2,
    /// [char[]] device user-facing marketing name
    OL_DEVICE_INFO_PRODUCT_NAME = 3,
    /// [char[]] an identifier stable across runs on the same machine
    OL_DEVICE_INFO_UID = 4,
    /// [char[]] device vendor
    OL_DEVICE_INFO_VENDOR = 5,
    /// [char[]] driver version
    OL_DEVICE_INFO_DRIVER_VERSION = 6,
    /// [uint32_t] the most work-items in one work-group
    OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE = 7,
    /// [ol_dimensions_t] the most work-items in one work-group per dimension
    OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION = 8,
    /// [uint32_t] the most work-items in one launch
    OL_DEVICE_INFO_MAX_WORK_SIZE = 9,
    /// [ol_dimensions_t] the most work-items in one launch per dimension
    OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION = 10,
    /// [uint32_t] the PCI vendor id (0 where there is none)
    OL_DEVICE_INFO_VENDOR_ID = 11,
    /// [uint32_t] compute units (logical cores on the host)
    OL_DEVICE_INFO_NUM_COMPUTE_UNITS = 12,
    /// [uint32_t] the highest clock frequency, in MHz
    OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY = 13,
    /// [uint32_t] the memory clock, in MHz
    OL_DEVICE_INFO_MEMORY_CLOCK_RATE = 14,
    /// [uint32_t] bits in an address
    OL_DEVICE_INFO_ADDRESS_BITS = 15,
    /// [uint64_t] the largest single allocation, in bytes
    OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE = 16,
    /// [uint64_t] the device's memory, in bytes
    OL_DEVICE_INFO_GLOBAL_MEM_SIZE = 17,
    /// [uint64_t] local (shared) memory per work-group, in bytes
    OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE = 18,
    /// [ol_device_fp_capability_flags_t] single precision floating point capability
    OL_DEVICE_INFO_SINGLE_FP_CONFIG = 19,
    /// [ol_device_fp_capability_flags_t] double precision floating point capability
    OL_DEVICE_INFO_DOUBLE_FP_CONFIG = 20,
    /// [ol_device_fp_capability_flags_t] half precision floating point capability
    OL_DEVICE_INFO_HALF_FP_CONFIG = 21,
    /// [uint32_t] native vector width for char
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR = 22,
    /// [uint32_t] native vector width for short
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT = 23,
    /// [uint32_t] native vector width for int
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT = 24,
    /// [uint32_t] native vector width for long
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG = 25,
    /// [uint32_t] native vector width for float
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT = 26,
    /// [uint32_t] native vector width for double
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE = 27,
    /// [uint32_t] native vector width for half (0: no half arithmetic)
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF = 28,
    OL_DEVICE_INFO_LAST = 29,
    /// Extension. [uint32_t] lanes of a SIMD unit (warp or wavefront size; 1 on the host)
    OL_DEVICE_INFO_NUM_LANES = 0x10000,
    /// Extension. [void *] the vendor's device handle: a CUdevice (the driver's ordinal)
    /// on CUDA, an hsa_agent_t's handle on AMDGPU; OL_ERRC_UNSUPPORTED elsewhere
    OL_DEVICE_INFO_NATIVE_HANDLE = 0x10001,
    /// Extension. [void *] the vendor's context the device's work runs in: the primary
    /// CUcontext on CUDA; OL_ERRC_UNSUPPORTED elsewhere
    OL_DEVICE_INFO_NATIVE_CONTEXT = 0x10002,
    OL_DEVICE_INFO_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_device_info_t: OL_DEVICE_INFO_TYPE, OL_DEVICE_INFO_PLATFORM,
    OL_DEVICE_INFO_NAME, OL_DEVICE_INFO_PRODUCT_NAME, OL_DEVICE_INFO_UID, OL_DEVICE_INFO_VENDOR,
    OL_DEVICE_INFO_DRIVER_VERSION, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE,
    OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION, OL_DEVICE_INFO_MAX_WORK_SIZE,
    OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION, OL_DEVICE_INFO_VENDOR_ID,
    OL_DEVICE_INFO_NUM_COMPUTE_UNITS, OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY,
    OL_DEVICE_INFO_MEMORY_CLOCK_RATE, OL_DEVICE_INFO_ADDRESS_BITS,
    OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, OL_DEVICE_INFO_GLOBAL_MEM_SIZE,
    OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE, OL_DEVICE_INFO_SINGLE_FP_CONFIG,
    OL_DEVICE_INFO_DOUBLE_FP_CONFIG, OL_DEVICE_INFO_HALF_FP_CONFIG,
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT,
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG,
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE,
    OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF, OL_DEVICE_INFO_NUM_LANES, OL_DEVICE_INFO_NATIVE_HANDLE,
    OL_DEVICE_INFO_NATIVE_CONTEXT; OL_DEVICE_INFO_LAST);
pub type ol_device_info_raw_t = u32;

/// Floating point capabilities of a device, combined in `ol_device_fp_capability_flags_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_device_fp_capability_flag_t {
    /// division and square root round correctly
    OL_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT = 1,
    /// can round to nearest even
    OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST = 2,
    /// can round toward zero
    OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO = 4,
    /// can round toward +/- infinity
    OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF = 8,
    /// has infinities and NaNs
    OL_DEVICE_FP_CAPABILITY_FLAG_INF_NAN = 16,
    /// has denormal numbers
    OL_DEVICE_FP_CAPABILITY_FLAG_DENORM = 32,
    /// has fused multiply-add
    OL_DEVICE_FP_CAPABILITY_FLAG_FMA = 64,
    /// arithmetic is done in software
    OL_DEVICE_FP_CAPABILITY_FLAG_SOFT_FLOAT = 128,
    OL_DEVICE_FP_CAPABILITY_FLAG_LAST = 256,
    OL_DEVICE_FP_CAPABILITY_FLAG_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_device_fp_capability_flag_t:
    OL_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT,
    OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST, OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO,
    OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF, OL_DEVICE_FP_CAPABILITY_FLAG_INF_NAN,
    OL_DEVICE_FP_CAPABILITY_FLAG_DENORM, OL_DEVICE_FP_CAPABILITY_FLAG_FMA,
    OL_DEVICE_FP_CAPABILITY_FLAG_SOFT_FLOAT; OL_DEVICE_FP_CAPABILITY_FLAG_LAST);

/// A bitfield of `ol_device_fp_capability_flag_t`.
pub type ol_device_fp_capability_flags_t = u32;

/// Called once per platform (extension); return false to stop.
pub type ol_platform_iterate_cb_t =
    Option<unsafe extern "C" fn(Platform: ol_platform_handle_t, UserData: *mut c_void) -> bool>;
/// Called once per device; return false to stop.
pub type ol_device_iterate_cb_t =
    Option<unsafe extern "C" fn(Device: ol_device_handle_t, UserData: *mut c_void) -> bool>;

// ---- Memory ------------------------------------------------------------------------

/// Kinds of memory `olMemAlloc` makes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_alloc_type_t {
    /// Host memory the device can read and write
    OL_ALLOC_TYPE_HOST = 0,
    /// Memory of the device
    OL_ALLOC_TYPE_DEVICE = 1,
    /// Memory visible to the host and the device, migrated on demand
    OL_ALLOC_TYPE_MANAGED = 2,
    OL_ALLOC_TYPE_LAST = 3,
    OL_ALLOC_TYPE_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_alloc_type_t: OL_ALLOC_TYPE_HOST, OL_ALLOC_TYPE_DEVICE, OL_ALLOC_TYPE_MANAGED;
    OL_ALLOC_TYPE_LAST);
pub type ol_alloc_type_raw_t = u32;

/// Keys of `olGetMemInfo`; the value's type is in brackets.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_mem_info_t {
    /// [ol_device_handle_t] the device the allocation was made on
    OL_MEM_INFO_DEVICE = 0,
    /// [void *] the start of the allocation
    OL_MEM_INFO_BASE = 1,
    /// [size_t] the size requested from olMemAlloc
    OL_MEM_INFO_SIZE = 2,
    /// [ol_alloc_type_t] the type of the allocation
    OL_MEM_INFO_TYPE = 3,
    OL_MEM_INFO_LAST = 4,
    OL_MEM_INFO_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_mem_info_t: OL_MEM_INFO_DEVICE, OL_MEM_INFO_BASE, OL_MEM_INFO_SIZE,
    OL_MEM_INFO_TYPE; OL_MEM_INFO_LAST);
pub type ol_mem_info_raw_t = u32;

/// Flags of `olMemRegister`; reserved, must be 0 in this version.
pub type ol_memory_register_flags_t = u32;

// ---- Queues and events -------------------------------------------------------------

/// Keys of `olGetQueueInfo`; the value's type is in brackets.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_queue_info_t {
    /// [ol_device_handle_t] the queue's device
    OL_QUEUE_INFO_DEVICE = 0,
    /// [bool] true when no enqueued work is pending
    OL_QUEUE_INFO_EMPTY = 1,
    OL_QUEUE_INFO_LAST = 2,
    /// Extension. [void *] the vendor's queue the queue's work goes to: a CUstream on CUDA,
    /// an hsa_queue_t * on AMDGPU; OL_ERRC_UNSUPPORTED elsewhere. Work the caller puts on
    /// it directly comes after the device work enqueued so far (not host functions)
    OL_QUEUE_INFO_NATIVE_HANDLE = 0x10000,
    OL_QUEUE_INFO_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_queue_info_t: OL_QUEUE_INFO_DEVICE, OL_QUEUE_INFO_EMPTY,
    OL_QUEUE_INFO_NATIVE_HANDLE; OL_QUEUE_INFO_LAST);
pub type ol_queue_info_raw_t = u32;

/// Keys of `olGetEventInfo`; the value's type is in brackets.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_event_info_t {
    /// [ol_queue_handle_t] the queue the event was created on
    OL_EVENT_INFO_QUEUE = 0,
    /// [bool] true once all work before the event is done
    OL_EVENT_INFO_IS_COMPLETE = 1,
    OL_EVENT_INFO_LAST = 2,
    OL_EVENT_INFO_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_event_info_t: OL_EVENT_INFO_QUEUE, OL_EVENT_INFO_IS_COMPLETE;
    OL_EVENT_INFO_LAST);
pub type ol_event_info_raw_t = u32;

/// A host function run in queue order by `olLaunchHostFunction`.
pub type ol_host_function_cb_t = Option<unsafe extern "C" fn(UserData: *mut c_void)>;

// ---- Programs, symbols, kernels ----------------------------------------------------

/// Kinds of symbols of a program.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_symbol_kind_t {
    /// a kernel
    OL_SYMBOL_KIND_KERNEL = 0,
    /// a global variable
    OL_SYMBOL_KIND_GLOBAL_VARIABLE = 1,
    OL_SYMBOL_KIND_LAST = 2,
    OL_SYMBOL_KIND_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_symbol_kind_t: OL_SYMBOL_KIND_KERNEL, OL_SYMBOL_KIND_GLOBAL_VARIABLE;
    OL_SYMBOL_KIND_LAST);
pub type ol_symbol_kind_raw_t = u32;

/// Keys of `olGetSymbolInfo`; the value's type is in brackets.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_symbol_info_t {
    /// [ol_symbol_kind_t] the kind of this symbol
    OL_SYMBOL_INFO_KIND = 0,
    /// [void *] a global variable's address on its device
    OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS = 1,
    /// [size_t] a global variable's size in bytes
    OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE = 2,
    OL_SYMBOL_INFO_LAST = 3,
    /// Extension. [char[]] the symbol's name
    OL_SYMBOL_INFO_NAME = 0x10000,
    OL_SYMBOL_INFO_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_symbol_info_t: OL_SYMBOL_INFO_KIND, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
    OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, OL_SYMBOL_INFO_NAME; OL_SYMBOL_INFO_LAST);
pub type ol_symbol_info_raw_t = u32;

/// Size-related arguments of a kernel launch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ol_kernel_launch_size_args_t {
    /// Number of work dimensions, 1 to 3.
    pub Dimensions: usize,
    /// Number of work groups in each dimension.
    pub NumGroups: ol_dimensions_t,
    /// Size of a work group in each dimension.
    pub GroupSize: ol_dimensions_t,
    /// Size of dynamic shared memory in bytes, per work-group.
    pub DynSharedMemory: usize,
}

/// Extension: kinds of launch properties of `olLaunchKernelWithProperties`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ol_kernel_launch_prop_type_t {
    /// Ends the property array; `data` is ignored.
    OL_KERNEL_LAUNCH_PROP_TYPE_NONE = 0,
    /// `data` points to a `bool`: launch cooperatively (all groups resident at once).
    OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE = 1,
    OL_KERNEL_LAUNCH_PROP_TYPE_LAST = 2,
    /// Extension. `data` points to a `bool`: `ArgumentsData` is the kernel's parameters
    /// laid out as a C struct (what clang's kernel-language launches pass), whatever the
    /// device's own convention. A host-device kernel without an `OL_HOST_KERNEL` marker
    /// is then called with the platform's C calling convention, from the parameter types
    /// its mangled name gives (and the program's debug information, for classes by value
    /// and `extern "C"` kernels); a launch whose types cannot be known is refused with
    /// `OL_ERRC_UNSUPPORTED`. GPU kernels take their arguments so in any case
    OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS = 0x10000,
    OL_KERNEL_LAUNCH_PROP_TYPE_FORCE_UINT32 = 0x7fffffff,
}
raw_values!(named ol_kernel_launch_prop_type_t: OL_KERNEL_LAUNCH_PROP_TYPE_NONE,
    OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE, OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS;
    OL_KERNEL_LAUNCH_PROP_TYPE_LAST);
pub type ol_kernel_launch_prop_type_raw_t = u32;

/// Extension: an optional property of a launch; an array of them ends with
/// `OL_KERNEL_LAUNCH_PROP_END`.
#[repr(C)]
pub struct ol_kernel_launch_prop_t {
    pub r#type: ol_kernel_launch_prop_type_raw_t,
    pub data: *mut c_void,
}
