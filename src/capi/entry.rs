//! The wrapper every entry point runs through: it catches panics, traces the call when
//! `OFFLOAD_TRACE=1`, and turns a `Result` into an `ol_result_t`.

use crate::capi::errors;
use crate::capi::types::{ol_code_location_t, ol_result_t};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::flags;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body` for the C function `name`. `args` formats the arguments (see
/// `trace_text`); it is called only when tracing, after `body`, and told whether the call
/// succeeded, so that it can show what the call wrote to its out-parameters.
#[inline]
pub fn call(
    name: &str,
    loc: *const ol_code_location_t,
    args: impl FnOnce(bool) -> String,
    body: impl FnOnce() -> Result<()>,
) -> ol_result_t {
    let result = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => Err(Error::unknown(format!(
            "internal error in {name}: {} (please report this bug)",
            crate::plugin::foundation::worker_pool::panic_text(&panic)
        ))),
    };
    if flags::trace_enabled() {
        trace(name, loc, args(result.is_ok()), &result);
    }
    match result {
        Ok(()) => std::ptr::null(),
        Err(e) => errors::intern(&e),
    }
}

fn trace(name: &str, loc: *const ol_code_location_t, args: String, result: &Result<()>) {
    let outcome = match result {
        Ok(()) => String::from("OL_SUCCESS"),
        Err(e) => format!("{} ({})", e.code.name(), e.details),
    };
    eprintln!("---> {name}({args}) -> {outcome}{}", location(loc));
}

fn location(loc: *const ol_code_location_t) -> String {
    if loc.is_null() {
        return String::new();
    }
    // SAFETY: the caller of a `...WithCodeLoc` function passes NULL or a valid location
    // whose strings are NULL or NUL-terminated.
    let loc = unsafe { &*loc };
    let text = |p: *const std::ffi::c_char| {
        if p.is_null() {
            String::from("?")
        } else {
            // SAFETY: as above, a non-NULL string is NUL-terminated.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    format!(
        " at {}:{}:{} in {}",
        text(loc.SourceFile),
        loc.LineNumber,
        loc.ColumnNumber,
        text(loc.FunctionName)
    )
}
