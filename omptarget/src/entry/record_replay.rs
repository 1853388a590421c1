//! Kernel record and replay's entry points, as LLVM 19 and 22 export them for
//! `llvm-omp-kernel-replay`: `__tgt_activate_record_replay` and
//! `__tgt_target_kernel_replay` (`launch/replay.rs`). Where LLVM answers 0 whatever
//! happened, these answer OFFLOAD_FAIL with a line on stderr saying what went wrong.

use crate::abi::types::{OFFLOAD_FAIL, OFFLOAD_SUCCESS};
use crate::launch::replay::{self, Replay};
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::ffi::c_void;

/// Starts recording (`is_record`) or replaying kernels on device `device_id`, with
/// `memory_size` bytes of device memory at `vaddr` (replay: the recorded address). When
/// the memory cannot be placed there, `*req_ptr_arg_offset` says how far it lies below
/// (LLVM's `ReqPtrArgOffset`, a C++ reference in LLVM's declaration).
///
/// # Safety
/// `req_ptr_arg_offset` is NULL or points to writable memory for a `u64`.
#[no_mangle]
pub unsafe extern "C" fn __tgt_activate_record_replay(
    device_id: i64,
    memory_size: u64,
    vaddr: *mut c_void,
    is_record: bool,
    save_output: bool,
    req_ptr_arg_offset: *mut u64,
) -> i64 {
    boundary("__tgt_activate_record_replay", || {
        match replay::activate(
            device_id,
            memory_size,
            vaddr as usize,
            is_record,
            save_output,
        ) {
            Ok(offset) => {
                if !req_ptr_arg_offset.is_null() {
                    // SAFETY: the caller's place for the offset (a reference in C++).
                    unsafe { req_ptr_arg_offset.write(offset) };
                }
                i64::from(OFFLOAD_SUCCESS)
            }
            Err(e) => {
                message(&format!("error: __tgt_activate_record_replay: {e}"));
                i64::from(OFFLOAD_FAIL)
            }
        }
    })
}

/// Replays one recorded launch of region `host_ptr`: `device_memory_size` bytes at
/// `device_memory` become the device's memory, and the kernel runs with the `num_args`
/// values `tgt_args[i] + tgt_offsets[i]`.
///
/// # Safety
/// `device_memory` holds `device_memory_size` readable bytes; `tgt_args` and (unless
/// NULL) `tgt_offsets` hold `num_args` values each.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_kernel_replay(
    _loc: *mut c_void,
    device_id: i64,
    host_ptr: *mut c_void,
    device_memory: *mut c_void,
    device_memory_size: i64,
    tgt_args: *mut *mut c_void,
    tgt_offsets: *mut isize,
    num_args: i32,
    _num_teams: i32,
    _thread_limit: i32,
    _loop_tripcount: u64,
) -> i32 {
    boundary("__tgt_target_kernel_replay", || {
        let (Ok(size), Ok(count)) = (
            usize::try_from(device_memory_size),
            usize::try_from(num_args),
        ) else {
            message(&format!(
                "error: __tgt_target_kernel_replay: {device_memory_size} bytes of memory and \
                 {num_args} arguments (neither may be negative)"
            ));
            return OFFLOAD_FAIL;
        };
        if (size > 0 && device_memory.is_null()) || (count > 0 && tgt_args.is_null()) {
            message("error: __tgt_target_kernel_replay: no memory or no arguments given");
            return OFFLOAD_FAIL;
        }
        // SAFETY: the caller's `size` bytes of memory and `count` arguments and offsets
        // (offsets may be absent: none).
        let (memory, args) = unsafe {
            let memory = if size == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(device_memory as *const u8, size)
            };
            let args: Vec<usize> = (0..count)
                .map(|i| {
                    let offset = if tgt_offsets.is_null() {
                        0
                    } else {
                        *tgt_offsets.add(i)
                    };
                    (*tgt_args.add(i) as usize).wrapping_add_signed(offset)
                })
                .collect();
            (memory, args)
        };
        let replayed = replay::replay(Replay {
            device_id,
            host_ptr: host_ptr as usize,
            memory,
            args,
        });
        match replayed {
            Ok(()) => OFFLOAD_SUCCESS,
            Err(e) => {
                message(&format!("error: __tgt_target_kernel_replay: {e}"));
                OFFLOAD_FAIL
            }
        }
    })
}
