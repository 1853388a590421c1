//! Kernel record and replay (`llvm-omp-kernel-replay`): refused. Replaying needs the
//! recorded device memory at its recorded addresses, which liboffload's API cannot ask
//! for; LLVM 19's host plugin cannot record or replay either (it reports "Cannot
//! determine Device Memory Size" and deactivates record-replay).

use crate::abi::types::OFFLOAD_FAIL;
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::ffi::c_void;

fn refuse(what: &str) {
    message(&format!(
        "error: {what}: kernel record and replay is not supported (liboffload cannot place device memory at recorded addresses; LLVM 19's host plugin cannot record or replay either)"
    ));
}

/// Would start recording or replaying kernels on a device; refused (OFFLOAD_FAIL).
#[no_mangle]
pub extern "C" fn __tgt_activate_record_replay(
    _device_id: i64,
    _memory_size: u64,
    _vaddr: *mut c_void,
    _is_record: bool,
    _save_output: bool,
    _req_ptr_arg_offset: *mut u64,
) -> i64 {
    boundary("__tgt_activate_record_replay", || {
        refuse("__tgt_activate_record_replay");
        i64::from(OFFLOAD_FAIL)
    })
}

/// Would replay one recorded kernel launch; refused (OFFLOAD_FAIL).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __tgt_target_kernel_replay(
    _loc: *mut c_void,
    _device_id: i64,
    _host_ptr: *mut c_void,
    _device_memory: *mut c_void,
    _device_memory_size: i64,
    _tgt_args: *mut *mut c_void,
    _tgt_offsets: *mut isize,
    _num_args: i32,
    _num_teams: i32,
    _thread_limit: i32,
    _loop_tripcount: u64,
) -> i32 {
    boundary("__tgt_target_kernel_replay", || {
        refuse("__tgt_target_kernel_replay");
        OFFLOAD_FAIL
    })
}
