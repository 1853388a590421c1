//! The deprecated target-region entry points of clang before 17 (`__tgt_target`,
//! `__tgt_target_teams` and their `_mapper` / `_nowait` forms). As in LLVM 19, each one
//! builds a version-1 `KernelArgsTy` from its argument arrays and runs the region through
//! `__tgt_target_kernel`. Version 1 predates the implicit `dyn_ptr` kernel argument, so
//! the kernel receives exactly the arguments listed, as LLVM passes them. The `_nowait`
//! forms run synchronously, as LLVM 19's do (libomp's task orders them).

use crate::abi::types::KernelArgs;
use crate::entry::target_kernel::__tgt_target_kernel;
use crate::report::boundary::boundary;
use std::ffi::c_void;

/// The `KernelArgsTy` LLVM 19 builds for the deprecated entry points.
fn version_1_args(
    arg_num: u32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
) -> KernelArgs {
    KernelArgs {
        version: 1,
        num_args: arg_num,
        arg_base_ptrs: bases,
        arg_ptrs: args,
        arg_sizes: sizes,
        arg_types: types,
        arg_names: names,
        arg_mappers: mappers,
        tripcount: 0,
        flags: 0,
        num_teams: [0; 3],
        thread_limit: [0; 3],
        dyn_cgroup_mem: 0,
    }
}

/// Runs the region `host_ptr` on `device_id`; 0 when it ran on the device, non-zero
/// when the caller must run its host fallback.
///
/// # Safety
/// clang's argument arrays, `arg_num` elements each (`names`, `mappers` may be NULL).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_teams_mapper(
    loc: *mut c_void,
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: u32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
    num_teams: i32,
    thread_limit: i32,
) -> i32 {
    boundary("__tgt_target_teams_mapper", || {
        let mut kernel_args = version_1_args(arg_num, bases, args, sizes, types, names, mappers);
        // SAFETY: the caller's arrays, described by a KernelArgsTy that outlives the call.
        unsafe {
            __tgt_target_kernel(
                loc,
                device_id,
                num_teams,
                thread_limit,
                host_ptr,
                &mut kernel_args,
            )
        }
    })
}

/// A region without `teams`: as `__tgt_target_teams_mapper` with no team count (-1).
///
/// # Safety
/// As `__tgt_target_teams_mapper`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_mapper(
    loc: *mut c_void,
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: u32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
) -> i32 {
    boundary("__tgt_target_mapper", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            __tgt_target_teams_mapper(
                loc, device_id, host_ptr, arg_num, bases, args, sizes, types, names, mappers, -1,
                -1,
            )
        }
    })
}

/// # Safety
/// As `__tgt_target_teams_mapper`.
#[no_mangle]
pub unsafe extern "C" fn __tgt_target(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
) -> i32 {
    boundary("__tgt_target", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            __tgt_target_mapper(
                std::ptr::null_mut(),
                device_id,
                host_ptr,
                arg_num as u32,
                bases,
                args,
                sizes,
                types,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
    })
}

/// # Safety
/// As `__tgt_target_teams_mapper`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_nowait(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    boundary("__tgt_target_nowait", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { __tgt_target(device_id, host_ptr, arg_num, bases, args, sizes, types) }
    })
}

/// # Safety
/// As `__tgt_target_teams_mapper`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_nowait_mapper(
    loc: *mut c_void,
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    boundary("__tgt_target_nowait_mapper", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            __tgt_target_mapper(
                loc,
                device_id,
                host_ptr,
                arg_num as u32,
                bases,
                args,
                sizes,
                types,
                names,
                mappers,
            )
        }
    })
}

/// # Safety
/// As `__tgt_target_teams_mapper`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_teams(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    num_teams: i32,
    thread_limit: i32,
) -> i32 {
    boundary("__tgt_target_teams", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            __tgt_target_teams_mapper(
                std::ptr::null_mut(),
                device_id,
                host_ptr,
                arg_num as u32,
                bases,
                args,
                sizes,
                types,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                num_teams,
                thread_limit,
            )
        }
    })
}

/// # Safety
/// As `__tgt_target_teams_mapper`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_teams_nowait(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    num_teams: i32,
    thread_limit: i32,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    boundary("__tgt_target_teams_nowait", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            __tgt_target_teams(
                device_id,
                host_ptr,
                arg_num,
                bases,
                args,
                sizes,
                types,
                num_teams,
                thread_limit,
            )
        }
    })
}

/// # Safety
/// As `__tgt_target_teams_mapper`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_teams_nowait_mapper(
    loc: *mut c_void,
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
    num_teams: i32,
    thread_limit: i32,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    boundary("__tgt_target_teams_nowait_mapper", || {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            __tgt_target_teams_mapper(
                loc,
                device_id,
                host_ptr,
                arg_num as u32,
                bases,
                args,
                sizes,
                types,
                names,
                mappers,
                num_teams,
                thread_limit,
            )
        }
    })
}
