//! The OpenMP device API that lives in libomptarget: device numbers, device memory,
//! copies and presence.

use crate::devices::registry::{self, resolve, Target};
use crate::ompt::events;
use crate::plugin::device_memory;
use crate::plugin::ol::{self, Device};
use crate::report::boundary::boundary;
use crate::report::policy::message;
use offload::capi::OL_ALLOC_TYPE_DEVICE;
use std::ffi::{c_int, c_void};

/// How many offload devices there are (the host itself not counted).
#[no_mangle]
pub extern "C" fn omp_get_num_devices() -> c_int {
    boundary("omp_get_num_devices", || {
        registry::state().num_devices() as c_int
    })
}

/// The host's device number: one past the offload devices, as in LLVM.
#[no_mangle]
pub extern "C" fn omp_get_initial_device() -> c_int {
    boundary("omp_get_initial_device", || omp_get_num_devices())
}

/// Code on the host runs on the initial device.
#[no_mangle]
pub extern "C" fn omp_get_device_num() -> c_int {
    boundary("omp_get_device_num", || omp_get_initial_device())
}

/// Memory of `kind` (an `OL_ALLOC_TYPE_*`) and `size` bytes on `device_num`: `malloc` on
/// the initial device, as in LLVM; NULL on failure or for a non-positive size. `name` is
/// the caller's, for the error line.
pub(crate) fn alloc_on(size: usize, device_num: c_int, kind: u32, name: &str) -> *mut c_void {
    if size == 0 || (size as isize) < 0 {
        return std::ptr::null_mut();
    }
    match resolve(i64::from(device_num)) {
        // SAFETY: plain malloc; freed by `free_on` on the initial device.
        Some(Target::Host) => unsafe { libc::malloc(size) },
        Some(Target::Device(device)) => {
            let Some(handle) = registry::state().devices.get(device).map(|d| d.handle) else {
                return std::ptr::null_mut();
            };
            events::routine(|| {
                events::alloc(device, 0, size, || {
                    device_memory::alloc_kind(handle, kind, size)
                })
            })
            .map_or_else(
                |e| {
                    message(&format!("error: {name}: {e}"));
                    std::ptr::null_mut()
                },
                |ptr| ptr as *mut c_void,
            )
        }
        None => std::ptr::null_mut(),
    }
}

/// Frees what `alloc_on` returned for `device_num`.
///
/// # Safety
/// `ptr` is NULL or came from `alloc_on(_, device_num, ..)` and is not freed yet.
pub(crate) unsafe fn free_on(ptr: *mut c_void, device_num: c_int, name: &str) {
    if ptr.is_null() {
        return;
    }
    match resolve(i64::from(device_num)) {
        // SAFETY: on the initial device the allocator was malloc (the caller's promise).
        Some(Target::Host) => unsafe { libc::free(ptr) },
        Some(Target::Device(device)) => {
            let freed = events::routine(|| {
                events::delete(device, ptr as usize, || device_memory::free(ptr as usize))
            });
            if let Err(e) = freed {
                message(&format!("error: {name}: {e}"));
            }
        }
        None => {}
    }
}

/// Device memory of `size` bytes on `device_num` (host memory for the initial device);
/// NULL on failure or for a non-positive size.
#[no_mangle]
pub extern "C" fn omp_target_alloc(size: usize, device_num: c_int) -> *mut c_void {
    boundary("omp_target_alloc", || {
        alloc_on(size, device_num, OL_ALLOC_TYPE_DEVICE, "omp_target_alloc")
    })
}

/// Frees what `omp_target_alloc` returned for `device_num`.
///
/// # Safety
/// `ptr` is NULL or came from `omp_target_alloc(_, device_num)` and is not freed yet.
#[no_mangle]
pub unsafe extern "C" fn omp_target_free(ptr: *mut c_void, device_num: c_int) {
    boundary("omp_target_free", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { free_on(ptr, device_num, "omp_target_free") }
    })
}

/// LLVM's device-memory allocator by its explicit name: the same as `omp_target_alloc`.
#[no_mangle]
pub extern "C" fn llvm_omp_target_alloc_device(size: usize, device_num: c_int) -> *mut c_void {
    boundary("llvm_omp_target_alloc_device", || {
        omp_target_alloc(size, device_num)
    })
}

/// Frees what `llvm_omp_target_alloc_device` returned.
///
/// # Safety
/// As `omp_target_free`.
#[no_mangle]
pub unsafe extern "C" fn llvm_omp_target_free_device(ptr: *mut c_void, device_num: c_int) {
    boundary("llvm_omp_target_free_device", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { omp_target_free(ptr, device_num) }
    })
}

