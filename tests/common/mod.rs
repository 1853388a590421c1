//! Helpers shared by the C API tests written in Rust.
#![allow(dead_code)]

use offload::capi::*;
use std::ffi::{c_void, CStr};

/// The code of a result (`OL_ERRC_SUCCESS` for NULL).
pub fn code(r: ol_result_t) -> u32 {
    if r.is_null() {
        OL_ERRC_SUCCESS
    } else {
        // SAFETY: non-NULL results point to interned, never-freed errors.
        unsafe { (*r).Code }
    }
}

pub fn details(r: ol_result_t) -> String {
    if r.is_null() {
        return String::new();
    }
    // SAFETY: as above; `Details` is a NUL-terminated string owned by the library.
    unsafe { CStr::from_ptr((*r).Details) }
        .to_string_lossy()
        .into_owned()
}

#[track_caller]
pub fn ok(r: ol_result_t) {
    assert!(
        r.is_null(),
        "expected success, got {}: {}",
        code(r),
        details(r)
    );
}

#[track_caller]
pub fn fails(r: ol_result_t, expected: u32) -> String {
    assert_eq!(code(r), expected, "wrong error: {}", details(r));
    let d = details(r);
    assert!(!d.is_empty(), "errors carry details");
    d
}

unsafe extern "C" fn first_device(d: ol_device_handle_t, out: *mut c_void) -> bool {
    // SAFETY: the test passes a pointer to a handle.
    unsafe { *(out as *mut ol_device_handle_t) = d };
    false
}

unsafe extern "C" fn collect<T>(handle: *mut T, out: *mut c_void) -> bool {
    // SAFETY: the callers pass a pointer to a Vec of handles.
    unsafe { (*(out as *mut Vec<*mut T>)).push(handle) };
    true
}

/// Every device `olIterateDevices` lists.
pub fn devices() -> Vec<ol_device_handle_t> {
    let mut all: Vec<ol_device_handle_t> = Vec::new();
    ok(olIterateDevices(
        Some(collect::<ol_device_impl_t>),
        &mut all as *mut _ as *mut c_void,
    ));
    all
}

/// Every platform `olIteratePlatforms` lists.
pub fn platforms() -> Vec<ol_platform_handle_t> {
    let mut all: Vec<ol_platform_handle_t> = Vec::new();
    ok(olIteratePlatforms(
        Some(collect::<ol_platform_impl_t>),
        &mut all as *mut _ as *mut c_void,
    ));
    all
}

/// The host device (the only device on a machine without GPUs).
pub fn host_device() -> ol_device_handle_t {
    let mut device: ol_device_handle_t = std::ptr::null_mut();
    ok(olIterateDevices(
        Some(first_device),
        &mut device as *mut _ as *mut c_void,
    ));
    assert!(!device.is_null());
    device
}

/// A 4-byte device property (`olGetDeviceInfo` with PropSize 4).
pub fn device_info_u32(device: ol_device_handle_t, key: ol_device_info_raw_t) -> u32 {
    let mut v = 0u32;
    ok(olGetDeviceInfo(
        device,
        key,
        4,
        &mut v as *mut u32 as *mut c_void,
    ));
    v
}

/// The first device of type `kind` (`OL_DEVICE_TYPE_*`).
pub fn first_of(kind: u32) -> ol_device_handle_t {
    *devices()
        .iter()
        .find(|&&d| device_info_u32(d, OL_DEVICE_INFO_TYPE) == kind)
        .unwrap_or_else(|| panic!("no device of type {kind}"))
}

/// A program of `image` on `device`, and its kernel `name`.
pub fn program_with_kernel(
    device: ol_device_handle_t,
    image: &[u8],
    name: &CStr,
) -> (ol_program_handle_t, ol_symbol_handle_t) {
    let mut program = std::ptr::null_mut();
    ok(olCreateProgram(
        device,
        image.as_ptr() as *const c_void,
        image.len(),
        &mut program,
    ));
    let mut kernel = std::ptr::null_mut();
    ok(olGetSymbol(
        program,
        name.as_ptr(),
        OL_SYMBOL_KIND_KERNEL,
        &mut kernel,
    ));
    (program, kernel)
}

/// A one-dimensional launch of `groups` work-groups of `size` work-items each.
pub fn launch_args(groups: u32, size: u32) -> ol_kernel_launch_size_args_t {
    ol_kernel_launch_size_args_t {
        Dimensions: 1,
        NumGroups: ol_dimensions_t {
            x: groups,
            y: 1,
            z: 1,
        },
        GroupSize: ol_dimensions_t {
            x: size,
            y: 1,
            z: 1,
        },
        DynSharedMemory: 0,
    }
}
