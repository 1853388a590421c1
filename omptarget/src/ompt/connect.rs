//! The connection with libomp, as LLVM's libomptarget makes it: libomptarget hands
//! `ompt_libomp_connect` its initializer; libomp calls it, only when the tool it started
//! registered `device_initialize`, with a lookup of the tool's callbacks and of the task
//! data of the construct's task. The callbacks read then stand for the program's life:
//! as with LLVM's library, the devices' finalisation after libomp ended the tool reaches
//! it too.

use crate::ompt::types::{
    event, Data, DataOpEmiFn, DataOpFn, DeviceFinalizeFn, DeviceInitializeFn, DeviceLoadFn,
    DeviceUnloadFn, GetCallback, GetTaskData, InterfaceFn, Lookup, StartToolResult, SubmitEmiFn,
    SubmitFn, TargetEmiFn, TargetFn,
};
use parking_lot::Mutex;
use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

/// What the tool registered, and libomp's task-data functions.
pub struct Callbacks {
    pub target_emi: Option<TargetEmiFn>,
    pub target: Option<TargetFn>,
    pub data_op_emi: Option<DataOpEmiFn>,
    pub data_op: Option<DataOpFn>,
    pub submit_emi: Option<SubmitEmiFn>,
    pub submit: Option<SubmitFn>,
    pub device_initialize: Option<DeviceInitializeFn>,
    pub device_finalize: Option<DeviceFinalizeFn>,
    pub device_load: Option<DeviceLoadFn>,
    pub device_unload: Option<DeviceUnloadFn>,
    pub get_task_data: Option<GetTaskData>,
    pub get_target_task_data: Option<GetTaskData>,
    /// libomp's lookup, handed on to what connects to this library in turn.
    pub lookup: Lookup,
}

/// The tool's callbacks while a tool is connected, NULL otherwise (before libomp's call,
/// without a tool): what every event checks first.
static ACTIVE: AtomicPtr<Callbacks> = AtomicPtr::new(std::ptr::null_mut());

/// The tool's callbacks while a tool is connected; `None` (one atomic load) otherwise.
#[inline]
pub fn callbacks() -> Option<&'static Callbacks> {
    // SAFETY: a non-NULL pointer is the leaked table `initialize` stored, never freed.
    unsafe { ACTIVE.load(Ordering::Acquire).as_ref() }
}

/// Connects with libomp once (at the first registration, before any device exists, so
/// that the tool sees every device initialised). Without libomp's entry point (a
/// program that does not link libomp) there is no tool to connect.
pub fn connect() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: looking a symbol up in the process's global scope.
        let entry = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"ompt_libomp_connect".as_ptr()) };
        if entry.is_null() {
            return;
        }
        // SAFETY: libomp's `void ompt_libomp_connect(ompt_start_tool_result_t *)`.
        let connect: unsafe extern "C" fn(*mut StartToolResult) =
            unsafe { std::mem::transmute(entry) };
        // libomp keeps the result to call its finalizer at the end: it lives forever.
        let result = Box::leak(Box::new(StartToolResult {
            initialize: Some(initialize),
            finalize: Some(finalize),
            tool_data: Data::NONE,
        }));
        // SAFETY: a valid result whose functions stay loaded with this library.
        unsafe { connect(result) };
    });
}

