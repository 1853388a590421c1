//! The liboffload calls a replay makes, through the C API.

use offload::capi::*;
use std::ffi::{c_void, CString};
use std::ptr::null_mut;

/// `result` as an error text naming `what`.
fn check(result: ol_result_t, what: &str) -> Result<(), String> {
    offload::capi::errors::checked(result, what)
}

pub fn init() -> Result<(), String> {
    check(olInit(), "olInit")
}

pub fn shut_down() {
    let _ = olShutDown();
}

/// One device liboffload offers.
#[derive(Clone, Debug)]
pub struct Device {
    pub handle: ol_device_handle_t,
    pub backend: u32,
    pub name: String,
}

/// Every device, in `olIterateDevices` order.
pub fn devices() -> Result<Vec<Device>, String> {
    unsafe extern "C" fn collect(device: ol_device_handle_t, data: *mut c_void) -> bool {
        // SAFETY: `data` is the vector `devices` passes, alive during the iteration.
        unsafe { (*data.cast::<Vec<ol_device_handle_t>>()).push(device) };
        true
    }
    let mut handles: Vec<ol_device_handle_t> = Vec::new();
    check(
        olIterateDevices(Some(collect), (&mut handles as *mut Vec<_>).cast()),
        "olIterateDevices",
    )?;
    handles
        .into_iter()
        .map(|handle| {
            let mut platform: ol_platform_handle_t = null_mut();
            check(
                olGetDeviceInfo(
                    handle,
                    OL_DEVICE_INFO_PLATFORM,
                    std::mem::size_of::<ol_platform_handle_t>(),
                    (&mut platform as *mut ol_platform_handle_t).cast(),
                ),
                "olGetDeviceInfo(PLATFORM)",
            )?;
            let mut backend = 0u32;
            check(
                olGetPlatformInfo(
                    platform,
                    OL_PLATFORM_INFO_BACKEND,
                    std::mem::size_of::<u32>(),
                    (&mut backend as *mut u32).cast(),
                ),
                "olGetPlatformInfo(BACKEND)",
            )?;
            let mut name = vec![0u8; 256];
            check(
                olGetDeviceInfo(
                    handle,
                    OL_DEVICE_INFO_NAME,
                    name.len(),
                    name.as_mut_ptr().cast(),
                ),
                "olGetDeviceInfo(NAME)",
            )?;
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            Ok(Device {
                handle,
                backend,
                name: String::from_utf8_lossy(&name[..end]).into_owned(),
            })
        })
        .collect()
}

/// Whether `device` can load `image`.
pub fn accepts(device: &Device, image: &[u8]) -> bool {
    let mut valid = false;
    let asked = olIsValidBinary(
        device.handle,
        image.as_ptr().cast(),
        image.len(),
        &mut valid,
    );
    check(asked, "olIsValidBinary").is_ok() && valid
}

/// A program loaded for a replay, destroyed when dropped.
pub struct Program(ol_program_handle_t);

impl Drop for Program {
    fn drop(&mut self) {
        let _ = olDestroyProgram(self.0);
    }
}

pub fn load(device: &Device, image: &[u8]) -> Result<Program, String> {
    let mut program: ol_program_handle_t = null_mut();
    check(
        olCreateProgram(
            device.handle,
            image.as_ptr().cast(),
            image.len(),
            &mut program,
        ),
        "olCreateProgram",
    )?;
    Ok(Program(program))
}

pub fn kernel(program: &Program, name: &str) -> Result<ol_symbol_handle_t, String> {
    let c_name = CString::new(name).map_err(|_| format!("kernel name {name:?} has a NUL"))?;
    let mut symbol: ol_symbol_handle_t = null_mut();
    check(
        olGetSymbol(
            program.0,
            c_name.as_ptr(),
            OL_SYMBOL_KIND_KERNEL,
            &mut symbol,
        ),
        &format!("olGetSymbol({name})"),
    )?;
    Ok(symbol)
}

