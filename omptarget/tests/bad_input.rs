//! The exported entry points given broken input from C: each answers with an error
//! value or does nothing, and never dereferences what it was not given. Offloading is
//! disabled (read once, before the first call), so a failed construct is reported and
//! the process goes on instead of stopping as a mandatory failure would.

use omptarget::abi::types::{KernelArgs, OFFLOAD_FAIL};
use omptarget::entry::interface::{
    __tgt_register_lib, __tgt_target_data_begin_mapper, __tgt_unregister_lib,
};
use omptarget::entry::target_kernel::__tgt_target_kernel;
use omptarget::omp_api::device_api::{omp_target_alloc, omp_target_free, omp_target_is_present};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn disabled() {
    std::env::set_var("OMP_TARGET_OFFLOAD", "disabled");
}

#[test]
fn null_and_broken_argument_arrays_are_refused() {
    disabled();
    let sizes = [8i64];
    let types = [1i64];
    // SAFETY: the arrays given hold one element each; the NULL ones are the point.
    unsafe {
        __tgt_target_data_begin_mapper(
            null_mut(),
            0,
            1,
            null_mut(),
            null_mut(),
            sizes.as_ptr().cast_mut(),
            types.as_ptr().cast_mut(),
            null_mut(),
            null_mut(),
        );
        __tgt_target_data_begin_mapper(
            null_mut(),
            0,
            -4,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        );
    }
}

#[test]
fn a_kernel_launch_without_arguments_fails_cleanly() {
    disabled();
    // SAFETY: NULL kernel arguments are what is tested.
    let rc = unsafe { __tgt_target_kernel(null_mut(), 0, 1, 1, null_mut(), null_mut()) };
    assert_ne!(rc, 0, "no region ran, so the host fallback must run");
    let mut args: KernelArgs = unsafe { std::mem::zeroed() };
    args.version = 99;
    // SAFETY: a zeroed record of an unknown version.
    let rc = unsafe { __tgt_target_kernel(null_mut(), 0, 1, 1, null_mut(), &mut args) };
    assert_eq!(rc, OFFLOAD_FAIL);
}

#[test]
fn registration_of_broken_descriptors_is_harmless() {
    disabled();
    // SAFETY: NULL is refused; a descriptor with a count but no arrays has nothing to read.
    unsafe {
        __tgt_register_lib(null_mut());
        let mut desc: omptarget::abi::types::BinDesc = std::mem::zeroed();
        desc.num_device_images = 3;
        __tgt_register_lib(&mut desc);
        __tgt_unregister_lib(&mut desc);
    }
    __tgt_unregister_lib(0x1234 as *mut _);
}

#[test]
fn device_memory_calls_with_bad_sizes_and_pointers() {
    disabled();
    assert!(omp_target_alloc(0, 0).is_null());
    assert!(
        omp_target_alloc(usize::MAX, 0).is_null(),
        "a size that is negative as ssize_t"
    );
    // SAFETY: NULL is a no-op.
    unsafe { omp_target_free(null_mut(), 0) };
    assert_eq!(omp_target_is_present(null::<c_void>(), 12345), 0);
}

#[test]
fn llvm22_interop_calls_answer_that_there_is_no_interop_object() {
    use omptarget::entry::interop::{
        __tgt_interop_get, __tgt_interop_release, __tgt_interop_use60,
        ompx_interop_add_completion_callback,
    };
    disabled();
    let none = null_mut();
    assert!(__tgt_interop_get(none, 1, 0, 0, none, none, none).is_null());
    assert_eq!(__tgt_interop_use60(none, none, none, none), OFFLOAD_FAIL);
    assert_eq!(__tgt_interop_release(none, none, none, none), OFFLOAD_FAIL);
    assert_eq!(ompx_interop_add_completion_callback(none, none, none), -6);
}
