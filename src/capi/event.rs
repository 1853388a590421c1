//! olCreateEvent, olDestroyEvent, olSyncEvent, olGetEventInfo[Size], olGetEventElapsedTime.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::info;
use crate::capi::queue::live_queue;
use crate::capi::trace_text::{written, written_handle};
use crate::capi::types::*;
use crate::plugin::foundation::error::{ErrorCode, Result};
use crate::runtime::event::{Event, EventInfo};
use crate::runtime::Runtime;
use std::ffi::c_void;
use std::ptr::null;
use std::sync::Arc;

pub(crate) fn live_event(rt: &Runtime, event: ol_event_handle_t, name: &str) -> Result<Arc<Event>> {
    args::live(&rt.events, event, name, "event", ErrorCode::InvalidEvent)
}

/// Creates an event on `Queue` that completes when all work enqueued before it is done.
#[no_mangle]
pub extern "C" fn olCreateEvent(
    Queue: ol_queue_handle_t,
    Event: *mut ol_event_handle_t,
) -> ol_result_t {
    create_event(Queue, Event, null())
}

/// `olCreateEvent` with the caller's source location.
#[no_mangle]
pub extern "C" fn olCreateEventWithCodeLoc(
    Queue: ol_queue_handle_t,
    Event: *mut ol_event_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    create_event(Queue, Event, CodeLocation)
}

fn create_event(
    queue: ol_queue_handle_t,
    out: *mut ol_event_handle_t,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olCreateEvent",
        loc,
        |ok| format!("Queue={queue:p}, Event={}", written_handle(out, ok)),
        || {
            args::with_runtime(|rt| {
                let q = live_queue(rt, queue)?;
                let out = args::out_ptr(out, "Event")?;
                *out = rt.create_event(&q, queue as usize)? as ol_event_handle_t;
                Ok(())
            })
        },
    )
}

/// Destroys `Event`; queues already waiting on it still wait for it.
#[no_mangle]
pub extern "C" fn olDestroyEvent(Event: ol_event_handle_t) -> ol_result_t {
    destroy_event(Event, null())
}

/// `olDestroyEvent` with the caller's source location.
#[no_mangle]
pub extern "C" fn olDestroyEventWithCodeLoc(
    Event: ol_event_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    destroy_event(Event, CodeLocation)
}

fn destroy_event(event: ol_event_handle_t, loc: *const ol_code_location_t) -> ol_result_t {
    call(
        "olDestroyEvent",
        loc,
        |_| format!("Event={event:p}"),
        || {
            args::with_runtime(|rt| {
                live_event(rt, event, "Event")?;
                rt.destroy_event(event as usize)
            })
        },
    )
}

/// Blocks until `Event` is complete; returns the error of its queue, if one happened
/// before the event.
#[no_mangle]
pub extern "C" fn olSyncEvent(Event: ol_event_handle_t) -> ol_result_t {
    sync_event(Event, null())
}

/// `olSyncEvent` with the caller's source location.
#[no_mangle]
pub extern "C" fn olSyncEventWithCodeLoc(
    Event: ol_event_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    sync_event(Event, CodeLocation)
}

fn sync_event(event: ol_event_handle_t, loc: *const ol_code_location_t) -> ol_result_t {
    call(
        "olSyncEvent",
        loc,
        |_| format!("Event={event:p}"),
        || {
            args::with_runtime(|rt| live_event(rt, event, "Event"))?
                .inner
                .synchronize()
        },
    )
}

const EVENT_INFO_EXPECTED: &str =
    "an ol_event_info_t: OL_EVENT_INFO_QUEUE (0) or OL_EVENT_INFO_IS_COMPLETE (1)";

fn event_info(
    rt: &Runtime,
    event: ol_event_handle_t,
    key: u32,
    answer: info::Answer<'_>,
) -> Result<()> {
    let e = live_event(rt, event, "Event")?;
    let key: EventInfo = args::enumeration(key, "PropName", EVENT_INFO_EXPECTED)?;
    answer(&rt.event_info(&e, key)?, &key)
}

/// Writes one property of `Event` to `PropValue`.
#[no_mangle]
pub extern "C" fn olGetEventInfo(
    Event: ol_event_handle_t,
    PropName: ol_event_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
) -> ol_result_t {
    get_info(Event, PropName, PropSize, PropValue, null())
}

/// `olGetEventInfo` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetEventInfoWithCodeLoc(
    Event: ol_event_handle_t,
    PropName: ol_event_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info(Event, PropName, PropSize, PropValue, CodeLocation)
}

fn get_info(
    event: ol_event_handle_t,
    key: u32,
    size: usize,
    out: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = event as *const c_void;
    info::query(
        info::Keys::Event,
        info::Subject::Handle("Event", handle),
        key,
        info::Asked::Value {
            prop_size: size,
            out,
        },
        loc,
        |rt, answer| event_info(rt, event, key, answer),
    )
}

/// Writes the bytes `olGetEventInfo` needs for `PropName` to `PropSizeRet`.
#[no_mangle]
pub extern "C" fn olGetEventInfoSize(
    Event: ol_event_handle_t,
    PropName: ol_event_info_raw_t,
    PropSizeRet: *mut usize,
) -> ol_result_t {
    get_info_size(Event, PropName, PropSizeRet, null())
}

/// `olGetEventInfoSize` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetEventInfoSizeWithCodeLoc(
    Event: ol_event_handle_t,
    PropName: ol_event_info_raw_t,
    PropSizeRet: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info_size(Event, PropName, PropSizeRet, CodeLocation)
}

fn get_info_size(
    event: ol_event_handle_t,
    key: u32,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = event as *const c_void;
    info::query(
        info::Keys::Event,
        info::Subject::Handle("Event", handle),
        key,
        info::Asked::Size(out),
        loc,
        |rt, answer| event_info(rt, event, key, answer),
    )
}

/// Writes the milliseconds between the completion of `StartEvent` and of `EndEvent`
/// (events of the same device) to `ElapsedTime`, waiting for both.
#[no_mangle]
pub extern "C" fn olGetEventElapsedTime(
    StartEvent: ol_event_handle_t,
    EndEvent: ol_event_handle_t,
    ElapsedTime: *mut f32,
) -> ol_result_t {
    elapsed(StartEvent, EndEvent, ElapsedTime, null())
}

/// `olGetEventElapsedTime` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetEventElapsedTimeWithCodeLoc(
    StartEvent: ol_event_handle_t,
    EndEvent: ol_event_handle_t,
    ElapsedTime: *mut f32,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    elapsed(StartEvent, EndEvent, ElapsedTime, CodeLocation)
}

fn elapsed(
    start: ol_event_handle_t,
    end: ol_event_handle_t,
    out: *mut f32,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olGetEventElapsedTime",
        loc,
        |ok| {
            format!(
                "StartEvent={start:p}, EndEvent={end:p}, ElapsedTime={}",
                written(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                let s = live_event(rt, start, "StartEvent")?;
                let e = live_event(rt, end, "EndEvent")?;
                let out = args::out_ptr(out, "ElapsedTime")?;
                *out = rt.event_elapsed_ms(&s, &e)?;
                Ok(())
            })
        },
    )
}
