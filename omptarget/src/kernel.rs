//! `__tgt_target_kernel`: map the region's arguments, launch the outlined function on
//! the device through `olLaunchKernel`, release the arguments.

use crate::abi::{
    implicit_dyn_ptr, map_args, map_type as mt, KernelArgs, MapArg, OFFLOAD_FAIL, OFFLOAD_SUCCESS,
};
use crate::data::{self, Devices, Failed};
use crate::ol;
use crate::policy::{self, message};
use crate::registry::{self, resolve, Target};
use std::ffi::c_void;

/// A private copy (`firstprivate` of a non-scalar) made for one launch.
struct PrivateCopy {
    device_begin: usize,
}

/// The argument values of the launch, one pointer-sized slot each, as LLVM's host plugin
/// builds them: first the implicit `dyn_ptr` when the kernel takes one (kernel arguments
/// of version 3 on; no dynamic memory here, so NULL), then for each `TARGET_PARAM` entry
/// the literal value or the device address of its base (device begin + (base - begin)).
fn kernel_values(
    table: &crate::mapping::MappingTable,
    devs: Devices,
    args: &[MapArg],
    dyn_ptr: bool,
    privates: &mut Vec<PrivateCopy>,
) -> Result<Vec<usize>, Failed> {
    let mut values = if dyn_ptr { vec![0usize] } else { Vec::new() };
    for arg in args.iter().filter(|a| a.map_type & mt::TARGET_PARAM != 0) {
        let offset = arg.base.wrapping_sub(arg.begin);
        let value = if arg.map_type & mt::LITERAL != 0 {
            arg.base
        } else if arg.map_type & mt::PRIVATE != 0 {
            let copy = ol::alloc(devs.device, arg.size.max(1)).map_err(|e| {
                message(&format!("error: {e}"));
                Failed
            })?;
            privates.push(PrivateCopy { device_begin: copy });
            if arg.map_type & mt::TO != 0 {
                ol::memcpy(copy, devs.device, arg.begin, devs.host, arg.size).map_err(|e| {
                    message(&format!("error: {e}"));
                    Failed
                })?;
            }
            copy.wrapping_add(offset)
        } else {
            table
                .find(arg.begin, arg.size)
                .map_or(0, |m| m.device_address(arg.begin))
                .wrapping_add(offset)
        };
        values.push(value);
    }
    Ok(values)
}

fn run_region(
    device: usize,
    host_ptr: usize,
    args: &[MapArg],
    dyn_ptr: bool,
) -> Result<(), Failed> {
    let (devs, kernel) = {
        let mut state = registry::state();
        if let Err(e) = state.load_images(device) {
            message(&format!("error: {e}"));
            return Err(Failed);
        }
        let Some(devs) = state.copy_devices(device) else {
            message("error: liboffload has no host device to copy from");
            return Err(Failed);
        };
        let Some(kernel) = state.devices[device].kernels.get(&host_ptr).copied() else {
            message(&format!(
                "error: no kernel on device {device} for target region 0x{host_ptr:016x}"
            ));
            return Err(Failed);
        };
        (devs, kernel)
    };
    let mut privates = Vec::new();
    let values = {
        let mut state = registry::state();
        let table = &mut state.devices[device].table;
        if data::begin(table, devs, args).is_err() {
            message("error: Call to targetDataBegin failed, abort target.");
            return Err(Failed);
        }
        kernel_values(table, devs, args, dyn_ptr, &mut privates)
    };
    // The launch runs without the registry lock, so other host threads can map meanwhile.
    let launched = values.and_then(|values| {
        ol::launch(devs.device, kernel, &values).map_err(|e| {
            message(&format!("error: {e}"));
            message("error: Executing target region abort target.");
            Failed
        })
    });
    for copy in privates {
        let _ = ol::free(copy.device_begin);
    }
    launched?;
    let mut state = registry::state();
    data::end(&mut state.devices[device].table, devs, args).inspect_err(|_| {
        message("error: Call to targetDataEnd failed, abort target.");
    })
}

/// Runs a target region. 0 on success; non-zero tells clang's code to run the host
/// fallback (when the region is not offloaded: the initial device, offloading disabled).
///
/// # Safety
/// `args` must be clang's `KernelArgsTy` with `num_args` entries in each array.
#[no_mangle]
pub unsafe extern "C" fn __tgt_target_kernel(
    _loc: *mut c_void,
    device_id: i64,
    _num_teams: i32,
    _thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut KernelArgs,
) -> i32 {
    let device = match resolve(device_id) {
        Some(Target::Device(device)) => device,
        Some(Target::Host) => return OFFLOAD_FAIL,
        None => {
            policy::fatal(
                1,
                &format!(
                    "Device {device_id} is not a valid device (there are {} devices)",
                    registry::state().num_devices()
                ),
            );
        }
    };
    if args.is_null() {
        return OFFLOAD_FAIL;
    }
    // SAFETY: clang's KernelArgsTy (the caller's promise); `version` is its first field
    // in every version.
    let version = unsafe { (*args).version };
    let dyn_ptr = match implicit_dyn_ptr(version) {
        Ok(dyn_ptr) => dyn_ptr,
        Err(e) => {
            message(&format!("error: {e}"));
            policy::handle_outcome(false, true);
            return OFFLOAD_FAIL;
        }
    };
    // SAFETY: a KernelArgsTy of a known version and its arrays (the caller's promise).
    let list = unsafe {
        let k = &*args;
        map_args(
            k.num_args as i32,
            k.arg_base_ptrs,
            k.arg_ptrs,
            k.arg_sizes,
            k.arg_types,
            k.arg_mappers,
        )
    };
    let ok = run_region(device, host_ptr as usize, &list, dyn_ptr).is_ok();
    policy::handle_outcome(ok, true);
    if ok {
        OFFLOAD_SUCCESS
    } else {
        OFFLOAD_FAIL
    }
}

/// The `nowait` form, run synchronously: libomp already wraps it in a task that honours
/// the `depend` clauses, so finishing before returning is a valid schedule.
///
/// # Safety
/// As `__tgt_target_kernel`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_target_kernel_nowait(
    loc: *mut c_void,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut KernelArgs,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    // SAFETY: the caller's promise, passed on.
    unsafe { __tgt_target_kernel(loc, device_id, num_teams, thread_limit, host_ptr, args) }
}

/// libomp asks whether a `nowait` region's asynchronous work is done. This layer
/// finishes every region before returning and never hands out an async handle, so
/// there is never anything pending: the handle is cleared, as LLVM does on completion.
///
/// # Safety
/// `async_handle` is NULL or points to libomp's handle slot.
#[no_mangle]
pub unsafe extern "C" fn __tgt_target_nowait_query(async_handle: *mut *mut c_void) {
    if !async_handle.is_null() {
        // SAFETY: non-NULL: libomp's slot.
        unsafe { *async_handle = std::ptr::null_mut() };
    }
}
