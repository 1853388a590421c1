//! olLaunchKernel, olCalculateOptimalOccupancy, olGetKernelMaxCooperativeGroupCount.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::program::{live_symbol, with_symbol};
use crate::capi::queue_args;
use crate::capi::types::*;
use crate::plugin::{KernelArgs, LaunchConfig};
use crate::runtime::error::{Error, Result};
use std::ffi::c_void;
use std::ptr::null;

/// More properties than this without `OL_KERNEL_LAUNCH_PROP_END` means the array is not
/// terminated; reading on would run off the caller's memory.
const MAX_LAUNCH_PROPERTIES: usize = 256;

fn launch_config(
    size: *const ol_kernel_launch_size_args_t,
    props: *const ol_kernel_launch_prop_t,
) -> Result<LaunchConfig> {
    args::non_null(size, "LaunchSizeArgs")?;
    // SAFETY: non-NULL; the caller passes a valid `ol_kernel_launch_size_args_t`.
    let size = unsafe { &*size };
    let dimensions = u32::try_from(size.Dimensions).unwrap_or(u32::MAX);
    let used = |i: u32, v: u32| if i < dimensions { v } else { 1 };
    let dims = |d: ol_dimensions_t| [used(0, d.x), used(1, d.y), used(2, d.z)];
    Ok(LaunchConfig {
        dimensions,
        num_groups: dims(size.NumGroups),
        group_size: dims(size.GroupSize),
        dyn_shared_memory: size.DynSharedMemory,
        cooperative: cooperative(props)?,
    })
}

fn cooperative(props: *const ol_kernel_launch_prop_t) -> Result<bool> {
    let mut cooperative = false;
    if props.is_null() {
        return Ok(false);
    }
    for i in 0..MAX_LAUNCH_PROPERTIES {
        // SAFETY: the caller's array runs up to its OL_KERNEL_LAUNCH_PROP_END entry, and
        // we stop there.
        let prop = unsafe { &*props.add(i) };
        match prop.r#type {
            OL_KERNEL_LAUNCH_PROP_TYPE_NONE => return Ok(cooperative),
            OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE => {
                let data = args::non_null(prop.data, &format!("Properties[{i}].data"))?;
                // SAFETY: non-NULL; for IS_COOPERATIVE `data` points to a bool.
                cooperative = unsafe { *(data as *const bool) };
            }
            other => {
                return Err(Error::invalid_enumeration(format!(
                    "Properties[{i}].type is {other}; expected OL_KERNEL_LAUNCH_PROP_TYPE_NONE (0) or IS_COOPERATIVE (1)"
                )))
            }
        }
    }
    Err(Error::invalid_argument(format!(
        "Properties has more than {MAX_LAUNCH_PROPERTIES} entries without OL_KERNEL_LAUNCH_PROP_END; the array must end with it"
    )))
}

fn kernel_args(count: usize, ptrs: *mut *mut c_void, sizes: *const usize) -> Result<KernelArgs> {
    if ptrs.is_null() != sizes.is_null() {
        return Err(Error::invalid_argument(
            "exactly one of ArgPtrs and ArgSizes is NULL; both must be NULL (no arguments) or both non-NULL",
        ));
    }
    if count == 0 {
        return Ok(KernelArgs::default());
    }
    if ptrs.is_null() {
        return Err(Error::invalid_argument(format!(
            "NumArgs is {count} but ArgPtrs and ArgSizes are NULL"
        )));
    }
    // SAFETY: both non-NULL, and the caller promises `NumArgs` entries in each.
    let (ptrs, sizes) = unsafe {
        (
            std::slice::from_raw_parts(ptrs, count),
            std::slice::from_raw_parts(sizes, count),
        )
    };
    if let Some(i) = (0..count).find(|&i| ptrs[i].is_null() && sizes[i] > 0) {
        return Err(Error::null_pointer(format!(
            "ArgPtrs[{i}] is NULL but ArgSizes[{i}] is {}; expected a pointer to the argument's value",
            sizes[i]
        )));
    }
    let values = ptrs.iter().zip(sizes).map(|(&p, &n)| {
        if n == 0 {
            return &[][..];
        }
        // SAFETY: non-NULL (checked above), and the caller promises `ArgSizes[i]`
        // readable bytes; they are copied before the call returns.
        unsafe { std::slice::from_raw_parts(p as *const u8, n) }
    });
    Ok(KernelArgs::from_values(values))
}

/// Launches `Kernel` on `Device` over the grid `LaunchSizeArgs`; a NULL `Queue` runs it
/// synchronously. `ArgPtrs[i]` points to argument i's value of `ArgSizes[i]` bytes;
/// the values are copied before the call returns.
#[no_mangle]
pub extern "C" fn olLaunchKernel(
    Queue: ol_queue_handle_t,
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    Properties: *const ol_kernel_launch_prop_t,
    NumArgs: usize,
    ArgPtrs: *mut *mut c_void,
    ArgSizes: *const usize,
) -> ol_result_t {
    launch(
        Queue,
        Device,
        Kernel,
        LaunchSizeArgs,
        Properties,
        NumArgs,
        ArgPtrs,
        ArgSizes,
        null(),
    )
}

