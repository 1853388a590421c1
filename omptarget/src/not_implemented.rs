//! The rest of LLVM 19's and LLVM 22's exports. Each is there so that every binary
//! clang 19 or clang 22 builds links and loads; each says on stderr that it is not
//! implemented yet and returns an error value (or nothing, where LLVM's returns nothing
//! and skipping it cannot corrupt the program's data; where it could, it aborts). The
//! parameters are left out: a C callee may ignore its arguments, and none of these reads
//! them.

use crate::abi::OFFLOAD_FAIL;
use std::ffi::{c_int, c_void};
use std::io::Write;

/// The one line every unimplemented path prints.
pub fn report(what: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "libomptarget (liboffload): {what} is not implemented yet"
    );
}

macro_rules! returns {
    ($value:expr, $ty:ty, $($name:ident),+ $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not implemented yet (says so, fails).")]
        #[no_mangle]
        pub extern "C" fn $name() -> $ty {
            report(stringify!($name));
            $value
        }
    )+};
}

macro_rules! says {
    ($($name:ident),+ $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not implemented yet (says so, does nothing).")]
        #[no_mangle]
        pub extern "C" fn $name() {
            report(stringify!($name));
        }
    )+};
}

macro_rules! aborts {
    ($($name:ident),+ $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not implemented yet; going on would lose data, so it aborts.")]
        #[no_mangle]
        pub extern "C" fn $name() {
            report(stringify!($name));
            std::process::abort();
        }
    )+};
}

// Target regions of clang before 17 (no KernelArgsTy): non-zero makes the caller run the
// region's host fallback.
returns!(
    OFFLOAD_FAIL,
    i32,
    __tgt_target,
    __tgt_target_mapper,
    __tgt_target_nowait,
    __tgt_target_nowait_mapper,
    __tgt_target_teams,
    __tgt_target_teams_mapper,
    __tgt_target_teams_nowait,
    __tgt_target_teams_nowait_mapper,
    __tgt_target_kernel_replay,
    __tgt_print_device_info,
);
returns!(-1, i64, __tgt_activate_record_replay);
returns!(0, i64, __tgt_mapper_num_components);
returns!(
    -1,
    c_int,
    omp_target_associate_ptr,
    omp_target_disassociate_ptr,
    omp_target_memcpy_async,
    omp_target_memcpy_rect,
    omp_target_memcpy_rect_async
);
returns!(
    std::ptr::null_mut(),
    *mut c_void,
    llvm_omp_target_alloc_host,
    llvm_omp_target_alloc_shared,
    llvm_omp_target_dynamic_shared_alloc,
    llvm_omp_target_lock_mem,
    omp_target_memset,
    omp_target_memset_async,
    omp_get_interop_ptr,
    omp_get_interop_str,
    omp_get_interop_name,
    omp_get_interop_type_desc,
);
returns!(0, isize, omp_get_interop_int);
says!(
    __tgt_rtl_init,
    __tgt_rtl_deinit,
    __tgt_set_info_flag,
    llvm_omp_target_free_host,
    llvm_omp_target_free_shared,
    llvm_omp_target_unlock_mem,
    ompt_libomptarget_connect,
    ompx_dump_mapping_tables,
);
// A mapper or an interop operation skipped would leave the program's data or its
// foreign-runtime object wrong without a trace. (`__tgt_interop_get`, `_use60`,
// `_release` and `ompx_interop_add_completion_callback` are LLVM 22's.)
aborts!(
    __tgt_push_mapper_component,
    __tgt_interop_init,
    __tgt_interop_use,
    __tgt_interop_destroy,
    __tgt_interop_get,
    __tgt_interop_use60,
    __tgt_interop_release,
    ompx_interop_add_completion_callback,
);
// LLVM 22's kernel-language API (CUDA-style `<<<...>>>` launches compiled for
// libomptarget): a launch skipped would leave the kernel's results missing unnoticed.
aborts!(
    __llvmPushCallConfiguration,
    __llvmPopCallConfiguration,
    llvmLaunchKernel
);
