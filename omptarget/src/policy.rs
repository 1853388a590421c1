//! `OMP_TARGET_OFFLOAD` and how a failed target construct ends, in LLVM's words: users
//! and LLVM's tests match these lines, so the text and the exit status are LLVM 19's.

use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Mandatory,
    Disabled,
    Default,
}

/// The policy `OMP_TARGET_OFFLOAD` asks for (case-insensitive; anything else: default).
pub fn requested() -> Policy {
    match std::env::var("OMP_TARGET_OFFLOAD")
        .map(|v| v.to_ascii_lowercase())
        .as_deref()
    {
        Ok("mandatory") => Policy::Mandatory,
        Ok("disabled") => Policy::Disabled,
        _ => Policy::Default,
    }
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

/// After a target construct: a failure is fatal unless offloading is optional, which
/// LLVM decides as here — the default policy becomes mandatory once a device exists.
pub fn handle_outcome(success: bool, have_devices: bool) {
    if success {
        return;
    }
    let mandatory = match requested() {
        Policy::Mandatory => true,
        Policy::Disabled => false,
        Policy::Default => have_devices,
    };
    if mandatory {
        message(
            "error: Consult https://openmp.llvm.org/design/Runtimes.html for debugging options.",
        );
        fatal(
            1,
            "failure of target construct while offloading is mandatory",
        );
    }
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
