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

/// `ompt_set_result_t`: what `ompt_set_trace_ompt` answers.
pub mod set_result {
    use std::ffi::c_int;
    pub const ERROR: c_int = 0;
    pub const NEVER: c_int = 1;
    pub const ALWAYS: c_int = 5;
}

/// `ompt_record_t`: the kind of a trace record a cursor points at.
pub mod record_kind {
    use std::ffi::c_int;
    pub const OMPT: c_int = 1;
    pub const INVALID: c_int = 3;
}

/// `ompt_device_time_t`.
pub type DeviceTime = u64;

/// `ompt_record_target_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TargetRecord {
    pub kind: c_int,
    pub endpoint: c_int,
    pub device_num: c_int,
    pub task_id: Id,
    pub target_id: Id,
    pub codeptr_ra: *const c_void,
}

/// `ompt_record_target_data_op_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DataOpRecord {
    pub host_op_id: Id,
    pub optype: c_int,
    pub src_addr: *mut c_void,
    pub src_device_num: c_int,
    pub dest_addr: *mut c_void,
    pub dest_device_num: c_int,
    pub bytes: usize,
    pub end_time: DeviceTime,
    pub codeptr_ra: *const c_void,
}

/// `ompt_record_target_kernel_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct KernelRecord {
    pub host_op_id: Id,
    pub requested_num_teams: u32,
    pub granted_num_teams: u32,
    pub end_time: DeviceTime,
}

/// The union of `ompt_record_ompt_t`: the device kinds, at the size of its largest
/// member in `omp-tools.h` (72 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub union RecordBody {
    pub target: TargetRecord,
    pub data_op: DataOpRecord,
    pub kernel: KernelRecord,
    pub size: [u64; 9],
}

/// `ompt_record_ompt_t`: one trace record as a tool reads it from its buffer.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Record {
    /// The event (`event::TARGET`, `TARGET_DATA_OP` or `TARGET_SUBMIT`).
    pub kind: c_int,
    pub time: DeviceTime,
    pub thread_id: Id,
    pub target_id: Id,
    pub body: RecordBody,
}

// The layout libomp's `omp-tools.h` gives these (clang 19 and 22 alike).
const _: () = assert!(std::mem::size_of::<TargetRecord>() == 40);
const _: () = assert!(std::mem::size_of::<DataOpRecord>() == 72);
const _: () = assert!(std::mem::size_of::<KernelRecord>() == 24);
const _: () = assert!(std::mem::size_of::<Record>() == 104);
const _: () = assert!(std::mem::offset_of!(Record, body) == 32);

/// The tool's buffer callbacks (`ompt_callback_buffer_request_t`, `_complete_t`).
pub type BufferRequestFn = unsafe extern "C" fn(c_int, *mut *mut c_void, *mut usize);
pub type BufferCompleteFn = unsafe extern "C" fn(c_int, *mut c_void, usize, u64, c_int);
