//! Writing the answer of an info query to the caller's buffer, with API.md's size rules:
//! a `PropSize` too small (or 0) is `INVALID_SIZE` and nothing is written.

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::types::{ol_code_location_t, ol_result_t};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::InfoValue;
use crate::runtime::Runtime;
use std::ffi::c_void;

/// Writes `value` to `out`, which `check_value_query` found non-NULL.
#[inline]
fn write_value(
    value: &InfoValue,
    key: &dyn std::fmt::Debug,
    prop_size: usize,
    out: *mut u8,
) -> Result<()> {
    let needed = value.size();
    if prop_size < needed {
        return Err(too_small(prop_size, key, needed));
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

#[cold]
fn too_small(prop_size: usize, key: &dyn std::fmt::Debug, needed: usize) -> Error {
    Error::invalid_size(format!(
        "PropSize is {prop_size} bytes but {key:?} needs {needed}; ask olGet...InfoSize for the size"
    ))
}

/// What an info query is about: a handle, or (olGetMemInfo) a pointer.
#[derive(Clone, Copy)]
pub enum Subject<'a> {
    Handle(&'a str, *const c_void),
    Pointer(&'a str, *const c_void),
}

impl Subject<'_> {
    fn describe(self) -> String {
        match self {
            Subject::Handle(name, p) | Subject::Pointer(name, p) => format!("{name}={p:p}"),
        }
    }

    /// NULL check only (liveness is the lookup's business).
    #[inline]
    fn given(self) -> Result<()> {
        match self {
            Subject::Handle(name, p) => args::handle_given(p as *mut c_void, name),
            Subject::Pointer(name, p) => args::non_null(p, name).map(|_| ()),
        }
    }
}

/// LLVM's first checks of every `olGetXInfo`, in its order: `PropSize` 0, then the NULL
/// handle (or pointer), then a NULL `PropValue`. Before them, only "not initialised".
/// Returns `PropValue`, checked.
#[inline]
fn check_value_query(subject: Subject<'_>, prop_size: usize, out: *mut c_void) -> Result<*mut u8> {
    if prop_size == 0 {
        return Err(zero_prop_size());
    }
    subject.given()?;
    args::non_null(out, "PropValue").map(|p| p as *mut u8)
}

#[cold]
fn zero_prop_size() -> Error {
    Error::invalid_size(
        "PropSize is 0; expected the size of the buffer at PropValue (olGet...InfoSize tells it)",
    )
}

/// The same for every `olGetXInfoSize`: the NULL handle (or pointer), then `PropSizeRet`,
/// returned as the place to write the size.
fn check_size_query<'a>(subject: Subject<'_>, out: *mut usize) -> Result<&'a mut usize> {
    subject.given()?;
    args::out_ptr(out, "PropSizeRet")
}

/// How a lookup hands its answer over: the value (borrowed from wherever it is stored, so
/// nothing is moved or copied on the way but the bytes the caller gets) and the key, for
/// messages.
pub type Answer<'w> = &'w mut dyn FnMut(&InfoValue, &dyn std::fmt::Debug) -> Result<()>;

/// What an info query asks for: the value, written to `PropValue` (`olGetXInfo`, whose
/// buffer is `PropSize` bytes), or the value's size, written to `PropSizeRet`
/// (`olGetXInfoSize`).
#[derive(Clone, Copy)]
pub enum Asked {
    Value { prop_size: usize, out: *mut c_void },
    Size(*mut usize),
}

impl Asked {
    fn describe(self) -> String {
        match self {
            Asked::Value { prop_size, out } => format!("PropSize={prop_size}, PropValue={out:p}"),
            Asked::Size(out) => format!("PropSizeRet={out:p}"),
        }
    }
}

/// The body of every `olGetXInfo` and `olGetXInfoSize`: checks, looks the value up, then
/// writes what was asked, all under one look at the runtime.
#[inline]
pub fn query(
    function: &str,
    subject: Subject<'_>,
    key: u32,
    asked: Asked,
    loc: *const ol_code_location_t,
    lookup: impl FnOnce(&Runtime, Answer<'_>) -> Result<()>,
) -> ol_result_t {
    call(
        function,
        loc,
        || {
            format!(
                "{}, PropName={key}, {}",
                subject.describe(),
                asked.describe()
            )
        },
        || {
            args::with_runtime(|rt| match asked {
                Asked::Value { prop_size, out } => {
                    let out = check_value_query(subject, prop_size, out)?;
                    lookup(rt, &mut |value, key| {
                        write_value(value, key, prop_size, out)
                    })
                }
                Asked::Size(out) => {
                    let out = check_size_query(subject, out)?;
                    lookup(rt, &mut |value, _| {
                        *out = value.size();
                        Ok(())
                    })
                }
            })
        },
    )
}
