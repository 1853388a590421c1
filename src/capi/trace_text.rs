//! How `OFFLOAD_TRACE` writes C values as text: enumerators by name, strings quoted,
//! structs by their fields, out-parameters with what the call wrote. Only tracing calls
//! these, after the call.

use crate::capi::types::{
    ol_dimensions_t, ol_init_args_t, ol_kernel_launch_prop_t, ol_kernel_launch_prop_type_t,
    ol_kernel_launch_size_args_t, ol_platform_backend_t, OL_KERNEL_LAUNCH_PROP_TYPE_NONE,
};
use crate::plugin::InfoValue;
use std::ffi::{c_char, CStr};
use std::fmt::Display;

/// At most this many entries of an array are shown, then `...`.
const MAX_SHOWN: usize = 8;

/// An enumeration's names: a `NAMES` table of `types.rs`.
pub type Names = &'static [(u32, &'static str)];

/// The name of `value` in `names`, if an enumerator has it.
pub fn name_in(names: Names, value: u32) -> Option<&'static str> {
    names
        .iter()
        .find(|(v, _)| *v == value)
        .map(|(_, name)| *name)
}

/// An enumeration argument: its enumerator's name, or the number and `(unknown)`.
pub fn enumerator(names: Names, value: u32) -> String {
    match name_in(names, value) {
        Some(name) => name.to_string(),
        None => format!("{value} (unknown)"),
    }
}

/// A bitfield of flags: the names of the bits set, joined by `|`; bits no flag has, as
/// a number; `0` when none is set.
pub fn flags(names: Names, value: u32) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut rest = value;
    for &(bit, name) in names {
        if bit != 0 && value & bit == bit {
            parts.push(name.to_string());
            rest &= !bit;
        }
    }
    if rest != 0 || parts.is_empty() {
        parts.push(format!("{rest:#x}"));
    }
    parts.join("|")
}

/// A `const char *` argument: the string, quoted and escaped, or `NULL`.
pub fn c_string(p: *const c_char) -> String {
    if p.is_null() {
        return String::from("NULL");
    }
    // SAFETY: non-NULL, and the C caller passes a NUL-terminated string (the function it
    // was passed to reads it as one too).
    let text = unsafe { CStr::from_ptr(p) }.to_string_lossy();
    format!("{text:?}")
}

/// An `ol_kernel_launch_size_args_t *` argument: its fields, or `NULL`.
pub fn launch_size(p: *const ol_kernel_launch_size_args_t) -> String {
    if p.is_null() {
        return String::from("NULL");
    }
    // SAFETY: non-NULL, and the C caller passes a readable struct (the launch reads it
    // too); read unaligned, as C callers may place it anywhere.
    let s = unsafe { p.read_unaligned() };
    format!(
        "{{Dimensions={}, NumGroups={}, GroupSize={}, DynSharedMemory={}}}",
        s.Dimensions,
        dims(extents(s.NumGroups)),
        dims(extents(s.GroupSize)),
        s.DynSharedMemory
    )
}

fn extents(d: ol_dimensions_t) -> [u32; 3] {
    [d.x, d.y, d.z]
}

fn dims(d: [u32; 3]) -> String {
    format!("{{{},{},{}}}", d[0], d[1], d[2])
}

/// An `ol_init_args_t *` argument: its fields, the backends by name, or `NULL`.
pub fn init_args(p: *const ol_init_args_t) -> String {
    if p.is_null() {
        return String::from("NULL");
    }
    // SAFETY: non-NULL; the caller passes an `ol_init_args_t`, and only `Size` is read
    // before it is checked to cover the whole struct (as `olInitWithArgs` does).
    let size = unsafe { std::ptr::addr_of!((*p).Size).read_unaligned() };
    if size < std::mem::size_of::<ol_init_args_t>() {
        return format!("{{Size={size}}}");
    }
    // SAFETY: `Size` says the whole struct is there.
    let args = unsafe { p.read_unaligned() };
    let count = args.NumPlatforms as usize;
    let platforms = if count == 0 || args.Platforms.is_null() {
        format!("{:p}", args.Platforms)
    } else {
        // SAFETY: non-NULL, and the caller promises `NumPlatforms` entries; no more are
        // read.
        let listed = unsafe { std::slice::from_raw_parts(args.Platforms, count.min(MAX_SHOWN)) };
        let names = listed
            .iter()
            .map(|&b| enumerator(ol_platform_backend_t::NAMES, b));
        list(names, count > MAX_SHOWN)
    };
    format!("{{Size={size}, NumPlatforms={count}, Platforms={platforms}}}")
}

