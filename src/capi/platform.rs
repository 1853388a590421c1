//! olIteratePlatforms, olGetPlatformInfo, olGetPlatformInfoSize.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::info;
use crate::capi::types::*;
use crate::plugin::foundation::error::Result;
use crate::runtime::PlatformInfo;
use crate::runtime::Runtime;
use std::ffi::c_void;
use std::ptr::null;

/// Calls `Callback` once per platform (the host platform last) until it returns false.
#[no_mangle]
pub extern "C" fn olIteratePlatforms(
    Callback: ol_platform_iterate_cb_t,
    UserData: *mut c_void,
) -> ol_result_t {
    iterate(Callback, UserData, null())
}

/// `olIteratePlatforms` with the caller's source location.
#[no_mangle]
pub extern "C" fn olIteratePlatformsWithCodeLoc(
    Callback: ol_platform_iterate_cb_t,
    UserData: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    iterate(Callback, UserData, CodeLocation)
}

fn iterate(
    callback: ol_platform_iterate_cb_t,
    user_data: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    args::iterate("olIteratePlatforms", loc, callback, user_data, |rt, i| {
        rt.platforms.get(i).map(|x| x.handle())
    })
}

const PLATFORM_INFO_EXPECTED: &str =
    "an ol_platform_info_t: OL_PLATFORM_INFO_NAME, VENDOR_NAME, VERSION or BACKEND (0..3)";

fn platform_info(
    rt: &Runtime,
    platform: ol_platform_handle_t,
    key: u32,
    answer: info::Answer<'_>,
) -> Result<()> {
    let p = args::platform(rt, platform, "Platform")?;
    let key: PlatformInfo = args::enumeration(key, "PropName", PLATFORM_INFO_EXPECTED)?;
    answer(p.info(key), &key)
}

/// Writes one property of `Platform` to `PropValue` (`PropSize` bytes available).
#[no_mangle]
pub extern "C" fn olGetPlatformInfo(
    Platform: ol_platform_handle_t,
    PropName: ol_platform_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
) -> ol_result_t {
    get_info(Platform, PropName, PropSize, PropValue, null())
}

/// `olGetPlatformInfo` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetPlatformInfoWithCodeLoc(
    Platform: ol_platform_handle_t,
    PropName: ol_platform_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info(Platform, PropName, PropSize, PropValue, CodeLocation)
}

fn get_info(
    platform: ol_platform_handle_t,
    key: u32,
    size: usize,
    out: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = platform as *const c_void;
    info::query(
        info::Keys::Platform,
        info::Subject::Handle("Platform", handle),
        key,
        info::Asked::Value {
            prop_size: size,
            out,
        },
        loc,
        |rt, answer| platform_info(rt, platform, key, answer),
    )
}

/// Writes the bytes `olGetPlatformInfo` needs for `PropName` to `PropSizeRet`.
#[no_mangle]
pub extern "C" fn olGetPlatformInfoSize(
    Platform: ol_platform_handle_t,
    PropName: ol_platform_info_raw_t,
    PropSizeRet: *mut usize,
) -> ol_result_t {
    get_info_size(Platform, PropName, PropSizeRet, null())
}

/// `olGetPlatformInfoSize` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetPlatformInfoSizeWithCodeLoc(
    Platform: ol_platform_handle_t,
    PropName: ol_platform_info_raw_t,
    PropSizeRet: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info_size(Platform, PropName, PropSizeRet, CodeLocation)
}

fn get_info_size(
    platform: ol_platform_handle_t,
    key: u32,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = platform as *const c_void;
    info::query(
        info::Keys::Platform,
        info::Subject::Handle("Platform", handle),
        key,
        info::Asked::Size(out),
        loc,
        |rt, answer| platform_info(rt, platform, key, answer),
    )
}
