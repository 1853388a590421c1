//! `codeptr_ra`: the address in the program a construct or routine was called from.
//! LLVM takes its entry point's return address; Rust has no stable way to read one, so
//! the call stack is walked (only when a tool is connected) to the first frame outside
//! this library.

use std::ffi::c_void;
use std::sync::OnceLock;

/// The load address of the object this code is in.
fn own_base() -> usize {
    static BASE: OnceLock<usize> = OnceLock::new();
    *BASE.get_or_init(|| object_base(own_base as *const c_void).unwrap_or(0))
}

fn object_base(address: *const c_void) -> Option<usize> {
    // SAFETY: an all-zero `Dl_info` is valid; dladdr fills it or returns 0.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: any address may be asked about.
    (unsafe { libc::dladdr(address, &mut info) } != 0).then_some(info.dli_fbase as usize)
}

/// The first return address on this thread's stack that lies outside this library (NULL
/// when none is found). Unwinding costs per frame: a few frames are tried first, the
/// whole depth only when the caller is deeper (a call through libomp's tasks).
pub fn caller() -> *const c_void {
    first_outside::<8>()
        .or_else(first_outside::<64>)
        .unwrap_or(std::ptr::null())
}

fn first_outside<const DEPTH: usize>() -> Option<*const c_void> {
    let mut frames = [std::ptr::null_mut::<c_void>(); DEPTH];
    // SAFETY: room for DEPTH addresses.
    let n = unsafe { libc::backtrace(frames.as_mut_ptr(), DEPTH as i32) }.max(0) as usize;
    let own = own_base();
    frames[..n]
        .iter()
        .find(|&&frame| object_base(frame).is_some_and(|base| base != own))
        .map(|&frame| frame.cast_const())
}
