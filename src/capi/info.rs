//! Writing the answer of an info query to the caller's buffer, with API.md's size rules:
//! a `PropSize` too small (or 0) is `INVALID_SIZE` and nothing is written.

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::trace_text::{self, Meaning, Names};
use crate::capi::types::*;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::flags;
use crate::plugin::InfoValue;
use crate::runtime::Runtime;
use std::cell::Cell;
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

/// Which `olGetXInfo` a query is: its `ol_x_info_t`, for the trace.
#[derive(Clone, Copy)]
pub enum Keys {
    Platform,
    Device,
    Mem,
    Queue,
    Event,
    Symbol,
}

impl Keys {
    /// The C function's name, `olGetXInfoSize` when the size is asked.
    fn function(self, asked: Asked) -> &'static str {
        let size = matches!(asked, Asked::Size(_));
        match (self, size) {
            (Keys::Platform, false) => "olGetPlatformInfo",
            (Keys::Platform, true) => "olGetPlatformInfoSize",
            (Keys::Device, false) => "olGetDeviceInfo",
            (Keys::Device, true) => "olGetDeviceInfoSize",
            (Keys::Mem, false) => "olGetMemInfo",
            (Keys::Mem, true) => "olGetMemInfoSize",
            (Keys::Queue, false) => "olGetQueueInfo",
            (Keys::Queue, true) => "olGetQueueInfoSize",
            (Keys::Event, false) => "olGetEventInfo",
            (Keys::Event, true) => "olGetEventInfoSize",
            (Keys::Symbol, false) => "olGetSymbolInfo",
            (Keys::Symbol, true) => "olGetSymbolInfoSize",
        }
    }

    fn names(self) -> Names {
        match self {
            Keys::Platform => ol_platform_info_t::NAMES,
            Keys::Device => ol_device_info_t::NAMES,
            Keys::Mem => ol_mem_info_t::NAMES,
            Keys::Queue => ol_queue_info_t::NAMES,
            Keys::Event => ol_event_info_t::NAMES,
            Keys::Symbol => ol_symbol_info_t::NAMES,
        }
    }

    /// What the value of `key` means where it is more than a number (the type in
    /// brackets in the header's comment on each key).
    fn meaning(self, key: u32) -> Option<Meaning> {
        let names = match (self, key) {
            (Keys::Platform, OL_PLATFORM_INFO_BACKEND) => ol_platform_backend_t::NAMES,
            (Keys::Device, OL_DEVICE_INFO_TYPE) => ol_device_type_t::NAMES,
            (
                Keys::Device,
                OL_DEVICE_INFO_SINGLE_FP_CONFIG
                | OL_DEVICE_INFO_DOUBLE_FP_CONFIG
                | OL_DEVICE_INFO_HALF_FP_CONFIG,
            ) => return Some(Meaning::Flags(ol_device_fp_capability_flag_t::NAMES)),
            (Keys::Mem, OL_MEM_INFO_TYPE) => ol_alloc_type_t::NAMES,
            (Keys::Symbol, OL_SYMBOL_INFO_KIND) => ol_symbol_kind_t::NAMES,
            _ => return None,
        };
        Some(Meaning::Enumerator(names))
    }
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
    /// `answer`: the value the call wrote, as text (after a successful call).
    fn describe(self, answer: Option<String>, ok: bool) -> String {
        match (self, answer) {
            (Asked::Value { prop_size, out }, Some(value)) => {
                format!("PropSize={prop_size}, PropValue={out:p} ({value})")
            }
            (Asked::Value { prop_size, out }, None) => {
                format!("PropSize={prop_size}, PropValue={out:p}")
            }
            (Asked::Size(out), _) => format!("PropSizeRet={}", trace_text::written(out, ok)),
        }
    }
}

/// The body of every `olGetXInfo` and `olGetXInfoSize`: checks, looks the value up, then
/// writes what was asked, all under one look at the runtime.
#[inline]
pub fn query(
    keys: Keys,
    subject: Subject<'_>,
    key: u32,
    asked: Asked,
    loc: *const ol_code_location_t,
    lookup: impl FnOnce(&Runtime, Answer<'_>) -> Result<()>,
) -> ol_result_t {
    // The value written, as text, kept for the trace (only when tracing: queries are a
    // hot path).
    let answer_text = Cell::new(None);
    call(
        keys.function(asked),
        loc,
        |ok| {
            format!(
                "{}, PropName={}, {}",
                subject.describe(),
                trace_text::enumerator(keys.names(), key),
                asked.describe(answer_text.take(), ok)
            )
        },
        || {
            args::with_runtime(|rt| match asked {
                Asked::Value { prop_size, out } => {
                    let out = check_value_query(subject, prop_size, out)?;
                    lookup(rt, &mut |value, key_name| {
                        write_value(value, key_name, prop_size, out)?;
                        if flags::trace_enabled() {
                            let meaning = keys.meaning(key);
                            answer_text.set(Some(trace_text::info_value(value, meaning)));
                        }
                        Ok(())
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
