//! The copies a construct makes between host and device memory (with their
//! `LIBOMPTARGET_INFO` lines and profile scopes), and what a data operation's failure
//! is: the ground `data`, `attach` and `update` stand on.

use crate::mapping::table::Mapping;
use crate::ompt::events;
use crate::plugin::ol::{self, Device};
use crate::report::info;
use crate::report::policy::message;
use crate::report::profile;

/// The devices a copy runs between: `host` for host memory, `device` for its copies.
#[derive(Clone, Copy)]
pub struct Devices {
    /// The OpenMP device number (what LIBOMPTARGET_INFO lines name).
    pub number: usize,
    pub host: Device,
    pub device: Device,
}

/// Why a data operation failed (already reported on stderr, as LLVM reports it).
#[derive(Debug)]
pub struct Failed;

/// `error` on stderr as LLVM words a failed data operation.
pub fn report(error: String) -> Failed {
    message(&format!("error: {error}"));
    Failed
}

/// Copies `size` bytes of host memory to the device (`name`: the mapping's, for
/// LIBOMPTARGET_INFO).
pub fn to_device(
    devs: Devices,
    device: usize,
    host: usize,
    size: usize,
    name: usize,
) -> Result<(), Failed> {
    info::transfer(devs.number, true, host, device, size, name);
    let _timed = profile::scope("HostToDev", || format!("Size={size}B"));
    events::transfer(true, devs.number, host, device, size, || {
        ol::memcpy(device, devs.device, host, devs.host, size)
    })
    .map_err(report)
}

/// Copies `size` bytes of device memory back to the host.
pub fn to_host(
    devs: Devices,
    host: usize,
    device: usize,
    size: usize,
    name: usize,
) -> Result<(), Failed> {
    info::transfer(devs.number, false, host, device, size, name);
    let _timed = profile::scope("DevToHost", || format!("Size={size}B"));
    events::transfer(false, devs.number, host, device, size, || {
        ol::memcpy(host, devs.host, device, devs.device, size)
    })
    .map_err(report)
}

/// Writes one pointer-sized `value` into device memory at `device_address`.
pub fn write_device_pointer(
    devs: Devices,
    device_address: usize,
    value: usize,
    name: usize,
) -> Result<(), Failed> {
    let source = &value as *const usize as usize;
    to_device(
        devs,
        device_address,
        source,
        std::mem::size_of::<usize>(),
        name,
    )
}

/// Puts the device values of a mapping's attached pointers back after a copy to it.
pub fn apply_device_shadows(devs: Devices, m: &Mapping) -> Result<(), Failed> {
    m.shadows
        .iter()
        .try_for_each(|s| write_device_pointer(devs, s.device_address, s.device_value, 0))
}

/// Puts the host values of a mapping's attached pointers back after a copy from it.
pub fn restore_host_shadows(m: &Mapping) {
    for s in &m.shadows {
        // SAFETY: `host_address` is a pointer variable of the program inside a range it
        // mapped and still has mapped (the mapping is alive); writing its own earlier
        // value back is what the copy from the device overwrote.
        unsafe { (s.host_address as *mut usize).write_unaligned(s.host_value) };
    }
}
