//! olCreateProgram, olDestroyProgram, olIsValidBinary, olGetSymbol, olGetSymbolInfo[Size].
//! There is no "invalid program" error code: a stale program or symbol handle is
//! `OL_ERRC_INVALID_ARGUMENT`.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::info;
use crate::capi::trace_text::{c_string, enumerator, written, written_handle};
use crate::capi::types::*;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::SymbolKind;
use crate::runtime::program::{Program, Symbol, SymbolInfo};
use crate::runtime::Runtime;
use std::ffi::{c_char, c_void, CStr};
use std::ptr::null;
use std::sync::Arc;

pub(crate) fn live_program(rt: &Runtime, program: ol_program_handle_t) -> Result<Arc<Program>> {
    args::live(
        &rt.programs,
        program,
        "Program",
        "program",
        ErrorCode::InvalidArgument,
    )
}

/// Runs `f` with the live symbol a handle names (the launch path: no reference taken).
pub(crate) fn with_symbol<R>(
    rt: &Runtime,
    symbol: ol_symbol_handle_t,
    name: &str,
    f: impl FnOnce(&Arc<Symbol>) -> Result<R>,
) -> Result<R> {
    args::with_live(
        &rt.symbols,
        symbol,
        name,
        "symbol (or its program was destroyed)",
        ErrorCode::InvalidArgument,
        f,
    )
}

pub(crate) fn live_symbol(
    rt: &Runtime,
    symbol: ol_symbol_handle_t,
    name: &str,
) -> Result<Arc<Symbol>> {
    args::live(
        &rt.symbols,
        symbol,
        name,
        "symbol (or its program was destroyed)",
        ErrorCode::InvalidArgument,
    )
}

/// The caller's image bytes (`Size` of them at `Data`, which was checked non-NULL).
fn image<'a>(data: *const c_void, size: usize) -> &'a [u8] {
    // SAFETY: non-NULL (the caller checked), and the C caller promises `size` readable
    // bytes; they are only read during the call (the plugin copies what it keeps).
    unsafe { std::slice::from_raw_parts(data as *const u8, size) }
}

/// Loads a device image on `Device`. The library copies the image. A wrong image is
/// `OL_ERRC_INVALID_BINARY`, with a reason naming the image and the device.
#[no_mangle]
pub extern "C" fn olCreateProgram(
    Device: ol_device_handle_t,
    ProgData: *const c_void,
    ProgDataSize: usize,
    Program: *mut ol_program_handle_t,
) -> ol_result_t {
    create_program(Device, ProgData, ProgDataSize, Program, null())
}

/// `olCreateProgram` with the caller's source location.
#[no_mangle]
pub extern "C" fn olCreateProgramWithCodeLoc(
    Device: ol_device_handle_t,
    ProgData: *const c_void,
    ProgDataSize: usize,
    Program: *mut ol_program_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    create_program(Device, ProgData, ProgDataSize, Program, CodeLocation)
}

fn create_program(
    device: ol_device_handle_t,
    data: *const c_void,
    size: usize,
    out: *mut ol_program_handle_t,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olCreateProgram",
        loc,
        |ok| {
            format!(
                "Device={device:p}, ProgData={data:p}, ProgDataSize={size}, Program={}",
                written_handle(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                args::handle_given(device, "Device")?;
                args::non_null(data, "ProgData")?;
                let out = args::out_ptr(out, "Program")?;
                let d = args::device(rt, device, "Device")?;
                if size == 0 {
                    return Err(Error::invalid_binary(
                        "ProgDataSize is 0: an empty image holds no program; expected the image's length in bytes",
                    ));
                }
                *out = rt.create_program(d, image(data, size))? as ol_program_handle_t;
                Ok(())
            })
        },
    )
}

/// Destroys `Program` and its symbols' handles. Kernels of it still running or enqueued
/// finish first; the image is unloaded after them.
#[no_mangle]
pub extern "C" fn olDestroyProgram(Program: ol_program_handle_t) -> ol_result_t {
    destroy_program(Program, null())
}

/// `olDestroyProgram` with the caller's source location.
#[no_mangle]
pub extern "C" fn olDestroyProgramWithCodeLoc(
    Program: ol_program_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    destroy_program(Program, CodeLocation)
}

fn destroy_program(program: ol_program_handle_t, loc: *const ol_code_location_t) -> ol_result_t {
    call(
        "olDestroyProgram",
        loc,
        |_| format!("Program={program:p}"),
        || {
            args::with_runtime(|rt| {
                live_program(rt, program)?;
                rt.destroy_program(program as usize)
            })
        },
    )
}

/// Writes to `Valid` whether `Device` can load the image (false for an empty one).
#[no_mangle]
pub extern "C" fn olIsValidBinary(
    Device: ol_device_handle_t,
    ProgData: *const c_void,
    ProgDataSize: usize,
    Valid: *mut bool,
) -> ol_result_t {
    is_valid_binary(Device, ProgData, ProgDataSize, Valid, null())
}

/// `olIsValidBinary` with the caller's source location.
#[no_mangle]
pub extern "C" fn olIsValidBinaryWithCodeLoc(
    Device: ol_device_handle_t,
    ProgData: *const c_void,
    ProgDataSize: usize,
    Valid: *mut bool,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    is_valid_binary(Device, ProgData, ProgDataSize, Valid, CodeLocation)
}

