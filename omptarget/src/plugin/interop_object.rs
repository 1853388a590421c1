//! The interop objects this library makes (the `interop init` construct on a GPU): the
//! vendor's device, context and, for `targetsync`, a queue of the device's, read through
//! liboffload's native-handle extensions. The answers to the property queries follow
//! LLVM 19's libomptarget with its CUDA and AMDGPU plugins (quirks included: every object
//! says its runtime is CUDA, as LLVM's do). An object is only read when this library
//! made it and has not destroyed it: the queries are given arbitrary pointers.

use crate::plugin::ol::{self, Device};
use offload::capi::{OL_DEVICE_INFO_NATIVE_CONTEXT, OL_DEVICE_INFO_NATIVE_HANDLE};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_void};

/// `omp_interop_rc_t`.
pub const OMP_IRC_NO_VALUE: c_int = 1;
pub const OMP_IRC_SUCCESS: c_int = 0;
pub const OMP_IRC_EMPTY: c_int = -1;
pub const OMP_IRC_OUT_OF_RANGE: c_int = -2;
pub const OMP_IRC_TYPE_INT: c_int = -3;
pub const OMP_IRC_TYPE_PTR: c_int = -4;
pub const OMP_IRC_TYPE_STR: c_int = -5;
pub const OMP_IRC_OTHER: c_int = -6;

/// `omp_interop_property_t`, from `omp_ipr_fr_id` (-1) down to `omp_ipr_targetsync` (-9).
const FR_ID: c_int = -1;
const FR_NAME: c_int = -2;
const VENDOR: c_int = -3;
const VENDOR_NAME: c_int = -4;
const DEVICE_NUM: c_int = -5;
const PLATFORM: c_int = -6;
const DEVICE: c_int = -7;
const DEVICE_CONTEXT: c_int = -8;
const TARGETSYNC: c_int = -9;

/// `kmp_interop_type_tasksync`: the object carries a queue (`init(targetsync: ...)`).
pub const INTEROP_TYPE_TASKSYNC: i32 = 2;
/// LLVM 19's `omp_foreign_runtime_ids_t::cuda` and `omp_interop_backend_type_cuda_1`,
/// the values every object of its carries.
const VENDOR_CUDA: isize = 1;
const BACKEND_TYPE_CUDA_1: isize = 1;

pub struct InteropObject {
    interop_type: i32,
    device_num: i64,
    /// Made for a device number that names no offload device: LLVM makes such an
    /// object without handles (it only records the error), and `destroy` leaves it.
    no_device: bool,
    /// The vendor's device handle (a CUdevice: device 0 is 0, which LLVM reports as "no
    /// value") and context (NULL on AMDGPU).
    native_device: usize,
    native_context: usize,
    /// For `targetsync`: the queue and its native handle.
    queue: Option<ol::Queue>,
    targetsync: usize,
}

/// The objects alive, by address.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

impl InteropObject {
    /// An object for `device` (OpenMP device `device_num`), or `None` where liboffload
    /// has no native handle for it (the host device, remote devices).
    pub fn create(
        interop_type: i32,
        device_num: i64,
        device: Device,
    ) -> Result<*mut c_void, String> {
        let native_device: usize = ol::device_info(device, OL_DEVICE_INFO_NATIVE_HANDLE)?;
        let native_context: usize =
            ol::device_info(device, OL_DEVICE_INFO_NATIVE_CONTEXT).unwrap_or(0);
        let (queue, targetsync) = if interop_type == INTEROP_TYPE_TASKSYNC {
            let queue = ol::create_queue(device)?;
            match ol::native_queue(&queue) {
                Ok(native) => (Some(queue), native),
                Err(e) => {
                    let _ = ol::destroy_queue(queue);
                    return Err(e);
                }
            }
        } else {
            (None, 0)
        };
        Ok(InteropObject {
            interop_type,
            device_num,
            no_device: false,
            native_device,
            native_context,
            queue,
            targetsync,
        }
        .publish())
    }

    /// The object LLVM makes for a device number that names no offload device.
    pub fn without_device(interop_type: i32, device_num: i64) -> *mut c_void {
        InteropObject {
            interop_type,
            device_num,
            no_device: true,
            native_device: 0,
            native_context: 0,
            queue: None,
            targetsync: 0,
        }
        .publish()
    }

