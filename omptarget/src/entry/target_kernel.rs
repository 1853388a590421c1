//! `__tgt_target_kernel` and its `nowait` forms: the call clang emits for each target
//! region, handed to `launch::target_region`.

use crate::abi::types::KernelArgs;
use crate::launch::nowait;
use crate::launch::target_region::target_kernel;
use crate::report::boundary::boundary;
use std::ffi::c_void;

/// Runs a target region. 0 on success; non-zero tells clang's code to run the host
/// fallback (when the region is not offloaded: the initial device, offloading disabled).
///
/// # Safety
/// `args` must be clang's `KernelArgsTy` with `num_args` entries in each array.
#[no_mangle]
pub unsafe extern "C" fn __tgt_target_kernel(
    loc: *mut c_void,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut KernelArgs,
) -> i32 {
    boundary("__tgt_target_kernel", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            target_kernel(
                loc,
                device_id,
                num_teams,
                thread_limit,
                host_ptr,
                args,
                false,
            )
        }
    })
}

/// The `nowait` form: libomp wraps it in a task that honours the `depend` clauses. On a
/// GPU the region is left in flight for libomp to poll (`launch::nowait`); elsewhere it runs
/// to completion, a valid schedule too.
///
/// # Safety
/// As `__tgt_target_kernel`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_kernel_nowait(
    loc: *mut c_void,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut KernelArgs,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    boundary("__tgt_target_kernel_nowait", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            target_kernel(
                loc,
                device_id,
                num_teams,
                thread_limit,
                host_ptr,
                args,
                true,
            )
        }
    })
}

/// libomp asks whether a `nowait` region left in flight is done (`nowait::query`).
///
/// # Safety
/// `async_handle` is NULL or points to libomp's handle slot, as `__tgt_target_kernel_nowait`
/// left it.
#[no_mangle]
pub unsafe extern "C" fn __tgt_target_nowait_query(async_handle: *mut *mut c_void) {
    boundary("__tgt_target_nowait_query", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { nowait::query(async_handle) }
    })
}