/// An `ol_kernel_launch_prop_t *` argument: its properties before
/// `OL_KERNEL_LAUNCH_PROP_END` (`{}` for none), or `NULL`.
pub fn launch_properties(p: *const ol_kernel_launch_prop_t) -> String {
    if p.is_null() {
        return String::from("NULL");
    }
    let mut shown = Vec::new();
    for i in 0..MAX_SHOWN {
        // SAFETY: the caller's array runs up to its OL_KERNEL_LAUNCH_PROP_END entry; the
        // loop stops there, and at the first entry the launch refuses.
        let prop = unsafe { p.add(i).read_unaligned() };
        let kind = prop.r#type;
        if kind == OL_KERNEL_LAUNCH_PROP_TYPE_NONE {
            return list(shown.into_iter(), false);
        }
        let Some(name) = name_in(ol_kernel_launch_prop_type_t::NAMES, kind) else {
            shown.push(format!("{kind} (unknown)"));
            return list(shown.into_iter(), false);
        };
        if prop.data.is_null() {
            shown.push(format!("{name}=NULL"));
            return list(shown.into_iter(), false);
        }
        // SAFETY: non-NULL; every property's `data` points to a bool, read as its byte.
        let value = match unsafe { prop.data.cast::<u8>().read() } {
            0 => String::from("false"),
            1 => String::from("true"),
            other => other.to_string(),
        };
        shown.push(format!("{name}={value}"));
    }
    list(shown.into_iter(), true)
}

/// `{a, b, c}`, with `...` after them when there are more.
fn list(items: impl Iterator<Item = String>, more: bool) -> String {
    let mut items: Vec<String> = items.collect();
    if more {
        items.push(String::from("..."));
    }
    format!("{{{}}}", items.join(", "))
}

/// An out-parameter: its address, then, once the call succeeded (`ok`), the value the
/// call wrote there in brackets.
pub fn written<T: Copy + Display>(out: *const T, ok: bool) -> String {
    if !ok || out.is_null() {
        return format!("{out:p}");
    }
    // SAFETY: the call succeeded, so it wrote a `T` to this caller's buffer just now.
    let value = unsafe { out.read_unaligned() };
    format!("{out:p} ({value})")
}

/// An out-parameter of a handle or address (`ol_queue_handle_t *`, `void **`): as
/// `written`, the handle written shown as an address.
pub fn written_handle<T>(out: *const *mut T, ok: bool) -> String {
    if !ok || out.is_null() {
        return format!("{out:p}");
    }
    // SAFETY: the call succeeded, so it wrote a pointer to this caller's buffer just now.
    let value = unsafe { out.read_unaligned() };
    format!("{out:p} ({value:p})")
}

/// How the value of an info key reads, where it is more than a number.
#[derive(Clone, Copy)]
pub enum Meaning {
    /// An enumerator of this enumeration.
    Enumerator(Names),
    /// A bitfield of these flags.
    Flags(Names),
}

