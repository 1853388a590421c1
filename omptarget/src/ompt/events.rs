//! The events of constructs, data operations, kernel submissions and devices, delivered
//! to the tool in LLVM's order and with LLVM's arguments (its `OpenMP/OMPT/Callback.cpp`:
//! an EMI callback gets a begin and an end around the operation, the older form one call
//! before it, with ids this library makes).
//!
//! A tool may call the OpenMP API from a callback, and most of that API takes the device
//! registry's lock: an event that happens while this thread holds it (an allocation while
//! mapping, a device's initialisation) waits in this thread's queue, and is delivered
//! when the lock is let go, before anything later on the thread.

use crate::ompt::code_address;
use crate::ompt::connect::{callbacks, Callbacks};
use crate::ompt::trace_device::{self, kind, Stamp, TraceDevice};
use crate::ompt::trace_records::{self, DataOp};
use crate::ompt::types::{
    data_op, target_kind, Data, DataOpEmiFn, Id, InterfaceFn, SCOPE_BEGIN, SCOPE_END,
};
use crate::plugin::ol::{Device, Queue};
use std::cell::{Cell, RefCell, UnsafeCell};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// What a thread's current construct hands each event: LLVM's `RegionInterface`.
struct Region {
    task_data: *mut Data,
    target_task_data: *mut Data,
    target_data: Data,
    host_op_id: Id,
    code: *const c_void,
    /// The construct's id in trace records (0: none).
    trace_id: Id,
}

const NO_REGION: Region = Region {
    task_data: std::ptr::null_mut(),
    target_task_data: std::ptr::null_mut(),
    target_data: Data::NONE,
    host_op_id: 0,
    code: std::ptr::null(),
    trace_id: 0,
};

