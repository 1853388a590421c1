//! LLVM's allocator extensions beyond device memory: host (pinned) and shared (managed)
//! allocations, page-locking existing host memory, and the dynamic shared memory query.
//! On the initial device every allocation is plain `malloc`, as in LLVM.

use crate::devices::registry::{self, device_or_abort};
use crate::omp_api::device_api::{alloc_on, free_on};
use crate::plugin::ol::{self, Device};
use crate::report::boundary::boundary;
use crate::report::policy::message;
use offload::capi::{OL_ALLOC_TYPE_HOST, OL_ALLOC_TYPE_MANAGED};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::LazyLock;

/// The liboffload device behind OpenMP device `device_num`.
fn device_handle(device: usize) -> Option<Device> {
    registry::state().devices.get(device).map(|d| d.handle)
}

/// Host memory the device reaches directly (pinned host memory).
#[no_mangle]
pub extern "C" fn llvm_omp_target_alloc_host(size: usize, device_num: c_int) -> *mut c_void {
    boundary("llvm_omp_target_alloc_host", || {
        alloc_on(
            size,
            device_num,
            OL_ALLOC_TYPE_HOST,
            "llvm_omp_target_alloc_host",
        )
    })
}

/// Memory both the host and the device use at the same address (managed memory).
#[no_mangle]
pub extern "C" fn llvm_omp_target_alloc_shared(size: usize, device_num: c_int) -> *mut c_void {
    boundary("llvm_omp_target_alloc_shared", || {
        alloc_on(
            size,
            device_num,
            OL_ALLOC_TYPE_MANAGED,
            "llvm_omp_target_alloc_shared",
        )
    })
}

/// Frees what `llvm_omp_target_alloc_host` returned.
///
/// # Safety
/// `ptr` is NULL or came from `llvm_omp_target_alloc_host(_, device_num)`.
#[no_mangle]
pub unsafe extern "C" fn llvm_omp_target_free_host(ptr: *mut c_void, device_num: c_int) {
    boundary("llvm_omp_target_free_host", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { free_on(ptr, device_num, "llvm_omp_target_free_host") }
    })
}

/// Frees what `llvm_omp_target_alloc_shared` returned.
///
/// # Safety
/// `ptr` is NULL or came from `llvm_omp_target_alloc_shared(_, device_num)`.
#[no_mangle]
pub unsafe extern "C" fn llvm_omp_target_free_shared(ptr: *mut c_void, device_num: c_int) {
    boundary("llvm_omp_target_free_shared", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { free_on(ptr, device_num, "llvm_omp_target_free_shared") }
    })
}

/// The address each lock handed out (host address and device -> the address liboffload
/// returned), so that unlocking by the host address undoes the right registration.
/// Keyed by (device handle, host address); a stack, as the same range may be locked again.
type Locks = HashMap<(usize, usize), Vec<usize>>;
static LOCKS: LazyLock<Mutex<Locks>> = LazyLock::new(Mutex::default);

fn device_key(handle: Device) -> usize {
    handle.0 as usize
}

/// Page-locks `size` bytes of host memory at `ptr` for `device_num`; returns the address
/// the device uses for it (on the host device, `ptr` itself, as LLVM's host plugin), or
/// NULL when it cannot. LLVM treats the initial device as an invalid device here (a
/// fatal error); this library answers NULL.
///
/// # Safety
/// `ptr` is host memory of at least `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn llvm_omp_target_lock_mem(
    ptr: *mut c_void,
    size: usize,
    device_num: c_int,
) -> *mut c_void {
    boundary("llvm_omp_target_lock_mem", || {
        let Some(handle) = device_handle(device_or_abort(i64::from(device_num))) else {
            return std::ptr::null_mut();
        };
        match ol::register(handle, ptr as usize, size) {
            Ok(pinned) => {
                LOCKS
                    .lock()
                    .entry((device_key(handle), ptr as usize))
                    .or_default()
                    .push(pinned);
                pinned as *mut c_void
            }
            Err(e) => {
                message(&format!("error: llvm_omp_target_lock_mem: {e}"));
                std::ptr::null_mut()
            }
        }
    })
}

/// Undoes one `llvm_omp_target_lock_mem(ptr, _, device_num)`.
///
/// # Safety
/// `ptr` was locked for `device_num`.
#[no_mangle]
pub unsafe extern "C" fn llvm_omp_target_unlock_mem(ptr: *mut c_void, device_num: c_int) {
    boundary("llvm_omp_target_unlock_mem", || {
        let Some(handle) = device_handle(device_or_abort(i64::from(device_num))) else {
            return;
        };
        let pinned = {
            let mut locks = LOCKS.lock();
            let key = (device_key(handle), ptr as usize);
            let pinned = locks.get_mut(&key).and_then(Vec::pop);
            if locks.get(&key).is_some_and(Vec::is_empty) {
                locks.remove(&key);
            }
            pinned
        };
        let Some(pinned) = pinned else {
            message("error: llvm_omp_target_unlock_mem: the memory is not locked");
            return;
        };
        if let Err(e) = ol::unregister(handle, pinned) {
            message(&format!("error: llvm_omp_target_unlock_mem: {e}"));
        }
    })
}

/// A kernel's dynamic shared memory, asked from the host: there is none on the host
/// side, so NULL, as LLVM answers.
#[no_mangle]
pub extern "C" fn llvm_omp_target_dynamic_shared_alloc() -> *mut c_void {
    boundary("llvm_omp_target_dynamic_shared_alloc", || {
        std::ptr::null_mut()
    })
}
