//! olCreateQueue, olDestroyQueue, olSyncQueue, olWaitEvents, olLaunchHostFunction,
//! olGetQueueInfo[Size].
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::info;
use crate::capi::trace_text::written_handle;
use crate::capi::types::*;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::runtime::queue::{Queue, QueueInfo};
use crate::runtime::Runtime;
use std::ffi::c_void;
use std::ptr::null;
use std::sync::Arc;

pub(crate) fn live_queue(rt: &Runtime, queue: ol_queue_handle_t) -> Result<Arc<Queue>> {
    args::live(&rt.queues, queue, "Queue", "queue", ErrorCode::InvalidQueue)
}

/// Creates an in-order queue on `Device`.
#[no_mangle]
pub extern "C" fn olCreateQueue(
    Device: ol_device_handle_t,
    Queue: *mut ol_queue_handle_t,
) -> ol_result_t {
    create_queue(Device, Queue, null())
}

/// `olCreateQueue` with the caller's source location.
#[no_mangle]
pub extern "C" fn olCreateQueueWithCodeLoc(
    Device: ol_device_handle_t,
    Queue: *mut ol_queue_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    create_queue(Device, Queue, CodeLocation)
}

fn create_queue(
    device: ol_device_handle_t,
    out: *mut ol_queue_handle_t,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olCreateQueue",
        loc,
        |ok| format!("Device={device:p}, Queue={}", written_handle(out, ok)),
        || {
            args::with_runtime(|rt| {
                let d = args::device(rt, device, "Device")?;
                let out = args::out_ptr(out, "Queue")?;
                *out = rt.create_queue(d)? as ol_queue_handle_t;
                Ok(())
            })
        },
    )
}

/// Destroys `Queue` without waiting: enqueued work still completes, its events stay valid.
#[no_mangle]
pub extern "C" fn olDestroyQueue(Queue: ol_queue_handle_t) -> ol_result_t {
    destroy_queue(Queue, null())
}

/// `olDestroyQueue` with the caller's source location.
#[no_mangle]
pub extern "C" fn olDestroyQueueWithCodeLoc(
    Queue: ol_queue_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    destroy_queue(Queue, CodeLocation)
}

fn destroy_queue(queue: ol_queue_handle_t, loc: *const ol_code_location_t) -> ol_result_t {
    call(
        "olDestroyQueue",
        loc,
        |_| format!("Queue={queue:p}"),
        || {
            args::with_runtime(|rt| {
                live_queue(rt, queue)?;
                rt.destroy_queue(queue as usize)
            })
        },
    )
}

/// Blocks until all work enqueued on `Queue` is done; returns the first asynchronous
/// error since the last sync, if any: the failure of a launch, copy, fill or wait that
/// its own call could not report, since it happened while the work ran.
#[no_mangle]
pub extern "C" fn olSyncQueue(Queue: ol_queue_handle_t) -> ol_result_t {
    sync_queue(Queue, null())
}

/// `olSyncQueue` with the caller's source location.
#[no_mangle]
pub extern "C" fn olSyncQueueWithCodeLoc(
    Queue: ol_queue_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    sync_queue(Queue, CodeLocation)
}

fn sync_queue(queue: ol_queue_handle_t, loc: *const ol_code_location_t) -> ol_result_t {
    call(
        "olSyncQueue",
        loc,
        |_| format!("Queue={queue:p}"),
        || {
            let q = args::with_runtime(|rt| live_queue(rt, queue))?;
            q.sync()
        },
    )
}

/// Later work on `Queue` waits until every event in `Events` is complete (events of any
/// queue of any device). An event of another backend's device whose queue failed before
/// it passes that failure on to `Queue`, reported by `Queue`'s next `olSyncQueue`.
#[no_mangle]
pub extern "C" fn olWaitEvents(
    Queue: ol_queue_handle_t,
    Events: *mut ol_event_handle_t,
    NumEvents: usize,
) -> ol_result_t {
    wait_events(Queue, Events, NumEvents, null())
}

/// `olWaitEvents` with the caller's source location.
#[no_mangle]
pub extern "C" fn olWaitEventsWithCodeLoc(
    Queue: ol_queue_handle_t,
    Events: *mut ol_event_handle_t,
    NumEvents: usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    wait_events(Queue, Events, NumEvents, CodeLocation)
}

fn wait_events(
    queue: ol_queue_handle_t,
    events: *mut ol_event_handle_t,
    count: usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olWaitEvents",
        loc,
        |_| format!("Queue={queue:p}, Events={events:p}, NumEvents={count}"),
        || {
            args::with_runtime(|rt| {
                args::handle_given(queue, "Queue")?;
                args::non_null(events, "Events")?;
                let q = live_queue(rt, queue)?;
                if count == 0 {
                    return Ok(());
                }
                // SAFETY: non-NULL, and the caller promises `NumEvents` handles there.
                let handles = unsafe { std::slice::from_raw_parts(events, count) };
                let events = handles
                    .iter()
                    .enumerate()
                    .map(|(i, &e)| crate::capi::event::live_event(rt, e, &format!("Events[{i}]")))
                    .collect::<Result<Vec<_>>>()?;
                rt.wait_events(&q, events)
            })
        },
    )
}

