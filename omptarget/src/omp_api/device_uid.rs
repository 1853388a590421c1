//! OpenMP 6.0's device identifiers, `omp_get_uid_from_device` and
//! `omp_get_device_from_uid` (exported by `libomptarget.so.22.1`): liboffload's
//! `OL_DEVICE_INFO_UID` for an offload device (numbered when one liboffload device is
//! several OpenMP devices), and LLVM's "HOST" for the initial device
//! (libomp answers the same when no libomptarget is loaded).

use crate::devices::registry;
use crate::omp_api::device_api::omp_get_initial_device;
use crate::plugin::ol;
use crate::report::boundary::boundary;
use crate::report::policy::message;
use parking_lot::Mutex;
use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr::null;

/// The initial device's UID.
const HOST_UID: &CStr = c"HOST";
/// `omp_invalid_device`.
const OMP_INVALID_DEVICE: c_int = -2;
/// `omp_initial_device`.
const OMP_INITIAL_DEVICE: c_int = -1;

/// Every UID handed out. C callers keep the pointer without freeing it, so each string
/// lives as long as the process; there is one per device, so they are few.
static HANDED_OUT: Mutex<Vec<&'static CStr>> = Mutex::new(Vec::new());

fn intern(uid: &str) -> Option<&'static CStr> {
    let mut handed_out = HANDED_OUT.lock();
    if let Some(known) = handed_out.iter().find(|u| u.to_bytes() == uid.as_bytes()) {
        return Some(known);
    }
    let owned: &'static CStr = Box::leak(CString::new(uid).ok()?.into_boxed_c_str());
    handed_out.push(owned);
    Some(owned)
}

/// The UID of OpenMP device `device` (`None`: no such device, or liboffload has none).
fn uid_of(device: usize) -> Option<&'static CStr> {
    // The host device backs several OpenMP devices: each gets its own UID, the
    // liboffload UID with the copy's number appended.
    let (handle, copy, copies) = {
        let state = registry::state();
        if device >= state.num_devices() {
            return None;
        }
        let handle = state.devices[device].handle;
        let same = |d: &&registry::OmpDevice| d.handle == handle;
        let copy = state.devices[..device].iter().filter(same).count();
        (handle, copy, state.devices.iter().filter(same).count())
    };
    match ol::device_uid(handle) {
        Ok(uid) if copies > 1 => intern(&format!("{uid}-{copy}")),
        Ok(uid) => intern(&uid),
        Err(e) => {
            message(&format!("error: {e}"));
            None
        }
    }
}

/// The UID of `device_num`: "HOST" for the initial device, NULL for
/// `omp_invalid_device` or a device that does not exist.
#[no_mangle]
pub extern "C" fn omp_get_uid_from_device(device_num: c_int) -> *const c_char {
    boundary("omp_get_uid_from_device", || {
        if device_num == OMP_INVALID_DEVICE {
            return null();
        }
        if device_num == OMP_INITIAL_DEVICE || device_num == omp_get_initial_device() {
            return HOST_UID.as_ptr();
        }
        usize::try_from(device_num)
            .ok()
            .and_then(uid_of)
            .map_or(null(), CStr::as_ptr)
    })
}

/// The device number whose UID is `device_uid` (`omp_invalid_device` when none is).
///
/// # Safety
/// `device_uid` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn omp_get_device_from_uid(device_uid: *const c_char) -> c_int {
    boundary("omp_get_device_from_uid", || {
        if device_uid.is_null() {
            return OMP_INVALID_DEVICE;
        }
        // SAFETY: non-NULL: the caller's C string.
        let wanted = unsafe { CStr::from_ptr(device_uid) };
        if wanted == HOST_UID {
            return omp_get_initial_device();
        }
        let count = registry::state().num_devices();
        (0..count)
            .find(|&device| uid_of(device) == Some(wanted))
            .map_or(OMP_INVALID_DEVICE, |device| device as c_int)
    })
}
