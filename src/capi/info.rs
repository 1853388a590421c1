//! Writing the answer of an info query to the caller's buffer, with API.md's size rules:
//! a `PropSize` too small (or 0) is `INVALID_SIZE` and nothing is written.

use crate::capi::args;
use crate::plugin::InfoValue;
use crate::runtime::error::{Error, Result};
use std::ffi::c_void;

pub fn write_value(
    value: InfoValue,
    key: impl std::fmt::Debug,
    prop_size: usize,
    out: *mut c_void,
) -> Result<()> {
    let out = args::non_null(out, "PropValue")?;
    let needed = value.size();
    if prop_size < needed {
        return Err(Error::invalid_size(format!(
            "PropSize is {prop_size} bytes but {key:?} needs {needed}; ask olGet...InfoSize for the size"
        )));
    }
    value.with_bytes(|bytes| {
        // SAFETY: `out` is non-NULL and the caller promises `prop_size` writable bytes
        // there; `bytes.len() == needed <= prop_size`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out as *mut u8, bytes.len()) };
    });
    Ok(())
}

pub fn write_size(value: InfoValue, out: *mut usize) -> Result<()> {
    *args::out_ptr(out, "PropSizeRet")? = value.size();
    Ok(())
}