/// What a replayed launch is.
pub struct Launch<'a> {
    pub device: &'a Device,
    pub kernel: ol_symbol_handle_t,
    pub args: &'a [u8],
    pub dimensions: u32,
    pub groups: [u32; 3],
    pub group_size: [u32; 3],
    pub dyn_shared: usize,
    pub c_parameters: bool,
}

/// Runs the launch to completion.
pub fn launch(l: &Launch) -> Result<(), String> {
    let dims = |[x, y, z]: [u32; 3]| ol_dimensions_t { x, y, z };
    let size = ol_kernel_launch_size_args_t {
        Dimensions: l.dimensions as usize,
        NumGroups: dims(l.groups),
        GroupSize: dims(l.group_size),
        DynSharedMemory: l.dyn_shared,
    };
    check(
        launch_now_with_args(l.device.handle, l.kernel, l.args, &size, l.c_parameters),
        "olLaunchKernel",
    )
}

/// The recorded memory placed on a device other than the host: the page spans the
/// allocations cover (liboffload's placement, `runtime::Runtime::mem_alloc_at`; a GPU
/// maps whole granules and shares one between neighbouring spans), freed when dropped.
pub struct DevicePlaced {
    bases: Vec<usize>,
    /// The host device, which names the host side of copies.
    host: ol_device_handle_t,
}

impl Drop for DevicePlaced {
    fn drop(&mut self) {
        for &base in &self.bases {
            let _ = olMemFree(base as *mut c_void);
        }
    }
}

/// Places the memory of `allocations` on `device` at the recorded addresses.
pub fn place_on(
    device: &Device,
    allocations: &[offload::record::format::Allocation],
) -> Result<DevicePlaced, String> {
    let mut placed = DevicePlaced {
        bases: Vec::new(),
        host: host_handle()?,
    };
    // Device memory of any recorded kind is placed as device memory: the kernel reads it
    // the same way.
    let kind = offload::plugin::AllocKind::Device;
    let handle = device.handle as usize;
    for (start, len) in crate::placement::page_ranges(allocations, crate::placement::page_size())? {
        offload::runtime::with_current(|rt| {
            let d = rt
                .devices
                .iter()
                .find(|d| d.handle() == handle)
                .ok_or_else(|| offload::runtime::Error::invalid_argument("no such device"))?;
            rt.mem_alloc_at(d, kind, len, start)
        })
        .map_err(|e| {
            format!(
                "the recorded memory at {start:#x}..{:#x} cannot be placed on {}: {}",
                start + len,
                device.name,
                e.details
            )
        })?;
        placed.bases.push(start);
    }
    Ok(placed)
}

/// The host device, which names the host side of copies.
fn host_handle() -> Result<ol_device_handle_t, String> {
    devices()?
        .into_iter()
        .find(|d| d.backend == OL_PLATFORM_BACKEND_HOST)
        .map(|d| d.handle)
        .ok_or_else(|| "liboffload has no host device".to_string())
}

/// Writes each allocation's recorded bytes to its place on `device`.
pub fn fill_on(
    device: &Device,
    placed: &DevicePlaced,
    allocations: &[offload::record::format::Allocation],
) -> Result<(), String> {
    for a in allocations.iter().filter(|a| !a.bytes.is_empty()) {
        check(
            olMemcpy(
                null_mut(),
                a.base as usize as *mut c_void,
                device.handle,
                a.bytes.as_ptr().cast(),
                placed.host,
                a.bytes.len(),
            ),
            "olMemcpy to the device",
        )?;
    }
    Ok(())
}

/// Each allocation's bytes on `device` now.
pub fn read_back(
    device: &Device,
    placed: &DevicePlaced,
    allocations: &[offload::record::format::Allocation],
) -> Result<Vec<Vec<u8>>, String> {
    allocations
        .iter()
        .map(|a| {
            let mut bytes = vec![0u8; a.bytes.len()];
            if !bytes.is_empty() {
                check(
                    olMemcpy(
                        null_mut(),
                        bytes.as_mut_ptr().cast(),
                        placed.host,
                        a.base as usize as *const c_void,
                        device.handle,
                        bytes.len(),
                    ),
                    "olMemcpy from the device",
                )?;
            }
            Ok(bytes)
        })
        .collect()
}