/// `olLaunchKernel` with the caller's source location.
#[no_mangle]
pub extern "C" fn olLaunchKernelWithCodeLoc(
    Queue: ol_queue_handle_t,
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    Properties: *const ol_kernel_launch_prop_t,
    NumArgs: usize,
    ArgPtrs: *mut *mut c_void,
    ArgSizes: *const usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    launch(
        Queue,
        Device,
        Kernel,
        LaunchSizeArgs,
        Properties,
        NumArgs,
        ArgPtrs,
        ArgSizes,
        CodeLocation,
    )
}

#[allow(clippy::too_many_arguments)]
fn launch(
    queue: ol_queue_handle_t,
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    size: *const ol_kernel_launch_size_args_t,
    props: *const ol_kernel_launch_prop_t,
    count: usize,
    ptrs: *mut *mut c_void,
    sizes: *const usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olLaunchKernel",
        loc,
        || {
            format!(
                "Queue={queue:p}, Device={device:p}, Kernel={kernel:p}, LaunchSizeArgs={size:p}, Properties={props:p}, NumArgs={count}, ArgPtrs={ptrs:p}, ArgSizes={sizes:p}"
            )
        },
        || {
            args::with_runtime(|rt| {
                let d = args::device(rt, device, "Device")?;
                queue_args::with_optional_queue(rt, queue, |q| {
                    with_symbol(rt, kernel, "Kernel", |symbol| {
                        let config = launch_config(size, props)?;
                        let args = kernel_args(count, ptrs, sizes)?;
                        rt.launch_kernel(q, d, symbol, config, args)
                    })
                })
            })
        },
    )
}

/// Writes to `GroupSize` the work-group size that fills `Device` for `Kernel`, given
/// `SharedMemory` bytes of dynamic shared memory per work-item.
#[no_mangle]
pub extern "C" fn olCalculateOptimalOccupancy(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    SharedMemory: usize,
    GroupSize: *mut usize,
) -> ol_result_t {
    occupancy(Device, Kernel, SharedMemory, GroupSize, null())
}

/// `olCalculateOptimalOccupancy` with the caller's source location.
#[no_mangle]
pub extern "C" fn olCalculateOptimalOccupancyWithCodeLoc(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    SharedMemory: usize,
    GroupSize: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    occupancy(Device, Kernel, SharedMemory, GroupSize, CodeLocation)
}

fn occupancy(
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    shared: usize,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olCalculateOptimalOccupancy",
        loc,
        || {
            format!(
                "Device={device:p}, Kernel={kernel:p}, SharedMemory={shared}, GroupSize={out:p}"
            )
        },
        || {
            args::with_runtime(|rt| {
                args::device(rt, device, "Device")?;
                let symbol = live_symbol(rt, kernel, "Kernel")?;
                let k = symbol.kernel()?;
                let out = args::out_ptr(out, "GroupSize")?;
                *out = k.optimal_group_size(shared)?;
                Ok(())
            })
        },
    )
}

/// Writes to `MaxGroupCount` how many work-groups of `LaunchSizeArgs`'s shape can be
/// resident at once for a cooperative launch of `Kernel`.
#[no_mangle]
pub extern "C" fn olGetKernelMaxCooperativeGroupCount(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    MaxGroupCount: *mut u32,
) -> ol_result_t {
    max_cooperative(Device, Kernel, LaunchSizeArgs, MaxGroupCount, null())
}

/// `olGetKernelMaxCooperativeGroupCount` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetKernelMaxCooperativeGroupCountWithCodeLoc(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    MaxGroupCount: *mut u32,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    max_cooperative(Device, Kernel, LaunchSizeArgs, MaxGroupCount, CodeLocation)
}

fn max_cooperative(
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    size: *const ol_kernel_launch_size_args_t,
    out: *mut u32,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olGetKernelMaxCooperativeGroupCount",
        loc,
        || {
            format!("Device={device:p}, Kernel={kernel:p}, LaunchSizeArgs={size:p}, MaxGroupCount={out:p}")
        },
        || {
            args::with_runtime(|rt| {
                let d = args::device(rt, device, "Device")?;
                let symbol = live_symbol(rt, kernel, "Kernel")?;
                let k = symbol.kernel()?;
                let config = launch_config(size, null())?;
                crate::runtime::program::check_grid(d, &config)?;
                let out = args::out_ptr(out, "MaxGroupCount")?;
                *out = k.max_cooperative_groups(&config)?;
                Ok(())
            })
        },
    )
}