/// libomp's call: reads the tool's device callbacks through `lookup`.
unsafe extern "C" fn initialize(lookup: Lookup, _initial_device: c_int, _tool: *mut Data) -> c_int {
    let read = std::panic::catch_unwind(|| {
        // SAFETY: libomp's lookup, asked for the functions it documents.
        let get_callback: Option<GetCallback> = unsafe { function(lookup, c"ompt_get_callback") };
        let get_callback = get_callback?;
        let callback = |which: c_int| -> Option<InterfaceFn> {
            let mut found = None;
            // SAFETY: libomp writes the registered callback (or nothing) into `found`.
            let set = unsafe { get_callback(which, &mut found) };
            if set == 0 {
                None
            } else {
                found
            }
        };
        // SAFETY (each cast): a callback registered for event `which` has that event's
        // type, as OMPT requires of the tool.
        Some(unsafe {
            Callbacks {
                target_emi: callback(event::TARGET_EMI).map(|f| std::mem::transmute(f)),
                target: callback(event::TARGET).map(|f| std::mem::transmute(f)),
                data_op_emi: callback(event::TARGET_DATA_OP_EMI).map(|f| std::mem::transmute(f)),
                data_op: callback(event::TARGET_DATA_OP).map(|f| std::mem::transmute(f)),
                submit_emi: callback(event::TARGET_SUBMIT_EMI).map(|f| std::mem::transmute(f)),
                submit: callback(event::TARGET_SUBMIT).map(|f| std::mem::transmute(f)),
                device_initialize: callback(event::DEVICE_INITIALIZE)
                    .map(|f| std::mem::transmute(f)),
                device_finalize: callback(event::DEVICE_FINALIZE).map(|f| std::mem::transmute(f)),
                device_load: callback(event::DEVICE_LOAD).map(|f| std::mem::transmute(f)),
                device_unload: callback(event::DEVICE_UNLOAD).map(|f| std::mem::transmute(f)),
                get_task_data: function(lookup, c"ompt_get_task_data"),
                get_target_task_data: function(lookup, c"ompt_get_target_task_data"),
                lookup,
            }
        })
    });
    if let Ok(Some(found)) = read {
        // Kept for the program's life: a callback may run while libomp finalizes.
        let _ = ACTIVE.compare_exchange(
            std::ptr::null_mut(),
            Box::into_raw(Box::new(found)),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
    0
}

/// libomp's call at its end, before the tool's finalizer: the trace buffers are
/// delivered and tracing ends; what connected here is finalized too.
unsafe extern "C" fn finalize(_tool: *mut Data) {
    // What the devices traced reaches the tool before it is finalised.
    let _ = std::panic::catch_unwind(crate::ompt::trace_device::finish_all);
    for Below(result) in std::mem::take(&mut *CONNECTED.lock()) {
        if let Some(finalize) = result.finalize {
            // SAFETY: the finalizer that library gave with its result.
            unsafe { finalize(std::ptr::null_mut()) };
        }
    }
}

/// A start result handed to `ompt_libomptarget_connect` (by LLVM 19's plugins).
struct Below(&'static StartToolResult);
// SAFETY: the result is only read, and lives for the program.
unsafe impl Send for Below {}

static CONNECTED: Mutex<Vec<Below>> = Mutex::new(Vec::new());

/// `ompt_libomptarget_connect`: a library below this one asks for the tool's callbacks,
/// as LLVM 19's plugins ask libomptarget: with a tool connected, its initializer gets
/// libomp's lookup and its finalizer runs when this library's does.
///
/// # Safety
/// `result` is NULL or a start result that lives as long as the program.
pub unsafe fn connect_below(result: *const StartToolResult) {
    let (Some(callbacks), Some(result)) = (callbacks(), unsafe { result.as_ref() }) else {
        return;
    };
    if let Some(initialize) = result.initialize {
        // SAFETY: that library's initializer, given libomp's lookup as LLVM gives it.
        unsafe { initialize(callbacks.lookup, 0, std::ptr::null_mut()) };
        CONNECTED.lock().push(Below(result));
    }
}

/// The function `name` of `lookup`, as the type the caller expects.
///
/// # Safety
/// `F` is the type of the function `name` names.
unsafe fn function<F: Copy>(lookup: Lookup, name: &CStr) -> Option<F> {
    // SAFETY: the lookup takes a NUL-terminated name.
    let found = unsafe { lookup(name.as_ptr()) }?;
    // SAFETY: `F` is a function pointer type of the same size (the caller's promise).
    Some(unsafe { std::mem::transmute_copy::<InterfaceFn, F>(&found) })
}
