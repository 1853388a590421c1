//! The trace records of constructs, data operations and kernels: what `events` takes
//! for a device that collects them, the times marked around the operation itself.

use crate::ompt::trace_device::{kind, Pending, Stamp, TraceDevice};
use crate::ompt::types::{event, DataOpRecord, Id, KernelRecord, Record, RecordBody, TargetRecord};
use std::ffi::{c_int, c_void};

fn thread_id() -> Id {
    // SAFETY: asks the kernel for this thread's id.
    unsafe { libc::gettid() as Id }
}

fn record(kind: c_int, target_id: Id, body: RecordBody) -> Record {
    Record {
        kind,
        time: 0,
        thread_id: thread_id(),
        target_id,
        body,
    }
}

/// A construct's begin or end (`ompt_record_target_t`).
pub fn target(
    d: &TraceDevice,
    kind_: c_int,
    endpoint: c_int,
    task_id: Id,
    target_id: Id,
    code: *const c_void,
) {
    let body = RecordBody {
        target: TargetRecord {
            kind: kind_,
            endpoint,
            device_num: d.number,
            task_id,
            target_id,
            codeptr_ra: code,
        },
    };
    let pending = Pending {
        record: record(event::TARGET, target_id, body),
        start: d.stamp(),
        end: None,
    };
    d.record(pending, kind::TARGET);
}

/// What a data operation's record says, besides its times.
pub struct DataOp {
    pub host_op_id: Id,
    pub optype: c_int,
    pub src: usize,
    pub src_device: c_int,
    pub dst: usize,
    pub dst_device: c_int,
    pub bytes: usize,
    pub code: *const c_void,
}

/// A data operation (`ompt_record_target_data_op_t`) that ran between `start` and `end`.
pub fn data_op(d: &TraceDevice, target_id: Id, op: DataOp, start: Stamp, end: Stamp) {
    let body = RecordBody {
        data_op: DataOpRecord {
            host_op_id: op.host_op_id,
            optype: op.optype,
            src_addr: op.src as *mut c_void,
            src_device_num: op.src_device,
            dest_addr: op.dst as *mut c_void,
            dest_device_num: op.dst_device,
            bytes: op.bytes,
            end_time: 0,
            codeptr_ra: op.code,
        },
    };
    let pending = Pending {
        record: record(event::TARGET_DATA_OP, target_id, body),
        start,
        end: Some(end),
    };
    d.record(pending, kind::DATA_OP);
}

/// A kernel (`ompt_record_target_kernel_t`) that ran between `start` and `end`.
pub fn kernel(
    d: &TraceDevice,
    target_id: Id,
    host_op_id: Id,
    requested: u32,
    granted: u32,
    start: Stamp,
    end: Stamp,
) {
    let body = RecordBody {
        kernel: KernelRecord {
            host_op_id,
            requested_num_teams: requested,
            granted_num_teams: granted,
            end_time: 0,
        },
    };
    let pending = Pending {
        record: record(event::TARGET_SUBMIT, target_id, body),
        start,
        end: Some(end),
    };
    d.record(pending, kind::KERNEL);
}