/// An event waiting for the registry's lock to be let go.
enum Event {
    Op(Op),
    DeviceInitialize(c_int, CString, &'static TraceDevice),
    DeviceLoad(c_int, usize, usize, u64),
    DeviceFinalize(c_int),
    DeviceUnload(c_int, u64),
}

/// One data operation: `dst_before` is the destination the begin names (an allocation's
/// is not known yet), `dst` the one the end names.
#[derive(Clone, Copy)]
struct Op {
    kind: c_int,
    /// The device whose trace records the operation.
    device: c_int,
    src: usize,
    src_device: c_int,
    dst_before: usize,
    dst: usize,
    dst_device: c_int,
    bytes: usize,
}

thread_local! {
    static REGION: UnsafeCell<Region> = const { UnsafeCell::new(NO_REGION) };
    static HELD: Cell<u32> = const { Cell::new(0) };
    // Without drop glue, so that it outlives the thread-local destructors glibc runs
    // before the atexit handlers in which the devices are finalised (it is empty
    // whenever a thread can end, so nothing leaks).
    static WAITING: ManuallyDrop<RefCell<Vec<Event>>> =
        const { ManuallyDrop::new(RefCell::new(Vec::new())) };
}

/// The ids this library makes (target and operation ids of the older callbacks).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
fn new_id() -> Id {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The initial device's number (`omp_get_initial_device`), as the events name the host.
static INITIAL_DEVICE: AtomicI32 = AtomicI32::new(0);
pub fn set_initial_device(number: usize) {
    INITIAL_DEVICE.store(number as c_int, Ordering::Relaxed);
}
fn host() -> c_int {
    INITIAL_DEVICE.load(Ordering::Relaxed)
}
/// LLVM's `omp_initial_device` (-1): how a deletion names its missing destination.
const NO_DEVICE: c_int = -1;

/// This thread's region state. Events run on one thread at a time per state; a callback
/// reads and writes it through the pointers it is given, never while a reference is held.
fn region() -> *mut Region {
    REGION.try_with(|r| r.get()).unwrap_or(std::ptr::null_mut())
}

/// How many registry locks this thread holds (0 once its thread-locals are gone, at
/// exit: then nothing waits).
fn held() -> u32 {
    HELD.try_with(|h| h.get()).unwrap_or(0)
}

/// The registry's lock is taken: events wait until `let_go`.
#[inline]
pub fn hold() {
    if callbacks().is_some() {
        let _ = HELD.try_with(|h| h.set(h.get() + 1));
    }
}

/// The registry's lock was let go: at the outermost, the waiting events are delivered.
#[inline]
pub fn let_go() {
    if let Some(cb) = callbacks() {
        let depth = HELD
            .try_with(|h| {
                let depth = h.get().saturating_sub(1);
                h.set(depth);
                depth
            })
            .unwrap_or(0);
        if depth == 0 {
            deliver_waiting(cb);
            deliver_trace();
        }
    }
}

fn deliver_waiting(cb: &Callbacks) {
    loop {
        let events = WAITING
            .try_with(|w| std::mem::take(&mut *w.borrow_mut()))
            .unwrap_or_default();
        if events.is_empty() {
            return;
        }
        for event in events {
            deliver(cb, event);
        }
    }
}

/// Fills the tool's trace buffers that are due, unless the registry's lock is held (its
/// callbacks may call the OpenMP API).
fn deliver_trace() {
    if held() == 0 {
        trace_device::deliver_due();
    }
}

/// Delivers `event` now, or queues it while the registry's lock is held.
fn emit(cb: &Callbacks, event: Event) {
    if held() > 0 {
        let _ = WAITING.try_with(|w| w.borrow_mut().push(event));
    } else {
        deliver_waiting(cb);
        deliver(cb, event);
    }
}

fn deliver(cb: &Callbacks, event: Event) {
    match event {
        Event::Op(op) => {
            op_begin(cb, &op);
            op_end(cb, &op);
        }
        Event::DeviceInitialize(number, kind, traced) => {
            if let Some(f) = cb.device_initialize {
                // SAFETY: the tool's callback with OMPT's arguments; the strings live
                // during the call, the device handle for the program's.
                unsafe {
                    f(
                        number,
                        kind.as_ptr(),
                        traced.handle(),
                        Some(device_lookup),
                        std::ptr::null(),
                    )
                };
            }
        }
        Event::DeviceLoad(number, image, bytes, module) => {
            if let Some(f) = cb.device_load {
                // SAFETY: as above; the image is the program's, loaded where it lies.
                unsafe {
                    f(
                        number,
                        std::ptr::null(),
                        0,
                        std::ptr::null_mut(),
                        bytes,
                        image as *mut c_void,
                        std::ptr::null_mut(),
                        module,
                    )
                };
            }
        }
        Event::DeviceFinalize(number) => {
            if let Some(f) = cb.device_finalize {
                // SAFETY: as above.
                unsafe { f(number) };
            }
        }
        Event::DeviceUnload(number, module) => {
            if let Some(f) = cb.device_unload {
                // SAFETY: as above.
                unsafe { f(number, module) };
            }
        }
    }
}

/// The lookup a device's initialisation hands the tool: the tracing functions.
unsafe extern "C" fn device_lookup(name: *const c_char) -> Option<InterfaceFn> {
    if name.is_null() {
        return None;
    }
    // SAFETY: the tool passes a NUL-terminated name.
    crate::ompt::trace_entry::lookup(unsafe { CStr::from_ptr(name) })
}

/// The EMI data-op callback `f` at `endpoint`, naming `dst` as the destination.
///
/// # Safety
/// `r` is this thread's region state, no reference to it held.
unsafe fn op_emi(f: DataOpEmiFn, endpoint: c_int, r: *mut Region, op: &Op, dst: usize) {
    // SAFETY: the caller's promise; the tool's callback with OMPT's arguments, pointers
    // into the region state.
    unsafe {
        f(
            endpoint,
            (*r).target_task_data,
            &raw mut (*r).target_data,
            &raw mut (*r).host_op_id,
            op.kind,
            op.src as *mut c_void,
            op.src_device,
            dst as *mut c_void,
            op.dst_device,
            op.bytes,
            (*r).code,
        )
    }
}

fn op_begin(cb: &Callbacks, op: &Op) {
    let r = region();
    if r.is_null() {
        return;
    }
    // SAFETY: this thread's region state; the callback gets pointers into it.
    unsafe {
        if let Some(f) = cb.data_op_emi {
            op_emi(f, SCOPE_BEGIN, r, op, op.dst_before);
        } else if let Some(f) = cb.data_op {
            (*r).host_op_id = new_id();
            f(
                (*r).target_data.value,
                (*r).host_op_id,
                op.kind,
                op.src as *mut c_void,
                op.src_device,
                op.dst_before as *mut c_void,
                op.dst_device,
                op.bytes,
                (*r).code,
            );
        }
    }
}

fn op_end(cb: &Callbacks, op: &Op) {
    let (Some(f), r) = (cb.data_op_emi, region()) else {
        return;
    };
    if !r.is_null() {
        // SAFETY: this thread's region state, no reference to it held.
        unsafe { op_emi(f, SCOPE_END, r, op, op.dst) };
    }
}

/// Runs the data operation `op` with its events around it (after it, while the lock is
/// held); `f` returns the destination the end names and its result.
fn around<R>(cb: &Callbacks, mut op: Op, f: impl FnOnce() -> (usize, R)) -> R {
    let traced = trace_device::collecting(op.device as usize, kind::DATA_OP);
    let run = |op: &mut Op| {
        let start = traced.map(TraceDevice::stamp);
        let (dst, result) = f();
        op.dst = dst;
        if let (Some(d), Some(start)) = (traced, start) {
            trace_op(d, op, start, d.stamp());
        }
        result
    };
    if held() > 0 {
        let result = run(&mut op);
        let _ = WAITING.try_with(|w| w.borrow_mut().push(Event::Op(op)));
        return result;
    }
    deliver_waiting(cb);
    op_begin(cb, &op);
    let result = run(&mut op);
    op_end(cb, &op);
    deliver_trace();
    result
}

/// The trace record of `op`, which ran between `start` and `end`.
fn trace_op(d: &TraceDevice, op: &Op, start: Stamp, end: Stamp) {
    let r = region();
    // SAFETY: this thread's region state, read while no callback runs.
    let (target_id, host_op_id, code) = match unsafe { r.as_ref() } {
        Some(r) => (r.trace_id, r.host_op_id, r.code),
        None => (0, 0, std::ptr::null()),
    };
    let record = DataOp {
        host_op_id: if host_op_id == 0 {
            new_id()
        } else {
            host_op_id
        },
        optype: op.kind,
        src: op.src,
        src_device: op.src_device,
        dst: op.dst,
        dst_device: op.dst_device,
        bytes: op.bytes,
        code,
    };
    trace_records::data_op(d, target_id, record, start, end);
}

/// An allocation of `size` bytes on `device` for host memory at `host` (0: none).
#[inline]
pub fn alloc<E>(
    device: usize,
    host_address: usize,
    size: usize,
    f: impl FnOnce() -> Result<usize, E>,
) -> Result<usize, E> {
    let Some(cb) = callbacks() else {
        return f();
    };
    let op = Op {
        kind: data_op::ALLOC,
        device: device as c_int,
        src: host_address,
        src_device: host(),
        dst_before: 0,
        dst: 0,
        dst_device: device as c_int,
        bytes: size,
    };
    around(cb, op, || {
        let result = f();
        (*result.as_ref().unwrap_or(&0), result)
    })
}

/// The freeing of `device`'s memory at `address`.
#[inline]
pub fn delete<R>(device: usize, address: usize, f: impl FnOnce() -> R) -> R {
    let Some(cb) = callbacks() else {
        return f();
    };
    let op = Op {
        kind: data_op::DELETE,
        device: device as c_int,
        src: address,
        src_device: device as c_int,
        dst_before: 0,
        dst: 0,
        dst_device: NO_DEVICE,
        bytes: 0,
    };
    around(cb, op, || (0, f()))
}

/// A copy of `size` bytes, to the device (host memory at `host_address`, device memory at
/// `device_address`) or from it.
#[inline]
pub fn transfer<R>(
    to_device: bool,
    device: usize,
    host_address: usize,
    device_address: usize,
    size: usize,
    f: impl FnOnce() -> R,
) -> R {
    let Some(cb) = callbacks() else {
        return f();
    };
    let (kind, src, src_device, dst, dst_device) = if to_device {
        (
            data_op::TRANSFER_TO_DEVICE,
            host_address,
            host(),
            device_address,
            device as c_int,
        )
    } else {
        (
            data_op::TRANSFER_FROM_DEVICE,
            device_address,
            device as c_int,
            host_address,
            host(),
        )
    };
    let op = Op {
        kind,
        device: device as c_int,
        src,
        src_device,
        dst_before: dst,
        dst,
        dst_device,
        bytes: size,
    };
    around(cb, op, || (dst, f()))
}

/// `omp_target_associate_ptr` (`associate`) or `_disassociate_ptr` of `host_address`.
#[inline]
pub fn association<R>(
    associate: bool,
    device: usize,
    host_address: usize,
    device_address: usize,
    size: usize,
    f: impl FnOnce() -> R,
) -> R {
    let Some(cb) = callbacks() else {
        return f();
    };
    let kind = if associate {
        data_op::ASSOCIATE
    } else {
        data_op::DISASSOCIATE
    };
    let op = Op {
        kind,
        device: device as c_int,
        src: host_address,
        src_device: host(),
        dst_before: device_address,
        dst: device_address,
        dst_device: device as c_int,
        bytes: size,
    };
    around(cb, op, || (device_address, f()))
}

/// A construct (`target_kind::*`) on OpenMP device `device`: its begin and end around
/// `f`, and the region state its data operations and submission name.
#[inline]
pub fn construct<R>(kind: c_int, device: usize, f: impl FnOnce() -> R) -> R {
    if callbacks().is_none() {
        return f();
    }
    construct_with_tool(kind, device, f)
}

fn construct_with_tool<R>(kind: c_int, device: usize, f: impl FnOnce() -> R) -> R {
    let Some((cb, r)) = ready() else {
        return f();
    };
    // SAFETY: this thread's region state, no reference to it held.
    unsafe {
        (*r).task_data = cb.get_task_data.map_or(std::ptr::null_mut(), |f| f());
        (*r).target_task_data = cb
            .get_target_task_data
            .map_or(std::ptr::null_mut(), |f| f());
        (*r).target_data = Data::NONE;
        (*r).code = code_address::caller();
        // The older callback's target id: LLVM makes none for `enter data`.
        if cb.target_emi.is_none() && kind != target_kind::ENTER_DATA {
            (*r).target_data.value = new_id();
        }
    }
    let traced = trace_device::collecting(device, kind::TARGET);
    if traced.is_some() {
        // SAFETY: as above.
        unsafe { (*r).trace_id = new_id() };
    }
    target_event(cb, r, kind, SCOPE_BEGIN, device);
    trace_target(traced, r, kind, SCOPE_BEGIN);
    let result = f();
    deliver_waiting(cb);
    target_event(cb, r, kind, SCOPE_END, device);
    trace_target(traced, r, kind, SCOPE_END);
    // SAFETY: as above.
    unsafe { *r = NO_REGION };
    deliver_trace();
    result
}

/// The trace record of a construct's begin or end, when its device collects them.
fn trace_target(traced: Option<&TraceDevice>, r: *mut Region, kind: c_int, endpoint: c_int) {
    if let Some(d) = traced {
        // SAFETY: this thread's region state, read while no callback runs; the task's
        // data is libomp's.
        let (task_id, target_id, code) = unsafe {
            let task = (*r).task_data.as_ref().map_or(0, |t| t.value);
            (task, (*r).trace_id, (*r).code)
        };
        trace_records::target(d, kind, endpoint, task_id, target_id, code);
    }
}

/// Whether a tool is connected (an operation may then take LLVM's steps, so that the
/// tool sees them).
#[inline]
pub fn tool_connected() -> bool {
    callbacks().is_some()
}

/// With a tool connected: its callbacks and this thread's region state (not NULL), the
/// events that were waiting delivered first.
fn ready() -> Option<(&'static Callbacks, *mut Region)> {
    let cb = callbacks()?;
    deliver_waiting(cb);
    let r = region();
    (!r.is_null()).then_some((cb, r))
}

/// The construct's begin or end; `r` is this thread's region state.
fn target_event(cb: &Callbacks, r: *mut Region, kind: c_int, endpoint: c_int, device: usize) {
    // SAFETY: this thread's region state; the tool's callback with OMPT's arguments.
    unsafe {
        if let Some(f) = cb.target_emi {
            f(
                kind,
                endpoint,
                device as c_int,
                (*r).task_data,
                (*r).target_task_data,
                &raw mut (*r).target_data,
                (*r).code,
            );
        } else if let Some(f) = cb.target {
            f(
                kind,
                endpoint,
                device as c_int,
                (*r).task_data,
                (*r).target_data.value,
                (*r).code,
            );
        }
    }
}

/// An OpenMP routine that operates on devices (`omp_target_alloc`, `_memcpy`, ...): its
/// data operations name the program's call and no target region.
#[inline]
pub fn routine<R>(f: impl FnOnce() -> R) -> R {
    if callbacks().is_none() {
        return f();
    }
    routine_with_tool(f)
}

fn routine_with_tool<R>(f: impl FnOnce() -> R) -> R {
    let Some((cb, r)) = ready() else {
        return f();
    };
    // SAFETY: this thread's region state, no reference to it held.
    let outer = unsafe { std::mem::replace(&mut (*r).code, code_address::caller()) };
    let result = f();
    deliver_waiting(cb);
    // SAFETY: as above.
    unsafe { (*r).code = outer };
    result
}

/// A kernel to submit: on OpenMP device `device`, asking for `teams` teams and running
/// `granted`.
pub struct Kernel {
    pub device: usize,
    pub teams: u32,
    pub granted: u32,
}

/// A kernel's submission: to completion, or enqueued on `queue`.
#[inline]
pub fn submit<R>(kernel: Kernel, queue: Option<&Queue>, f: impl FnOnce() -> R) -> R {
    if callbacks().is_none() {
        return f();
    }
    submit_with_tool(kernel, queue, f)
}

fn submit_with_tool<R>(kernel: Kernel, queue: Option<&Queue>, f: impl FnOnce() -> R) -> R {
    let Kernel {
        device,
        teams,
        granted,
    } = kernel;
    let Some((cb, r)) = ready() else {
        return f();
    };
    let traced = trace_device::collecting(device, kind::KERNEL);
    // SAFETY: this thread's region state; the tool's callbacks with OMPT's arguments.
    unsafe {
        if let Some(emi) = cb.submit_emi {
            emi(
                SCOPE_BEGIN,
                &raw mut (*r).target_data,
                &raw mut (*r).host_op_id,
                teams,
            );
        } else if let Some(plain) = cb.submit {
            (*r).host_op_id = new_id();
            plain((*r).target_data.value, (*r).host_op_id, teams);
        }
    }
    let start = traced.map(|d| d.stamp_on(queue));
    let result = f();
    if let (Some(d), Some(start)) = (traced, start) {
        // SAFETY: as above.
        let (target_id, host_op_id) = unsafe { ((*r).trace_id, (*r).host_op_id) };
        let host_op_id = if host_op_id == 0 {
            new_id()
        } else {
            host_op_id
        };
        let end = d.stamp_on(queue);
        trace_records::kernel(d, target_id, host_op_id, teams, granted, start, end);
    }
    if let Some(emi) = cb.submit_emi {
        // SAFETY: as above.
        unsafe {
            emi(
                SCOPE_END,
                &raw mut (*r).target_data,
                &raw mut (*r).host_op_id,
                teams,
            )
        };
    }
    deliver_trace();
    result
}

/// OpenMP device `number`, liboffload's `device`, is initialised; `kind` names what it
/// is.
pub fn device_initialize(number: usize, kind: &str, device: Device) {
    if let Some(cb) = callbacks() {
        let kind = CString::new(kind).unwrap_or_default();
        let traced = trace_device::initialized(number, device);
        emit(cb, Event::DeviceInitialize(number as c_int, kind, traced));
    }
}

/// An image of `bytes` bytes at `image` is loaded on device `number` as `module`.
pub fn device_load(number: usize, image: usize, bytes: usize, module: u64) {
    if let Some(cb) = callbacks() {
        emit(cb, Event::DeviceLoad(number as c_int, image, bytes, module));
    }
}

/// Device `number` is finalised (before liboffload shuts down: its trace records'
/// times are read now).
pub fn device_finalize(number: usize) {
    if let Some(cb) = callbacks() {
        if let Some(traced) = trace_device::device(number) {
            traced.finalize();
        }
        emit(cb, Event::DeviceFinalize(number as c_int));
    }
}

/// Module `module` is unloaded from device `number`.
pub fn device_unload(number: usize, module: u64) {
    if let Some(cb) = callbacks() {
        emit(cb, Event::DeviceUnload(number as c_int, module));
    }
}
