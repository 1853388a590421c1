//! Waiting for OpenMP task dependences through libomp's `__kmpc_omp_wait_deps` (what
//! `taskwait depend(...)` calls). The asynchronous device routines and the interop
//! construct use it: waiting until the dependences are met and then doing the work
//! before returning is a valid schedule of the task OpenMP describes. libomp's functions
//! are found at run time (as `registry::default_device` finds its default device), so
//! this library links without libomp; without libomp no dependence can exist.

use std::ffi::c_void;
use std::sync::LazyLock;

/// libomp's `kmp_depend_info_t`: what an `omp_depend_t` (a depend object) points to and
/// what clang passes in dependence lists.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DependInfo {
    pub base_addr: isize,
    pub len: usize,
    pub flags: u8,
}

type WaitDeps = unsafe extern "C" fn(
    loc: *mut c_void,
    gtid: i32,
    ndeps: i32,
    deps: *mut DependInfo,
    ndeps_noalias: i32,
    noalias_deps: *mut DependInfo,
) -> ();
type GlobalThreadNum = unsafe extern "C" fn(loc: *mut c_void) -> i32;

struct Libomp {
    wait_deps: WaitDeps,
    global_thread_num: GlobalThreadNum,
}

static LIBOMP: LazyLock<Option<Libomp>> = LazyLock::new(|| {
    // SAFETY: dlsym with NUL-terminated names; when present, the symbols are libomp's
    // functions with the signatures above (kmp.h).
    unsafe {
        let wait = libc::dlsym(libc::RTLD_DEFAULT, c"__kmpc_omp_wait_deps".as_ptr());
        let gtid = libc::dlsym(libc::RTLD_DEFAULT, c"__kmpc_global_thread_num".as_ptr());
        if wait.is_null() || gtid.is_null() {
            return None;
        }
        Some(Libomp {
            wait_deps: std::mem::transmute::<*mut c_void, WaitDeps>(wait),
            global_thread_num: std::mem::transmute::<*mut c_void, GlobalThreadNum>(gtid),
        })
    }
});

/// Blocks the calling task until the `count` dependences at `deps` are met.
///
/// # Safety
/// `deps` is NULL or holds `count` dependences; `gtid` is the calling thread's (or
/// `None`: it is asked from libomp).
pub unsafe fn wait(loc: *mut c_void, gtid: Option<i32>, count: i32, deps: *mut DependInfo) {
    if count <= 0 || deps.is_null() {
        return;
    }
    let Some(libomp) = LIBOMP.as_ref() else {
        return;
    };
    // SAFETY: libomp's functions (see LIBOMP); `deps` holds `count` entries.
    unsafe {
        let gtid = gtid.unwrap_or_else(|| (libomp.global_thread_num)(std::ptr::null_mut()));
        (libomp.wait_deps)(loc, gtid, count, deps, 0, std::ptr::null_mut());
    }
}

/// Blocks the calling task until the dependences of the `count` depend objects at
/// `objects` (`omp_depend_t`, each pointing to one `kmp_depend_info_t`) are met.
///
/// # Safety
/// `objects` is NULL or holds `count` depend objects initialized by `depobj`.
pub unsafe fn wait_for_objects(count: i32, objects: *const *const DependInfo) {
    if count <= 0 || objects.is_null() {
        return;
    }
    let mut list: Vec<DependInfo> = (0..count as usize)
        .filter_map(|i| {
            // SAFETY: `i < count`; each object points to libomp's dependence record.
            unsafe {
                let object = *objects.add(i);
                (!object.is_null()).then(|| *object)
            }
        })
        .collect();
    // SAFETY: `list` holds `list.len()` dependences, alive across the call.
    unsafe {
        wait(
            std::ptr::null_mut(),
            None,
            list.len() as i32,
            list.as_mut_ptr(),
        )
    }
}
