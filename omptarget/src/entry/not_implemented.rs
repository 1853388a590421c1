//! What this layer does not do yet: the OMPT tool interface.
//! Each exists so that every binary and libomp itself load; each says on stderr that it
//! is not implemented yet. Their parameters are left out: nothing is read from them.

use crate::report::boundary::boundary;
use std::io::Write;

/// The one line every unimplemented path prints.
pub fn report(what: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "libomptarget (liboffload): {what} is not implemented yet"
    );
}

/// libomp hands an OMPT tool's start result here; without OMPT support the tool gets no
/// device callbacks, which is said once.
#[no_mangle]
pub extern "C" fn ompt_libomptarget_connect() {
    boundary("ompt_libomptarget_connect", || {
        report("ompt_libomptarget_connect (OMPT device tracing)");
    })
}

/// Nothing to do: liboffload initializes its backends on the first registration.
#[no_mangle]
pub extern "C" fn __tgt_rtl_init() {
    boundary("__tgt_rtl_init", || {})
}

/// Nothing to do: the last `__tgt_unregister_lib` shuts liboffload down.
#[no_mangle]
pub extern "C" fn __tgt_rtl_deinit() {
    boundary("__tgt_rtl_deinit", || {})
}

/// Changes LIBOMPTARGET_INFO's level while the program runs (as LLVM's does).
#[no_mangle]
pub extern "C" fn __tgt_set_info_flag(level: u32) {
    boundary("__tgt_set_info_flag", || {
        crate::report::info::set_level(level);
    })
}
