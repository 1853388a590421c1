//! The C types of OMPT's device interface (`omp-tools.h`, OpenMP 5.1), as libomp and
//! tools lay them out.

use std::ffi::{c_char, c_int, c_void};

/// `ompt_id_t`.
pub type Id = u64;

/// `ompt_data_t`: a tool's word, as an integer or a pointer.
#[repr(C)]
#[derive(Clone, Copy)]
pub union Data {
    pub value: u64,
    pub ptr: *mut c_void,
}

impl Data {
    pub const NONE: Data = Data { value: 0 };
}

/// `ompt_scope_endpoint_t`.
pub const SCOPE_BEGIN: c_int = 1;
pub const SCOPE_END: c_int = 2;

/// `ompt_target_t`.
pub mod target_kind {
    use std::ffi::c_int;
    pub const TARGET: c_int = 1;
    pub const ENTER_DATA: c_int = 2;
    pub const EXIT_DATA: c_int = 3;
    pub const UPDATE: c_int = 4;
}

/// `ompt_target_data_op_t`.
pub mod data_op {
    use std::ffi::c_int;
    pub const ALLOC: c_int = 1;
    pub const TRANSFER_TO_DEVICE: c_int = 2;
    pub const TRANSFER_FROM_DEVICE: c_int = 3;
    pub const DELETE: c_int = 4;
    pub const ASSOCIATE: c_int = 5;
    pub const DISASSOCIATE: c_int = 6;
}

/// `ompt_callbacks_t`: the device events.
pub mod event {
    use std::ffi::c_int;
    pub const TARGET: c_int = 8;
    pub const TARGET_DATA_OP: c_int = 9;
    pub const TARGET_SUBMIT: c_int = 10;
    pub const DEVICE_INITIALIZE: c_int = 12;
    pub const DEVICE_FINALIZE: c_int = 13;
    pub const DEVICE_LOAD: c_int = 14;
    pub const DEVICE_UNLOAD: c_int = 15;
    pub const TARGET_EMI: c_int = 33;
    pub const TARGET_DATA_OP_EMI: c_int = 34;
    pub const TARGET_SUBMIT_EMI: c_int = 35;
}

/// `ompt_interface_fn_t`: what a lookup returns, cast by the caller.
pub type InterfaceFn = unsafe extern "C" fn();
/// `ompt_function_lookup_t`.
pub type Lookup = unsafe extern "C" fn(name: *const c_char) -> Option<InterfaceFn>;
/// `ompt_initialize_t`, `ompt_finalize_t`.
pub type Initialize = unsafe extern "C" fn(Lookup, c_int, *mut Data) -> c_int;
pub type Finalize = unsafe extern "C" fn(*mut Data);

/// `ompt_start_tool_result_t`.
#[repr(C)]
pub struct StartToolResult {
    pub initialize: Option<Initialize>,
    pub finalize: Option<Finalize>,
    pub tool_data: Data,
}

/// libomp's functions handed out by its lookup.
pub type GetCallback = unsafe extern "C" fn(c_int, *mut Option<InterfaceFn>) -> c_int;
pub type GetTaskData = unsafe extern "C" fn() -> *mut Data;

/// The callbacks, `ompt_callback_<name>_t`.
pub type TargetEmiFn =
    unsafe extern "C" fn(c_int, c_int, c_int, *mut Data, *mut Data, *mut Data, *const c_void);
pub type TargetFn = unsafe extern "C" fn(c_int, c_int, c_int, *mut Data, Id, *const c_void);
pub type DataOpEmiFn = unsafe extern "C" fn(
    c_int,
    *mut Data,
    *mut Data,
    *mut Id,
    c_int,
    *mut c_void,
    c_int,
    *mut c_void,
    c_int,
    usize,
    *const c_void,
);
pub type DataOpFn = unsafe extern "C" fn(
    Id,
    Id,
    c_int,
    *mut c_void,
    c_int,
    *mut c_void,
    c_int,
    usize,
    *const c_void,
);
pub type SubmitEmiFn = unsafe extern "C" fn(c_int, *mut Data, *mut Id, u32);
pub type SubmitFn = unsafe extern "C" fn(Id, Id, u32);
pub type DeviceInitializeFn =
    unsafe extern "C" fn(c_int, *const c_char, *mut c_void, Option<Lookup>, *const c_char);
pub type DeviceFinalizeFn = unsafe extern "C" fn(c_int);
pub type DeviceLoadFn = unsafe extern "C" fn(
    c_int,
    *const c_char,
    i64,
    *mut c_void,
    usize,
    *mut c_void,
    *mut c_void,
    u64,
);
pub type DeviceUnloadFn = unsafe extern "C" fn(c_int, u64);
