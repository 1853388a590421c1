//! `omp_target_memcpy_async` and `omp_target_memcpy_rect_async`. LLVM 19 wraps the
//! synchronous copy in a libomp task carrying the `depobj_list` dependences; here the
//! caller waits for those dependences (libomp's `__kmpc_omp_wait_deps`) and the copy is
//! done before returning: a valid schedule of that task, so a later `taskwait` or a task
//! depending on the same objects sees the copy finished.

use crate::abi::deps::{self, DependInfo};
use crate::abi::types::OFFLOAD_FAIL;
use crate::omp_api::device_api::omp_target_memcpy;
use crate::omp_api::memcpy_rect::omp_target_memcpy_rect;
use crate::report::boundary::boundary;
use std::ffi::{c_int, c_void};

/// Copies as `omp_target_memcpy`, once the dependences are met; 0 on success.
///
/// # Safety
/// As `omp_target_memcpy`; `depobj_list` holds `depobj_count` depend objects.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn omp_target_memcpy_async(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device: c_int,
    src_device: c_int,
    depobj_count: c_int,
    depobj_list: *const *const DependInfo,
) -> c_int {
    boundary("omp_target_memcpy_async", || {
        if dst.is_null() || src.is_null() {
            return OFFLOAD_FAIL;
        }
        // SAFETY: the caller's promise, passed on.
        unsafe { deps::wait_for_objects(depobj_count, depobj_list) };
        omp_target_memcpy(
            dst, src, length, dst_offset, src_offset, dst_device, src_device,
        )
    })
}

/// Copies as `omp_target_memcpy_rect`, once the dependences are met. With both `dst`
/// and `src` NULL it answers INT_MAX (the dimensions supported) without waiting.
///
/// # Safety
/// As `omp_target_memcpy_rect`; `depobj_list` holds `depobj_count` depend objects.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn omp_target_memcpy_rect_async(
    dst: *mut c_void,
    src: *const c_void,
    element_size: usize,
    num_dims: c_int,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dimensions: *const usize,
    src_dimensions: *const usize,
    dst_device: c_int,
    src_device: c_int,
    depobj_count: c_int,
    depobj_list: *const *const DependInfo,
) -> c_int {
    boundary("omp_target_memcpy_rect_async", || {
        if dst.is_null() && src.is_null() {
            return c_int::MAX;
        }
        if dst.is_null() || src.is_null() {
            return OFFLOAD_FAIL;
        }
        // SAFETY: the caller's promises, passed on.
        unsafe {
            deps::wait_for_objects(depobj_count, depobj_list);
            omp_target_memcpy_rect(
                dst,
                src,
                element_size,
                num_dims,
                volume,
                dst_offsets,
                src_offsets,
                dst_dimensions,
                src_dimensions,
                dst_device,
                src_device,
            )
        }
    })
}
