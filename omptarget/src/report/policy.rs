//! `OMP_TARGET_OFFLOAD` and how a failed target construct ends, in LLVM's words: users
//! and LLVM's tests match these lines, so the text and the exit status are LLVM 19's.

use std::ffi::{c_char, c_void, CStr};
use std::io::Write;
use std::sync::LazyLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Mandatory,
    Disabled,
    Default,
}

/// The policy `OMP_TARGET_OFFLOAD` asks for (case-insensitive; anything else: default).
/// Read once, as LLVM reads it at start-up: every construct asks, and reading the
/// environment each time cost more than a whole `target update`.
pub fn requested() -> Policy {
    static POLICY: LazyLock<Policy> = LazyLock::new(|| {
        match std::env::var("OMP_TARGET_OFFLOAD")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            Ok("mandatory") => Policy::Mandatory,
            Ok("disabled") => Policy::Disabled,
            _ => Policy::Default,
        }
    });
    *POLICY
}

/// The LLVM release whose library this one stands in for: 22 when loaded as
/// `libomptarget.so.22.1`, else 19. One build serves both; where LLVM 22 words or lays out
/// a message differently, programs built for it get LLVM 22's.
pub fn llvm_release() -> u32 {
    static RELEASE: LazyLock<u32> = LazyLock::new(|| {
        // SAFETY: Dl_info is plain data (pointers and integers): all zeros is a value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        let here = llvm_release as *const () as *const c_void;
        // SAFETY: dladdr only reads our own code address and fills `info`; the file name
        // it returns is a C string owned by the loader.
        let file = unsafe {
            if libc::dladdr(here, &mut info) == 0 || info.dli_fname.is_null() {
                return 19;
            }
            CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned()
        };
        if file.ends_with(".so.22.1") {
            22
        } else {
            19
        }
    });
    *RELEASE
}

/// One `omptarget <text>` line on stderr (`text` starts with "message: " or "error: ").
pub fn message(text: &str) {
    let _ = writeln!(std::io::stderr(), "omptarget {text}");
}

/// LLVM's `FATAL_MESSAGE0`: the line, then abort (status 134, as LLVM's).
pub fn fatal(code: i32, text: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "omptarget fatal error {code}: {text}");
    std::process::abort()
}

/// Where a construct is in the source, from clang's `ident_t` (its `psource` string is
/// `;file;function;line;column;;`; without `-g` line and column are 0).
#[derive(Debug, PartialEq, Eq)]
pub struct SourceLocation {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl SourceLocation {
    /// Whether the program was built with positions (LLVM's rule: a line or a column).
    pub fn is_known(&self) -> bool {
        self.line != 0 || self.column != 0
    }
}

/// Parses a `psource` string (`None` when it is not one).
pub fn parse_source(psource: &str) -> Option<SourceLocation> {
    let mut fields = psource.strip_prefix(';')?.split(';');
    let path = fields.next()?;
    let _function = fields.next()?;
    let line = fields.next()?.parse().unwrap_or(0);
    let column = fields.next()?.parse().unwrap_or(0);
    let file = path.rsplit('/').next().unwrap_or(path).to_string();
    Some(SourceLocation { file, line, column })
}

/// The source location of clang's `ident_t *loc` (`None` for NULL).
pub fn source_location(loc: *const c_void) -> Option<SourceLocation> {
    if loc.is_null() {
        return None;
    }
    // SAFETY: a non-NULL `loc` is clang's `ident_t`: four i32 fields, then `psource`,
    // a NUL-terminated string (or NULL).
    let psource = unsafe {
        loc.cast::<u8>()
            .add(16)
            .cast::<*const c_char>()
            .read_unaligned()
    };
    if psource.is_null() {
        return None;
    }
    // SAFETY: as above, a C string in the program's data.
    let text = unsafe { CStr::from_ptr(psource) }.to_string_lossy();
    parse_source(&text)
}

/// Writes `text` to the program's stdout through C's `stdout` stream, so that it is
/// ordered with the program's own `printf` output (a Rust write would bypass C's buffer).
pub fn print_stdout(text: &str) {
    let Ok(text) = std::ffi::CString::new(text) else {
        return;
    };
    // SAFETY: a "%s" format with one NUL-terminated string argument.
    unsafe { libc::printf(c"%s".as_ptr(), text.as_ptr()) };
}

/// A yes/no variable as LLVM's libomptarget reads one (`BoolEnvar`): 1, true, yes or on
/// (any case) are yes; 0, false, no, off and anything else, or unset, are `default`.
pub fn env_flag(name: &str, default: bool) -> bool {
    match std::env::var(name) {
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => default,
        },
        Err(_) => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_positions_are_read_from_psource() {
        assert_eq!(
            parse_source(";/src/app/fails.c;main;15;1;;"),
            Some(SourceLocation {
                file: "fails.c".into(),
                line: 15,
                column: 1
            })
        );
        assert!(!parse_source(";unknown;unknown;0;0;;").unwrap().is_known());
        assert_eq!(parse_source("garbage"), None);
        assert_eq!(source_location(std::ptr::null()), None);
    }
}