    fn publish(self) -> *mut c_void {
        let object = Box::into_raw(Box::new(self));
        LIVE.lock()
            .get_or_insert_with(HashSet::new)
            .insert(object as usize);
        object.cast()
    }

    /// Whether `interop destroy` leaves the object: LLVM leaves one made for no device.
    pub fn kept_by_destroy(object: *const c_void) -> bool {
        Self::with(object, |o| o.no_device).unwrap_or(false)
    }

    /// Ends an object this library made (its queue's work done first); `false` for any
    /// other pointer, which is left alone.
    pub fn destroy(object: *mut c_void) -> bool {
        let ours = LIVE
            .lock()
            .as_mut()
            .is_some_and(|live| live.remove(&(object as usize)));
        if ours {
            // SAFETY: made by `create` with Box::into_raw and just taken out of LIVE, so
            // nothing else frees or reads it any more.
            let object = unsafe { Box::from_raw(object.cast::<InteropObject>()) };
            if let Some(queue) = object.queue {
                if let Err(e) = ol::destroy_queue(queue) {
                    crate::report::policy::message(&format!(
                        "error: destroying an interop object: {e}"
                    ));
                }
            }
        }
        ours
    }

    /// Runs `f` on the object `interop` points to, if it is one of ours and alive.
    fn with<R>(interop: *const c_void, f: impl FnOnce(&InteropObject) -> R) -> Option<R> {
        let live = LIVE.lock();
        if !live.as_ref()?.contains(&(interop as usize)) {
            return None;
        }
        // SAFETY: in LIVE, so made by `create` and not destroyed; the lock keeps
        // `destroy` from freeing it meanwhile.
        Some(f(unsafe { &*interop.cast::<InteropObject>() }))
    }

    /// LLVM's check before every query: `Err(code)` when there is no answer to give.
    fn check(&self, property: c_int) -> Result<(), c_int> {
        let tasksync = self.interop_type == INTEROP_TYPE_TASKSYNC;
        match property {
            TARGETSYNC if !tasksync => Err(OMP_IRC_OTHER),
            DEVICE | DEVICE_CONTEXT if tasksync => Err(OMP_IRC_OTHER),
            _ => Ok(()),
        }
    }
}

/// The code a query of the wrong type reports: the type the property has.
fn type_of(property: c_int) -> c_int {
    match property {
        FR_ID | VENDOR | DEVICE_NUM | PLATFORM => OMP_IRC_TYPE_INT,
        FR_NAME | VENDOR_NAME => OMP_IRC_TYPE_STR,
        _ => OMP_IRC_TYPE_PTR,
    }
}

/// A query's answer and its return code.
pub struct Answer<T> {
    pub value: T,
    pub code: c_int,
}

/// Out-of-range ids first; then `omp_interop_none` is empty; then an object that is not
/// one of ours (`omp_irc_other`); then the object's own answer.
fn query<T: Default>(
    interop: *const c_void,
    property: c_int,
    answer: impl FnOnce(&InteropObject) -> Answer<T>,
) -> Answer<T> {
    let fail = |code| Answer {
        value: T::default(),
        code,
    };
    if !(TARGETSYNC..0).contains(&property) {
        return fail(OMP_IRC_OUT_OF_RANGE);
    }
    if interop.is_null() {
        return fail(OMP_IRC_EMPTY);
    }
    InteropObject::with(interop, |object| match object.check(property) {
        Err(code) => fail(code),
        Ok(()) => answer(object),
    })
    .unwrap_or_else(|| fail(OMP_IRC_OTHER))
}

pub fn int_property(interop: *const c_void, property: c_int) -> Answer<isize> {
    query(interop, property, |object| {
        let value = match property {
            FR_ID => BACKEND_TYPE_CUDA_1,
            VENDOR => VENDOR_CUDA,
            DEVICE_NUM => object.device_num as isize,
            _ => {
                return Answer {
                    value: 0,
                    code: type_of(property),
                }
            }
        };
        Answer {
            value,
            code: OMP_IRC_SUCCESS,
        }
    })
}

/// Pointer answers as addresses (0: NULL).
pub fn ptr_property(interop: *const c_void, property: c_int) -> Answer<usize> {
    query(interop, property, |object| {
        let (value, code) = match property {
            DEVICE if object.native_device == 0 => (0, OMP_IRC_NO_VALUE),
            DEVICE => (object.native_device, OMP_IRC_SUCCESS),
            DEVICE_CONTEXT => (object.native_context, OMP_IRC_SUCCESS),
            TARGETSYNC => (object.targetsync, OMP_IRC_SUCCESS),
            _ => (0, type_of(property)),
        };
        Answer { value, code }
    })
}

