//! The calls LLVM's libomptarget takes from libomp and from the program about the
//! runtime itself: OMPT's connection point for libraries below (LLVM 19's plugins),
//! start and end hooks, and `LIBOMPTARGET_INFO`'s level.

use crate::ompt::connect;
use crate::ompt::types::StartToolResult;
use crate::report::boundary::boundary;

/// A library below this one (as LLVM 19's plugins are below its libomptarget) asks for
/// the OMPT tool's callbacks: with a tool connected, its initializer gets libomp's lookup.
///
/// # Safety
/// `result` is NULL or a start result that lives as long as the program.
#[no_mangle]
pub unsafe extern "C" fn ompt_libomptarget_connect(result: *const StartToolResult) {
    boundary("ompt_libomptarget_connect", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { connect::connect_below(result) }
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
