//! olInit, olInitWithArgs, olShutDown, olGetVersion.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::trace_text::{init_args, written};
use crate::capi::types::*;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::Backend;
use crate::runtime::{self, InitOptions};
use std::ptr::null;

/// Initialises the library with every backend (reference counted: each call must be
/// matched by one `olShutDown`). `OFFLOAD_PLATFORMS` (e.g. `host,cuda`) restricts the
/// backends. A backend whose vendor library or hardware is absent is skipped, not an error.
#[no_mangle]
pub extern "C" fn olInit() -> ol_result_t {
    init(false, null(), null())
}

/// `olInit` with the caller's source location, shown by `OFFLOAD_TRACE=1`.
#[no_mangle]
pub extern "C" fn olInitWithCodeLoc(CodeLocation: *mut ol_code_location_t) -> ol_result_t {
    init(false, null(), CodeLocation)
}

/// Extension: `olInit` restricted to the backends `Args` lists. `Args` may be NULL:
/// the same as `olInit`.
#[no_mangle]
pub extern "C" fn olInitWithArgs(Args: *const ol_init_args_t) -> ol_result_t {
    init(true, Args, null())
}

/// `olInitWithArgs` with the caller's source location.
#[no_mangle]
pub extern "C" fn olInitWithArgsWithCodeLoc(
    Args: *const ol_init_args_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    init(true, Args, CodeLocation)
}

/// `with_args`: called as `olInitWithArgs` (else `olInit`, which has no `Args`).
fn init(
    with_args: bool,
    args: *const ol_init_args_t,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let name = match with_args {
        true => "olInitWithArgs",
        false => "olInit",
    };
    call(
        name,
        loc,
        |_| match with_args {
            true => format!("Args={}", init_args(args)),
            false => String::new(),
        },
        || runtime::init(&init_options(args)?),
    )
}

fn init_options(args: *const ol_init_args_t) -> Result<InitOptions> {
    if args.is_null() {
        return Ok(InitOptions {
            backends: crate::runtime::config::platforms_from_env()?,
        });
    }
    // SAFETY: non-NULL; the caller passes a pointer to an `ol_init_args_t`. Only `Size`
    // is read before it is checked to cover the whole struct.
    let size = unsafe { std::ptr::addr_of!((*args).Size).read_unaligned() };
    let expected = std::mem::size_of::<ol_init_args_t>();
    if size < expected {
        return Err(Error::invalid_size(format!(
            "Args->Size is {size}; expected at least sizeof(ol_init_args_t) = {expected} (initialise the struct with OL_INIT_ARGS_INIT)"
        )));
    }
    // SAFETY: `Size` says the whole struct is there.
    let args = unsafe { &*args };
    let count = args.NumPlatforms as usize;
    if count == 0 {
        return Ok(InitOptions::default());
    }
    args::non_null(args.Platforms, "Args->Platforms")?;
    // SAFETY: non-NULL, and the caller promises `NumPlatforms` entries.
    let listed = unsafe { std::slice::from_raw_parts(args.Platforms, count) };
    let backends = listed
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            args::enumeration::<Backend>(
                b,
                &format!("Args->Platforms[{i}]"),
                "an ol_platform_backend_t: OL_PLATFORM_BACKEND_UNKNOWN..HOST (0..4) or OL_PLATFORM_BACKEND_MPI (0x10000)",
            )
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(InitOptions { backends })
}

/// Releases one reference; the last one finishes outstanding work and releases
/// everything. Handles are stale afterwards.
#[no_mangle]
pub extern "C" fn olShutDown() -> ol_result_t {
    shut_down(null())
}

/// `olShutDown` with the caller's source location.
#[no_mangle]
pub extern "C" fn olShutDownWithCodeLoc(CodeLocation: *mut ol_code_location_t) -> ol_result_t {
    shut_down(CodeLocation)
}

fn shut_down(loc: *const ol_code_location_t) -> ol_result_t {
    call("olShutDown", loc, |_| String::new(), runtime::shut_down)
}

/// Extension: the library's own version, to compare with `OL_VERSION_*` of the header it
/// was compiled against.
#[no_mangle]
pub extern "C" fn olGetVersion(Major: *mut u32, Minor: *mut u32, Patch: *mut u32) -> ol_result_t {
    get_version(Major, Minor, Patch, null())
}

/// `olGetVersion` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetVersionWithCodeLoc(
    Major: *mut u32,
    Minor: *mut u32,
    Patch: *mut u32,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_version(Major, Minor, Patch, CodeLocation)
}

fn get_version(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olGetVersion",
        loc,
        |ok| {
            format!(
                "Major={}, Minor={}, Patch={}",
                written(major, ok),
                written(minor, ok),
                written(patch, ok)
            )
        },
        || {
            args::with_runtime(|_| Ok(()))?;
            let (ma, mi, pa) = (
                args::out_ptr(major, "Major")?,
                args::out_ptr(minor, "Minor")?,
                args::out_ptr(patch, "Patch")?,
            );
            *ma = parse_version(env!("CARGO_PKG_VERSION_MAJOR"));
            *mi = parse_version(env!("CARGO_PKG_VERSION_MINOR"));
            *pa = parse_version(env!("CARGO_PKG_VERSION_PATCH"));
            Ok(())
        },
    )
}

fn parse_version(part: &str) -> u32 {
    part.parse().unwrap_or(0)
}
