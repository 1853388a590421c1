//! `omp_target_associate_ptr` / `omp_target_disassociate_ptr`: the user pairs a host
//! range with device memory of its own. The pair is a mapping with an infinite dynamic
//! reference count (`u64::MAX`, as `declare target` globals have; LLVM's
//! `IsRefCountINF`), so no `map` clause ever releases it or copies it back on release,
//! and unregistration does not free its device memory (the user's). Rules and messages
//! are LLVM 19's (`MappingInfoTy::associatePtr` / `disassociatePtr`).

use crate::abi::types::{OFFLOAD_FAIL, OFFLOAD_SUCCESS};
use crate::devices::registry::{self, resolve, Target};
use crate::mapping::table::{Mapping, INFINITE};
use crate::ompt::events;
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::ffi::{c_int, c_void};

fn fail(text: &str) -> c_int {
    message(&format!("error: {text}"));
    OFFLOAD_FAIL
}

/// Maps `[host_ptr, host_ptr + size)` to `device_ptr + device_offset` on `device_num`.
/// Associating the same pair again does nothing; another pair for the same host
/// address is an error.
#[no_mangle]
pub extern "C" fn omp_target_associate_ptr(
    host_ptr: *const c_void,
    device_ptr: *const c_void,
    size: usize,
    device_offset: usize,
    device_num: c_int,
) -> c_int {
    boundary("omp_target_associate_ptr", || {
        events::routine(|| {
            if host_ptr.is_null() || device_ptr.is_null() || size == 0 {
                return fail("Call to omp_target_associate_ptr with invalid arguments");
            }
            let device = match resolve(i64::from(device_num)) {
                Some(Target::Device(device)) => device,
                Some(Target::Host) => {
                    return fail("omp_target_associate_ptr: no association possible on the host")
                }
                None => return fail(&format!("Device {device_num} is not a valid device")),
            };
            let host_begin = host_ptr as usize;
            let device_begin = (device_ptr as usize).wrapping_add(device_offset);
            let Some(host_end) = host_begin.checked_add(size) else {
                return fail("Call to omp_target_associate_ptr with invalid arguments");
            };
            let mut state = registry::state();
            let Some(dev) = state.devices.get_mut(device) else {
                return fail(&format!("Device {device_num} is not a valid device"));
            };
            // As LLVM, only a mapping that starts at the same host address is compared.
            if let Some(existing) = dev.table.get(host_begin) {
                if existing.host_end == host_end && existing.device_begin == device_begin {
                    return OFFLOAD_SUCCESS;
                }
                return fail(
                "Not allowed to re-associate a different device ptr+offset with the same host ptr",
            );
            }
            // Never released by counts and never freed by this layer: the memory is the user's.
            dev.table.insert(Mapping::permanent(
                host_begin,
                host_end - host_begin,
                device_begin,
                0,
            ));
            events::association(true, device, host_begin, device_begin, size, || ());
            OFFLOAD_SUCCESS
        })
    })
}

/// Removes the association made for `host_ptr` on `device_num` (the device memory stays
/// the user's). A mapping made by a `map` clause, or one held by `ompx_hold`, is not
/// removed: an error, as in LLVM.
#[no_mangle]
pub extern "C" fn omp_target_disassociate_ptr(host_ptr: *const c_void, device_num: c_int) -> c_int {
    boundary("omp_target_disassociate_ptr", || {
        events::routine(|| {
            if host_ptr.is_null() {
                // LLVM's text names the other function; kept, as users match these lines.
                return fail("Call to omp_target_associate_ptr with invalid host_ptr");
            }
            let device = match resolve(i64::from(device_num)) {
                Some(Target::Device(device)) => device,
                Some(Target::Host) => {
                    return fail("omp_target_disassociate_ptr: no association possible on the host")
                }
                None => return fail(&format!("Device {device_num} is not a valid device")),
            };
            let mut state = registry::state();
            let Some(dev) = state.devices.get_mut(device) else {
                return fail(&format!("Device {device_num} is not a valid device"));
            };
            let key = host_ptr as usize;
            let Some(mapping) = dev.table.get(key) else {
                return fail("Association not found");
            };
            if mapping.hold_refs != 0 {
                return fail(
                    "Trying to disassociate a pointer with a non-zero hold reference count",
                );
            }
            if mapping.dynamic_refs != INFINITE {
                return fail(
                "Trying to disassociate a pointer which was not mapped via omp_target_associate_ptr",
            );
            }
            dev.table.remove(key);
            events::association(false, device, key, 0, 0, || ());
            OFFLOAD_SUCCESS
        })
    })
}