/// The caller's `UserData`, carried to the worker that runs the callback.
struct CallerData(*mut c_void);
// SAFETY: the pointer is only handed back to the caller's own callback, which the caller
// wrote to be run from another thread (olLaunchHostFunction's contract).
unsafe impl Send for CallerData {}

/// Runs `Callback(UserData)` in queue order.
#[no_mangle]
pub extern "C" fn olLaunchHostFunction(
    Queue: ol_queue_handle_t,
    Callback: ol_host_function_cb_t,
    UserData: *mut c_void,
) -> ol_result_t {
    launch_host_function(Queue, Callback, UserData, null())
}

/// `olLaunchHostFunction` with the caller's source location.
#[no_mangle]
pub extern "C" fn olLaunchHostFunctionWithCodeLoc(
    Queue: ol_queue_handle_t,
    Callback: ol_host_function_cb_t,
    UserData: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    launch_host_function(Queue, Callback, UserData, CodeLocation)
}

fn launch_host_function(
    queue: ol_queue_handle_t,
    callback: ol_host_function_cb_t,
    user_data: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olLaunchHostFunction",
        loc,
        |_| {
            format!(
                "Queue={queue:p}, Callback={:p}, UserData={user_data:p}",
                callback.map_or(std::ptr::null(), |f| f as *const ())
            )
        },
        || {
            args::with_runtime(|rt| {
                let q = live_queue(rt, queue)?;
                let callback = callback
                    .ok_or_else(|| Error::null_pointer("Callback is NULL; expected a function"))?;
                let data = CallerData(user_data);
                rt.enqueue_host_function(&q, move || {
                    let data = data;
                    // SAFETY: the caller's function, called with the caller's own data.
                    unsafe { callback(data.0) }
                })
            })
        },
    )
}

const QUEUE_INFO_EXPECTED: &str =
    "an ol_queue_info_t: OL_QUEUE_INFO_DEVICE (0), OL_QUEUE_INFO_EMPTY (1) or the extension OL_QUEUE_INFO_NATIVE_HANDLE (0x10000)";

fn queue_info(
    rt: &Runtime,
    queue: ol_queue_handle_t,
    key: u32,
    answer: info::Answer<'_>,
) -> Result<()> {
    let q = live_queue(rt, queue)?;
    let key: QueueInfo = args::enumeration(key, "PropName", QUEUE_INFO_EXPECTED)?;
    answer(&rt.queue_info(&q, key)?, &key)
}

/// Writes one property of `Queue` to `PropValue`.
#[no_mangle]
pub extern "C" fn olGetQueueInfo(
    Queue: ol_queue_handle_t,
    PropName: ol_queue_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
) -> ol_result_t {
    get_info(Queue, PropName, PropSize, PropValue, null())
}

/// `olGetQueueInfo` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetQueueInfoWithCodeLoc(
    Queue: ol_queue_handle_t,
    PropName: ol_queue_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info(Queue, PropName, PropSize, PropValue, CodeLocation)
}

fn get_info(
    queue: ol_queue_handle_t,
    key: u32,
    size: usize,
    out: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = queue as *const c_void;
    info::query(
        info::Keys::Queue,
        info::Subject::Handle("Queue", handle),
        key,
        info::Asked::Value {
            prop_size: size,
            out,
        },
        loc,
        |rt, answer| queue_info(rt, queue, key, answer),
    )
}

/// Writes the bytes `olGetQueueInfo` needs for `PropName` to `PropSizeRet`.
#[no_mangle]
pub extern "C" fn olGetQueueInfoSize(
    Queue: ol_queue_handle_t,
    PropName: ol_queue_info_raw_t,
    PropSizeRet: *mut usize,
) -> ol_result_t {
    get_info_size(Queue, PropName, PropSizeRet, null())
}

/// `olGetQueueInfoSize` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetQueueInfoSizeWithCodeLoc(
    Queue: ol_queue_handle_t,
    PropName: ol_queue_info_raw_t,
    PropSizeRet: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info_size(Queue, PropName, PropSizeRet, CodeLocation)
}

fn get_info_size(
    queue: ol_queue_handle_t,
    key: u32,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = queue as *const c_void;
    info::query(
        info::Keys::Queue,
        info::Subject::Handle("Queue", handle),
        key,
        info::Asked::Size(out),
        loc,
        |rt, answer| queue_info(rt, queue, key, answer),
    )
}