fn is_valid_binary(
    device: ol_device_handle_t,
    data: *const c_void,
    size: usize,
    out: *mut bool,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olIsValidBinary",
        loc,
        |ok| {
            format!(
                "Device={device:p}, ProgData={data:p}, ProgDataSize={size}, Valid={}",
                written(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                args::handle_given(device, "Device")?;
                args::non_null(data, "ProgData")?;
                let out = args::out_ptr(out, "Valid")?;
                let d = args::device(rt, device, "Device")?;
                // An empty image is a valid question with the answer "no".
                *out = size > 0 && rt.check_binary(d, image(data, size)).is_ok();
                Ok(())
            })
        },
    )
}

const SYMBOL_KIND_EXPECTED: &str =
    "an ol_symbol_kind_t: OL_SYMBOL_KIND_KERNEL (0) or OL_SYMBOL_KIND_GLOBAL_VARIABLE (1)";

/// Finds the kernel or global variable `Name` of `Program`. The symbol is owned by the
/// program. A symbol of the other kind is `OL_ERRC_SYMBOL_KIND`; none is `NOT_FOUND`.
#[no_mangle]
pub extern "C" fn olGetSymbol(
    Program: ol_program_handle_t,
    Name: *const c_char,
    Kind: ol_symbol_kind_raw_t,
    Symbol: *mut ol_symbol_handle_t,
) -> ol_result_t {
    get_symbol(Program, Name, Kind, Symbol, null())
}

/// `olGetSymbol` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetSymbolWithCodeLoc(
    Program: ol_program_handle_t,
    Name: *const c_char,
    Kind: ol_symbol_kind_raw_t,
    Symbol: *mut ol_symbol_handle_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_symbol(Program, Name, Kind, Symbol, CodeLocation)
}

fn get_symbol(
    program: ol_program_handle_t,
    name: *const c_char,
    kind: u32,
    out: *mut ol_symbol_handle_t,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olGetSymbol",
        loc,
        |ok| {
            format!(
                "Program={program:p}, Name={}, Kind={}, Symbol={}",
                c_string(name),
                enumerator(ol_symbol_kind_t::NAMES, kind),
                written_handle(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                let p = live_program(rt, program)?;
                args::non_null(name, "Name")?;
                // SAFETY: non-NULL, and the caller passes a NUL-terminated string.
                let name = unsafe { CStr::from_ptr(name) }.to_str().map_err(|_| {
                    Error::invalid_argument("Name is not valid UTF-8; symbol names are UTF-8")
                })?;
                let kind: SymbolKind = args::enumeration(kind, "Kind", SYMBOL_KIND_EXPECTED)?;
                let out = args::out_ptr(out, "Symbol")?;
                *out = rt.get_symbol(&p, name, kind)? as ol_symbol_handle_t;
                Ok(())
            })
        },
    )
}

const SYMBOL_INFO_EXPECTED: &str = "an ol_symbol_info_t: OL_SYMBOL_INFO_KIND, GLOBAL_VARIABLE_ADDRESS, GLOBAL_VARIABLE_SIZE (0..2) or the extension OL_SYMBOL_INFO_NAME (0x10000)";

fn symbol_info(
    rt: &Runtime,
    symbol: ol_symbol_handle_t,
    key: u32,
    answer: info::Answer<'_>,
) -> Result<()> {
    let s = live_symbol(rt, symbol, "Symbol")?;
    let key: SymbolInfo = args::enumeration(key, "PropName", SYMBOL_INFO_EXPECTED)?;
    answer(&s.info(key)?, &key)
}

/// Writes one property of `Symbol` to `PropValue`. A global-variable-only key asked of a
/// kernel is `OL_ERRC_SYMBOL_KIND`.
#[no_mangle]
pub extern "C" fn olGetSymbolInfo(
    Symbol: ol_symbol_handle_t,
    PropName: ol_symbol_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
) -> ol_result_t {
    get_info(Symbol, PropName, PropSize, PropValue, null())
}

/// `olGetSymbolInfo` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetSymbolInfoWithCodeLoc(
    Symbol: ol_symbol_handle_t,
    PropName: ol_symbol_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info(Symbol, PropName, PropSize, PropValue, CodeLocation)
}

fn get_info(
    symbol: ol_symbol_handle_t,
    key: u32,
    size: usize,
    out: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = symbol as *const c_void;
    info::query(
        info::Keys::Symbol,
        info::Subject::Handle("Symbol", handle),
        key,
        info::Asked::Value {
            prop_size: size,
            out,
        },
        loc,
        |rt, answer| symbol_info(rt, symbol, key, answer),
    )
}

/// Writes the bytes `olGetSymbolInfo` needs for `PropName` to `PropSizeRet`.
#[no_mangle]
pub extern "C" fn olGetSymbolInfoSize(
    Symbol: ol_symbol_handle_t,
    PropName: ol_symbol_info_raw_t,
    PropSizeRet: *mut usize,
) -> ol_result_t {
    get_info_size(Symbol, PropName, PropSizeRet, null())
}

/// `olGetSymbolInfoSize` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetSymbolInfoSizeWithCodeLoc(
    Symbol: ol_symbol_handle_t,
    PropName: ol_symbol_info_raw_t,
    PropSizeRet: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_info_size(Symbol, PropName, PropSizeRet, CodeLocation)
}

fn get_info_size(
    symbol: ol_symbol_handle_t,
    key: u32,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let handle = symbol as *const c_void;
    info::query(
        info::Keys::Symbol,
        info::Subject::Handle("Symbol", handle),
        key,
        info::Asked::Size(out),
        loc,
        |rt, answer| symbol_info(rt, symbol, key, answer),
    )
}