/// The answer of an info query, as written to `PropValue`.
pub fn info_value(value: &InfoValue, meaning: Option<Meaning>) -> String {
    match (value, meaning) {
        (InfoValue::U32(x), Some(Meaning::Enumerator(names))) => enumerator(names, *x),
        (InfoValue::U32(x), Some(Meaning::Flags(names))) => flags(names, *x),
        (InfoValue::Str(s), _) => format!("{s:?}"),
        (InfoValue::U32(x), None) => x.to_string(),
        (InfoValue::U64(x), _) => x.to_string(),
        (InfoValue::Usize(x), _) => x.to_string(),
        (InfoValue::Bool(b), _) => b.to_string(),
        (InfoValue::Dims(d), _) => dims(*d),
        (InfoValue::Handle(h), _) => format!("{:p}", *h as *const ()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::types::*;

    #[test]
    fn enumerators_read_as_names_and_unknown_values_as_numbers() {
        assert_eq!(
            enumerator(ol_alloc_type_t::NAMES, OL_ALLOC_TYPE_DEVICE),
            "OL_ALLOC_TYPE_DEVICE"
        );
        assert_eq!(
            enumerator(ol_device_info_t::NAMES, OL_DEVICE_INFO_NUM_LANES),
            "OL_DEVICE_INFO_NUM_LANES"
        );
        // The sentinels are no value a caller passes.
        assert_eq!(
            enumerator(ol_alloc_type_t::NAMES, OL_ALLOC_TYPE_LAST),
            "3 (unknown)"
        );
        assert_eq!(
            enumerator(ol_device_info_t::NAMES, 0x7fffffff),
            "2147483647 (unknown)"
        );
    }

    #[test]
    fn flags_read_as_names_joined() {
        let names = ol_device_fp_capability_flag_t::NAMES;
        assert_eq!(flags(names, 0), "0x0");
        assert_eq!(
            flags(
                names,
                OL_DEVICE_FP_CAPABILITY_FLAG_INF_NAN | OL_DEVICE_FP_CAPABILITY_FLAG_FMA
            ),
            "OL_DEVICE_FP_CAPABILITY_FLAG_INF_NAN|OL_DEVICE_FP_CAPABILITY_FLAG_FMA"
        );
        assert_eq!(
            flags(names, OL_DEVICE_FP_CAPABILITY_FLAG_FMA | 0x1000),
            "OL_DEVICE_FP_CAPABILITY_FLAG_FMA|0x1000"
        );
    }

    #[test]
    fn strings_structs_and_written_values() {
        assert_eq!(c_string(std::ptr::null()), "NULL");
        assert_eq!(c_string(c"saxpy\n\"x\"".as_ptr()), r#""saxpy\n\"x\"""#);
        let size = ol_kernel_launch_size_args_t {
            Dimensions: 1,
            NumGroups: ol_dimensions_t { x: 4, y: 1, z: 1 },
            GroupSize: ol_dimensions_t { x: 256, y: 1, z: 1 },
            DynSharedMemory: 0,
        };
        assert_eq!(
            launch_size(&size),
            "{Dimensions=1, NumGroups={4,1,1}, GroupSize={256,1,1}, DynSharedMemory=0}"
        );
        assert_eq!(launch_size(std::ptr::null()), "NULL");
        let n = 7u32;
        assert_eq!(written(&n, true), format!("{:p} (7)", &n));
        assert_eq!(written(&n, false), format!("{:p}", &n));
        let handle = 0x1000 as *mut u8;
        assert_eq!(
            written_handle(&handle, true),
            format!("{:p} (0x1000)", &handle)
        );
    }

    #[test]
    fn init_args_and_properties_read_by_name() {
        let backends = [OL_PLATFORM_BACKEND_HOST, OL_PLATFORM_BACKEND_MPI, 7];
        let args = ol_init_args_t {
            Size: std::mem::size_of::<ol_init_args_t>(),
            NumPlatforms: 3,
            Platforms: backends.as_ptr(),
        };
        assert_eq!(
            init_args(&args),
            format!(
                "{{Size={}, NumPlatforms=3, Platforms={{OL_PLATFORM_BACKEND_HOST, OL_PLATFORM_BACKEND_MPI, 7 (unknown)}}}}",
                args.Size
            )
        );
        let short = ol_init_args_t { Size: 4, ..args };
        assert_eq!(init_args(&short), "{Size=4}");
        assert_eq!(init_args(std::ptr::null()), "NULL");

        let mut yes = true;
        let props = [
            ol_kernel_launch_prop_t {
                r#type: OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE,
                data: (&mut yes as *mut bool).cast(),
            },
            ol_kernel_launch_prop_t {
                r#type: OL_KERNEL_LAUNCH_PROP_TYPE_NONE,
                data: std::ptr::null_mut(),
            },
        ];
        assert_eq!(
            launch_properties(props.as_ptr()),
            "{OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE=true}"
        );
        assert_eq!(launch_properties(props[1..].as_ptr()), "{}");
        let bad = [ol_kernel_launch_prop_t {
            r#type: 9,
            data: std::ptr::null_mut(),
        }];
        assert_eq!(launch_properties(bad.as_ptr()), "{9 (unknown)}");
    }

    #[test]
    fn info_values_read_by_their_meaning() {
        let device_type = Some(Meaning::Enumerator(ol_device_type_t::NAMES));
        assert_eq!(
            info_value(&InfoValue::U32(OL_DEVICE_TYPE_HOST), device_type),
            "OL_DEVICE_TYPE_HOST"
        );
        assert_eq!(info_value(&InfoValue::U32(64), None), "64");
        assert_eq!(info_value(&InfoValue::Str("CPU".into()), None), "\"CPU\"");
        assert_eq!(info_value(&InfoValue::Dims([1, 2, 3]), None), "{1,2,3}");
        assert_eq!(info_value(&InfoValue::Bool(true), None), "true");
        assert_eq!(info_value(&InfoValue::Handle(0x20), None), "0x20");
    }
}