/// String answers (static strings; NULL where there is none).
pub fn str_property(interop: *const c_void, property: c_int) -> Answer<usize> {
    query(interop, property, |object| {
        let text: &'static std::ffi::CStr = match property {
            // LLVM answers the object's kind for the runtime's id.
            FR_ID if object.interop_type == INTEROP_TYPE_TASKSYNC => c"tasksync",
            FR_ID => c"device+context",
            VENDOR_NAME => c"cuda",
            _ => {
                return Answer {
                    value: 0,
                    code: type_of(property),
                }
            }
        };
        Answer {
            value: text.as_ptr() as usize,
            code: OMP_IRC_SUCCESS,
        }
    })
}

/// A string answer as C wants it.
pub fn as_c_str(address: usize) -> *const c_char {
    address as *const c_char
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(interop_type: i32, native_device: usize) -> InteropObject {
        InteropObject {
            interop_type,
            device_num: 3,
            no_device: false,
            native_device,
            native_context: 0x1000,
            queue: None,
            targetsync: 0x2000,
        }
    }

    /// Puts `o` in LIVE as `create` would, runs `f` with its address, then ends it.
    fn with_live(o: InteropObject, f: impl FnOnce(*const c_void)) {
        let p = Box::into_raw(Box::new(o));
        LIVE.lock()
            .get_or_insert_with(HashSet::new)
            .insert(p as usize);
        f(p as *const c_void);
        assert!(InteropObject::destroy(p.cast()));
        assert!(
            !InteropObject::destroy(p.cast()),
            "a second destroy is refused"
        );
    }

    #[test]
    fn range_then_empty_then_foreign() {
        let none = std::ptr::null();
        assert_eq!(int_property(none, 0).code, OMP_IRC_OUT_OF_RANGE);
        assert_eq!(int_property(none, -10).code, OMP_IRC_OUT_OF_RANGE);
        assert_eq!(int_property(none, -1).code, OMP_IRC_EMPTY);
        assert_eq!(ptr_property(none, -9).code, OMP_IRC_EMPTY);
        let foreign = 8 as *const c_void;
        assert_eq!(str_property(foreign, -3).code, OMP_IRC_OTHER);
    }

    #[test]
    fn a_device_object_answers_as_llvm_19() {
        with_live(object(1, 7), |p| {
            let a = int_property(p, FR_ID);
            assert_eq!((a.value, a.code), (1, OMP_IRC_SUCCESS));
            assert_eq!(int_property(p, DEVICE_NUM).value, 3);
            assert_eq!(int_property(p, VENDOR_NAME).code, OMP_IRC_TYPE_STR);
            assert_eq!(ptr_property(p, DEVICE).value, 7);
            assert_eq!(ptr_property(p, DEVICE_CONTEXT).value, 0x1000);
            assert_eq!(ptr_property(p, TARGETSYNC).code, OMP_IRC_OTHER);
            assert_eq!(ptr_property(p, FR_ID).code, OMP_IRC_TYPE_INT);
            assert_eq!(str_property(p, FR_NAME).code, OMP_IRC_TYPE_STR);
            let s = str_property(p, FR_ID);
            // SAFETY: a static C string's address.
            let text = unsafe { std::ffi::CStr::from_ptr(as_c_str(s.value)) };
            assert_eq!(text.to_str().unwrap(), "device+context");
        });
    }

    #[test]
    fn a_targetsync_object_gives_its_queue_not_its_device() {
        with_live(object(INTEROP_TYPE_TASKSYNC, 0), |p| {
            assert_eq!(ptr_property(p, TARGETSYNC).value, 0x2000);
            assert_eq!(ptr_property(p, DEVICE).code, OMP_IRC_OTHER);
            assert_eq!(ptr_property(p, DEVICE_CONTEXT).code, OMP_IRC_OTHER);
        });
        // CUDA device 0 is the handle 0: LLVM says "no value".
        with_live(object(1, 0), |p| {
            let a = ptr_property(p, DEVICE);
            assert_eq!((a.value, a.code), (0, OMP_IRC_NO_VALUE));
        });
    }
}
