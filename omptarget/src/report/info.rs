//! `LIBOMPTARGET_INFO`: the lines LLVM's libomptarget prints for each kind of event a
//! user asks for (kernel arguments, existing and changed mappings, data transfers,
//! kernel launches, mapping tables after each construct), in LLVM's words and format,
//! so that scripts and habits built on LLVM's output keep working.

use std::ffi::{c_char, CStr};
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::LazyLock;

/// `OMP_INFOTYPE_*`.
pub mod kind {
    pub const KERNEL_ARGS: u32 = 0x1;
    pub const MAPPING_EXISTS: u32 = 0x2;
    pub const DUMP_TABLE: u32 = 0x4;
    pub const MAPPING_CHANGED: u32 = 0x8;
    pub const PLUGIN_KERNEL: u32 = 0x10;
    pub const DATA_TRANSFER: u32 = 0x20;
    pub const EMPTY_MAPPING: u32 = 0x40;
}

/// Parses the variable as LLVM does: a decimal or `0x` hexadecimal integer, negative
/// meaning every bit (`-1`); anything else is 0.
pub fn parse_level(text: &str) -> u32 {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let value = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i64::from_str_radix(hex, 16),
        None => digits.parse::<i64>(),
    }
    .unwrap_or(0);
    (if negative { -value } else { value }) as u32
}

static LEVEL: LazyLock<AtomicU32> = LazyLock::new(|| {
    let level = std::env::var("LIBOMPTARGET_INFO").map_or(0, |v| parse_level(&v));
    AtomicU32::new(level)
});

pub fn enabled(kind: u32) -> bool {
    LEVEL.load(Ordering::Relaxed) & kind != 0
}

/// `__tgt_set_info_flag`: a new level from now on.
pub fn set_level(level: u32) {
    LEVEL.store(level, Ordering::Relaxed);
}

/// One `omptarget device N info: ...` line on stderr.
pub fn line(device: usize, text: &str) {
    let _ = writeln!(std::io::stderr(), "omptarget device {device} info: {text}");
}

/// A plugin's line (LLVM's plugins print with their own prefix).
pub fn plugin_line(device: usize, text: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "\"PluginInterface\" device {device} info: {text}"
    );
}

/// An address as LLVM prints it (`DPxMOD`: 0x and 16 hexadecimal digits).
pub fn ptr(address: usize) -> String {
    format!("0x{address:016x}")
}

/// The text behind a name pointer (clang's `;name;file;line;column;;` for a mapped
/// variable, a plain symbol name for a global), `None` for NULL.
fn text_of(name: usize) -> Option<String> {
    if name == 0 {
        return None;
    }
    // SAFETY: a non-zero name is a NUL-terminated string in the registered program's
    // data (clang's map names, or an offload entry's name), alive while it is
    // registered, which covers every mapping that refers to it.
    Some(
        unsafe { CStr::from_ptr(name as *const c_char) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The `;`-separated fields of a source string, after the leading `;`.
fn fields(text: &str) -> Vec<&str> {
    text.strip_prefix(';').unwrap_or(text).split(';').collect()
}

/// A mapped variable's name (`unknown` without one): LLVM's `getNameFromMapping`.
pub fn variable_name(name: usize) -> String {
    match text_of(name) {
        Some(text) if text.contains(';') => fields(&text)[0].to_string(),
        Some(text) => text,
        None => "unknown".to_string(),
    }
}

/// Name, file, line and column of a mapped variable, `unknown` parts where absent.
pub fn declaration(name: usize) -> (String, String, i64, i64) {
    let text = match text_of(name) {
        Some(text) if text.contains(';') => text,
        Some(symbol) => format!(";{symbol};unknown;0;0;;"),
        None => ";unknown;unknown;0;0;;".to_string(),
    };
    let f = fields(&text);
    let get = |i: usize| f.get(i).copied().unwrap_or("");
    let number = |i: usize| get(i).parse().unwrap_or(0);
    // LLVM's SourceInfo keeps only the file name: clang writes the path as given on
    // its command line, and the table names `info.c`, not `/src/info.c`.
    let path = get(1);
    let file = path.rsplit('/').next().unwrap_or(path);
    (get(0).to_string(), file.to_string(), number(2), number(3))
}

/// `file:line:column` of a construct (`unknown:0:0` without one).
pub fn construct_position(loc: *const std::ffi::c_void) -> String {
    match crate::report::policy::source_location(loc) {
        Some(at) => format!("{}:{}:{}", at.file, at.line, at.column),
        None => "unknown:0:0".to_string(),
    }
}

/// The kernel or data construct's arguments, one line each (LLVM's
/// `printKernelArguments`).
pub fn arguments(
    device: usize,
    loc: *const std::ffi::c_void,
    region: &str,
    args: &[crate::abi::types::MapArg],
) {
    use crate::abi::types::map_type as mt;
    line(
        device,
        &format!(
            "{region} at {} with {} arguments:",
            construct_position(loc),
            args.len()
        ),
    );
    for arg in args {
        let kind = if arg.has(mt::ATTACH) {
            "attach"
        } else if arg.has(mt::TO) && arg.has(mt::FROM) {
            "tofrom"
        } else if arg.has(mt::TO) {
            "to"
        } else if arg.has(mt::FROM) {
            "from"
        } else if arg.has(mt::PRIVATE) {
            "private"
        } else if arg.has(mt::LITERAL) {
            "firstprivate"
        } else if arg.size != 0 {
            "alloc"
        } else {
            "use_address"
        };
        let implicit = if arg.has(mt::IMPLICIT) {
            "(implicit)"
        } else {
            ""
        };
        line(
            device,
            &format!(
                "{kind}({})[{}] {implicit}",
                variable_name(arg.name),
                arg.size
            ),
        );
    }
}

/// A copy between host and device memory (`host_to_device` or back).
pub fn transfer(
    device: usize,
    host_to_device: bool,
    host: usize,
    target: usize,
    size: usize,
    name: usize,
) {
    if !enabled(kind::DATA_TRANSFER) {
        return;
    }
    let text = if host_to_device {
        format!(
            "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={size}, Name={}",
            ptr(host),
            ptr(target),
            variable_name(name)
        )
    } else {
        format!(
            "Copying data from device to host, TgtPtr={}, HstPtr={}, Size={size}, Name={}",
            ptr(target),
            ptr(host),
            variable_name(name)
        )
    };
    line(device, &text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_as_llvm_reads_them() {
        assert_eq!(parse_level("32"), 32);
        assert_eq!(parse_level("0x20"), 32);
        assert_eq!(parse_level("-1"), u32::MAX);
        assert_eq!(parse_level("all"), 0);
    }

    #[test]
    fn names_and_declarations_are_read_from_clang_strings() {
        let mapped = c";v.data[0:v.n];omp_pointer_attach.c;30;5;;";
        assert_eq!(variable_name(mapped.as_ptr() as usize), "v.data[0:v.n]");
        assert_eq!(
            declaration(mapped.as_ptr() as usize),
            ("v.data[0:v.n]".into(), "omp_pointer_attach.c".into(), 30, 5)
        );
        let with_path = c";A[0:64];/src/dir/info.c;13;7;;";
        assert_eq!(
            declaration(with_path.as_ptr() as usize),
            ("A[0:64]".into(), "info.c".into(), 13, 7)
        );
        let symbol = c"global_ptr";
        assert_eq!(
            declaration(symbol.as_ptr() as usize),
            ("global_ptr".into(), "unknown".into(), 0, 0)
        );
        assert_eq!(variable_name(0), "unknown");
        assert_eq!(ptr(0x1234), "0x0000000000001234");
    }
}