/// The liboffload device that holds memory of `device_num` (the host device for the
/// initial device), or `None` for a device that does not exist.
pub(crate) fn memory_device(device_num: c_int) -> Option<Device> {
    // Resolve first: `resolve` takes the registry lock itself.
    let target = resolve(i64::from(device_num))?;
    let state = registry::state();
    match target {
        Target::Host => state.host,
        Target::Device(device) => state.devices.get(device).map(|d| d.handle),
    }
}

/// Copies `length` bytes between any two devices' memory; 0 on success.
#[no_mangle]
pub extern "C" fn omp_target_memcpy(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    boundary("omp_target_memcpy", || {
        if length == 0 {
            return 0;
        }
        if dst.is_null() || src.is_null() {
            message("error: Call to omp_target_memcpy with invalid arguments");
            return -1;
        }
        let (Some(to), Some(from)) = (memory_device(dst_device), memory_device(src_device)) else {
            return -1;
        };
        let (d, s) = ((dst as usize) + dst_offset, (src as usize) + src_offset);
        let copy = || ol::memcpy(d, to, s, from, length);
        let host = omp_get_initial_device();
        // A tool sees each copy as LLVM reports it.
        let copied = match (dst_device == host, src_device == host) {
            (false, true) => {
                events::routine(|| events::transfer(true, dst_device as usize, s, d, length, copy))
            }
            (true, false) => {
                events::routine(|| events::transfer(false, src_device as usize, d, s, length, copy))
            }
            // Between two devices a tool sees what LLVM does with its host devices: a
            // copy to a host buffer and one from it, which is then what happens.
            (false, false) if events::tool_connected() => match memory_device(host) {
                Some(host) => events::routine(|| {
                    let staging = vec![0u8; length];
                    let h = staging.as_ptr() as usize;
                    events::transfer(false, src_device as usize, h, s, length, || {
                        ol::memcpy(h, host, s, from, length)
                    })
                    .and_then(|()| {
                        events::transfer(true, dst_device as usize, h, d, length, || {
                            ol::memcpy(d, to, h, host, length)
                        })
                    })
                }),
                None => copy(),
            },
            _ => copy(),
        };
        match copied {
            Ok(()) => 0,
            Err(e) => {
                message(&format!("error: {e}"));
                -1
            }
        }
    })
}

/// The device address of the byte at `ptr` on OpenMP device `device` when a mapping
/// holds or overlaps it (LLVM looks up one byte, overlaps counting), with LLVM's
/// "Mapping exists" line.
fn mapped_address(device: usize, ptr: usize) -> Option<usize> {
    let state = registry::state();
    let table = &state.devices.get(device)?.table;
    crate::mapping::info_lines::find_mapping(device, table, ptr, 1, false)
        .map(|(_, m)| m.device_address(ptr))
}

/// Whether `ptr` has a device copy on `device_num` (always, on the initial device).
#[no_mangle]
pub extern "C" fn omp_target_is_present(ptr: *const c_void, device_num: c_int) -> c_int {
    boundary("omp_target_is_present", || {
        // NULL is never present, on any device (LLVM answers so before looking at the device).
        if ptr.is_null() {
            return 0;
        }
        match resolve(i64::from(device_num)) {
            Some(Target::Host) => 1,
            Some(Target::Device(device)) => {
                c_int::from(mapped_address(device, ptr as usize).is_some())
            }
            None => 0,
        }
    })
}

/// Whether `size` bytes at `ptr` are guaranteed accessible from `device_num` (OpenMP
/// 5.1; exported by `libomptarget.so.22.1`): always from the initial device (also
/// named -1, `omp_initial_device`, here as in LLVM), never for NULL. For an offload device the answer is "not guaranteed" (0): liboffload has no
/// query for whether a device reaches host memory, and 0 is the answer OpenMP asks for
/// then (LLVM 22's host plugin gives the same).
#[no_mangle]
pub extern "C" fn omp_target_is_accessible(
    ptr: *const c_void,
    _size: usize,
    device_num: c_int,
) -> c_int {
    boundary("omp_target_is_accessible", || {
        if ptr.is_null() {
            return 0;
        }
        if device_num == -1 {
            return 1;
        }
        match resolve(i64::from(device_num)) {
            Some(Target::Host) => 1,
            Some(Target::Device(_)) | None => 0,
        }
    })
}

/// The device address `ptr` is mapped to on `device_num` (itself on the initial device,
/// NULL when unmapped).
#[no_mangle]
pub extern "C" fn omp_get_mapped_ptr(ptr: *const c_void, device_num: c_int) -> *mut c_void {
    boundary("omp_get_mapped_ptr", || {
        if ptr.is_null() {
            return std::ptr::null_mut();
        }
        match resolve(i64::from(device_num)) {
            Some(Target::Host) => ptr.cast_mut(),
            Some(Target::Device(device)) => mapped_address(device, ptr as usize)
                .map_or(std::ptr::null_mut(), |address| address as *mut c_void),
            None => std::ptr::null_mut(),
        }
    })
}
