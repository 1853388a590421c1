//! olIterateDevices, olGetDeviceInfo, olGetDeviceInfoSize.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::info;
use crate::capi::types::*;
use crate::plugin::foundation::error::Result;
use crate::plugin::DeviceInfo;
use crate::runtime::Runtime;
use std::ffi::c_void;
use std::ptr::null;

/// Calls `Callback` once per device of every platform (the host platform's last) until it
/// returns false.
#[no_mangle]
pub extern "C" fn olIterateDevices(
    Callback: ol_device_iterate_cb_t,
    UserData: *mut c_void,
) -> ol_result_t {
    iterate(Callback, UserData, null())
}

/// `olIterateDevices` with the caller's source location.
#[no_mangle]
pub extern "C" fn olIterateDevicesWithCodeLoc(
    Callback: ol_device_iterate_cb_t,
    UserData: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    iterate(Callback, UserData, CodeLocation)
}

fn iterate(
    callback: ol_device_iterate_cb_t,
    user_data: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    args::iterate("olIterateDevices", loc, callback, user_data, |rt, i| {
        rt.devices.get(i).map(|x| x.handle())
    })
}

const DEVICE_INFO_EXPECTED: &str =
    "an ol_device_info_t: OL_DEVICE_INFO_TYPE (0) to OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF (28), or the extensions OL_DEVICE_INFO_NUM_LANES (0x10000) to OL_DEVICE_INFO_NATIVE_CONTEXT (0x10002)";

/// Hands over the device's answer for `key`, borrowed from its cache: callers poll info
/// in loops.
fn device_answer(
    rt: &Runtime,
    device: ol_device_handle_t,
    key: u32,
    answer: info::Answer<'_>,
) -> Result<()> {
    let d = args::device(rt, device, "Device")?;
    let key: DeviceInfo = args::enumeration(key, "PropName", DEVICE_INFO_EXPECTED)?;
    let value = d.info_ref(key).as_ref().map_err(Clone::clone)?;
    answer(value, &key)
}

/// Writes one property of `Device` to `PropValue` (`PropSize` bytes available). A value
/// the backend cannot know is `OL_ERRC_UNSUPPORTED`.
#[no_mangle]
pub extern "C" fn olGetDeviceInfo(
    Device: ol_device_handle_t,
    PropName: ol_device_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
) -> ol_result_t {
    get_info(Device, PropName, PropSize, PropValue, null())
}

/// `olGetDeviceInfo` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetDeviceInfoWithCodeLoc(
    Device: ol_device_handle_t,
    PropName: ol_device_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info(Device, PropName, PropSize, PropValue, CodeLocation)
}

fn get_info(
    device: ol_device_handle_t,
    key: u32,
    size: usize,
    out: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let subject = info::Subject::Handle("Device", device as *const c_void);
    info::query(
        info::Keys::Device,
        subject,
        key,
        info::Asked::Value {
            prop_size: size,
            out,
        },
        loc,
        |rt, answer| device_answer(rt, device, key, answer),
    )
}

/// Writes the bytes `olGetDeviceInfo` needs for `PropName` to `PropSizeRet`.
#[no_mangle]
pub extern "C" fn olGetDeviceInfoSize(
    Device: ol_device_handle_t,
    PropName: ol_device_info_raw_t,
    PropSizeRet: *mut usize,
) -> ol_result_t {
    get_info_size(Device, PropName, PropSizeRet, null())
}

/// `olGetDeviceInfoSize` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetDeviceInfoSizeWithCodeLoc(
    Device: ol_device_handle_t,
    PropName: ol_device_info_raw_t,
    PropSizeRet: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info_size(Device, PropName, PropSizeRet, CodeLocation)
}

fn get_info_size(
    device: ol_device_handle_t,
    key: u32,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let subject = info::Subject::Handle("Device", device as *const c_void);
    info::query(
        info::Keys::Device,
        subject,
        key,
        info::Asked::Size(out),
        loc,
        |rt, answer| device_answer(rt, device, key, answer),
    )
}
