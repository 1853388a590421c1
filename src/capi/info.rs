//! Writing the answer of an info query to the caller's buffer, with API.md's size rules:
//! a `PropSize` too small (or 0) is `INVALID_SIZE` and nothing is written.

use crate::capi::args;
use crate::plugin::InfoValue;
use crate::runtime::error::{Error, Result};
use std::ffi::c_void;

pub fn write_value(
    value: &InfoValue,
    key: impl std::fmt::Debug,
    prop_size: usize,
    out: *mut c_void,
) -> Result<()> {
    let out = args::non_null(out, "PropValue")? as *mut u8;
    let needed = value.size();
    if prop_size < needed {
        return Err(Error::invalid_size(format!(
            "PropSize is {prop_size} bytes but {key:?} needs {needed}; ask olGet...InfoSize for the size"
        )));
    }
    // SAFETY: `out` is non-NULL and the caller promises `prop_size >= needed` writable
    // bytes there; each arm writes exactly `needed` bytes (scalars unaligned, since C
    // callers may pass any buffer).
    unsafe {
        match value {
            InfoValue::Str(s) => {
                std::ptr::copy_nonoverlapping(s.as_ptr(), out, s.len());
                *out.add(s.len()) = 0;
            }
            InfoValue::U32(x) => (out as *mut u32).write_unaligned(*x),
            InfoValue::U64(x) => (out as *mut u64).write_unaligned(*x),
            InfoValue::Usize(x) | InfoValue::Handle(x) => (out as *mut usize).write_unaligned(*x),
            InfoValue::Bool(b) => (out as *mut bool).write(*b),
            InfoValue::Dims(d) => (out as *mut [u32; 3]).write_unaligned(*d),
        }
    }
    Ok(())
}

pub fn write_size(value: &InfoValue, out: *mut usize) -> Result<()> {
    *args::out_ptr(out, "PropSizeRet")? = value.size();
    Ok(())
}

/// The body of every `olGetXInfo`: looks the value up, then writes it.
#[allow(clippy::too_many_arguments)]
pub fn get<K: std::fmt::Debug>(
    function: &str,
    handle_name: &str,
    handle: *const c_void,
    key: u32,
    prop_size: usize,
    out: *mut c_void,
    loc: *const crate::capi::types::ol_code_location_t,
    lookup: impl FnOnce() -> Result<(InfoValue, K)>,
) -> crate::capi::types::ol_result_t {
    crate::capi::entry::call(
        function,
        loc,
        || {
            format!(
                "{handle_name}={handle:p}, PropName={key}, PropSize={prop_size}, PropValue={out:p}"
            )
        },
        || {
            let (value, key) = lookup()?;
            write_value(&value, key, prop_size, out)
        },
    )
}

/// The body of every `olGetXInfoSize`.
pub fn get_size<K>(
    function: &str,
    handle_name: &str,
    handle: *const c_void,
    key: u32,
    out: *mut usize,
    loc: *const crate::capi::types::ol_code_location_t,
    lookup: impl FnOnce() -> Result<(InfoValue, K)>,
) -> crate::capi::types::ol_result_t {
    crate::capi::entry::call(
        function,
        loc,
        || format!("{handle_name}={handle:p}, PropName={key}, PropSizeRet={out:p}"),
        || write_size(&lookup()?.0, out),
    )
}
