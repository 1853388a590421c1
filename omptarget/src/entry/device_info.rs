//! `__tgt_print_device_info`: what a device is, read with `olGetDeviceInfo`, printed on
//! stdout in the layout of LLVM's plugins (`InfoQueueTy::print`: every key at level one,
//! indented four spaces, values aligned four spaces after the longest key). LLVM writes
//! through its own stream, which a pipe delays until exit; this writes through C's
//! `stdout`, in order with the program's output.

use crate::devices::registry::{self, device_or_abort};
use crate::plugin::ol::{self, Device};
use crate::report::boundary::boundary;
use crate::report::policy::print_stdout;
use offload::capi::*;

/// Aligns `(key, value)` entries as LLVM's info queue does at level one.
pub fn format_entries(entries: &[(String, String)]) -> String {
    const INDENT: usize = 4;
    let widest = entries.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    entries
        .iter()
        .map(|(key, value)| {
            let gap = widest - key.len() + INDENT;
            format!("{:INDENT$}{key}{:gap$}{value}\n", "", "")
        })
        .collect()
}

fn device_type(device: Device) -> Option<String> {
    let kind: u32 = ol::device_info(device, OL_DEVICE_INFO_TYPE).ok()?;
    Some(
        match kind {
            OL_DEVICE_TYPE_GPU => "GPU",
            OL_DEVICE_TYPE_CPU => "CPU",
            OL_DEVICE_TYPE_HOST => "Host",
            _ => "Unknown",
        }
        .to_string(),
    )
}

/// LLVM's CUDA plugin's entries (its key names, its units), of what liboffload can say;
/// `number` is the device's number among the CUDA devices.
fn cuda_entries(device: Device, number: u32) -> Vec<(String, String)> {
    let u32_of = |key| ol::device_info::<u32>(device, key).ok();
    // cuDriverGetVersion's number: 1000 * major + 10 * minor.
    let driver = ol::device_info_string(device, OL_DEVICE_INFO_DRIVER_VERSION)
        .ok()
        .and_then(|v| {
            let (major, minor) = v.split_once('.')?;
            Some(major.parse::<u32>().ok()? * 1000 + minor.parse::<u32>().ok()? * 10)
        });
    [
        ("CUDA Driver Version", driver.map(|v| v.to_string())),
        ("CUDA OpenMP Device Number", Some(number.to_string())),
        (
            "Device Name",
            ol::device_info_string(device, OL_DEVICE_INFO_NAME).ok(),
        ),
        (
            "Global Memory Size",
            ol::device_info::<u64>(device, OL_DEVICE_INFO_GLOBAL_MEM_SIZE)
                .ok()
                .map(|v| format!("{v} bytes")),
        ),
        (
            "Number of Multiprocessors",
            u32_of(OL_DEVICE_INFO_NUM_COMPUTE_UNITS).map(|v| v.to_string()),
        ),
        (
            "Warp Size",
            u32_of(OL_DEVICE_INFO_NUM_LANES).map(|v| v.to_string()),
        ),
        (
            "Maximum Threads per Block",
            u32_of(OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE).map(|v| v.to_string()),
        ),
        (
            "Clock Rate",
            u32_of(OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY).map(|v| format!("{} kHz", v * 1000)),
        ),
        (
            "Memory Clock Rate",
            u32_of(OL_DEVICE_INFO_MEMORY_CLOCK_RATE).map(|v| format!("{} kHz", v * 1000)),
        ),
    ]
    .into_iter()
    .filter_map(|(key, value)| Some((key.to_string(), value?)))
    .collect()
}

/// The device's entries; a property the device cannot answer is left out.
fn entries(device: Device) -> Vec<(String, String)> {
    let text = |key| ol::device_info_string(device, key).ok();
    let u32_of = |key| {
        ol::device_info::<u32>(device, key)
            .ok()
            .map(|v| v.to_string())
    };
    let bytes = |key| {
        ol::device_info::<u64>(device, key)
            .ok()
            .map(|v| format!("{v} bytes"))
    };
    let mhz = |key| {
        ol::device_info::<u32>(device, key)
            .ok()
            .map(|v| format!("{v} MHz"))
    };
    [
        ("Device Type", device_type(device)),
        ("Device Name", text(OL_DEVICE_INFO_NAME)),
        ("Product Name", text(OL_DEVICE_INFO_PRODUCT_NAME)),
        ("Vendor Name", text(OL_DEVICE_INFO_VENDOR)),
        ("Driver Version", text(OL_DEVICE_INFO_DRIVER_VERSION)),
        (
            "Number of Compute Units",
            u32_of(OL_DEVICE_INFO_NUM_COMPUTE_UNITS),
        ),
        (
            "Maximum Work-group Size",
            u32_of(OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE),
        ),
        (
            "Maximum Clock Frequency",
            mhz(OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY),
        ),
        ("Global Memory Size", bytes(OL_DEVICE_INFO_GLOBAL_MEM_SIZE)),
        (
            "Maximum Allocation Size",
            bytes(OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE),
        ),
    ]
    .into_iter()
    .filter_map(|(key, value)| Some((key.to_string(), value?)))
    .collect()
}

/// Prints what device `device_id` is; 1 once printed (LLVM returns its `true`). A
/// number that names no offload device ends the program, as in LLVM.
#[no_mangle]
pub extern "C" fn __tgt_print_device_info(device_id: i64) -> i32 {
    boundary("__tgt_print_device_info", || {
        let device = device_or_abort(device_id);
        let found = registry::state()
            .devices
            .get(device)
            .map(|d| (d.handle, d.gpu.as_ref().map(|g| g.platform_index)));
        let Some((handle, gpu_number)) = found else {
            return 0;
        };
        let listed = match gpu_number {
            Some(number) if ol::backend(handle).ok() == Some(OL_PLATFORM_BACKEND_CUDA) => {
                cuda_entries(handle, number)
            }
            _ => entries(handle),
        };
        print_stdout(&format_entries(&listed));
        1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_align_four_spaces_after_the_longest_key() {
        let text = format_entries(&[
            ("Device Type".into(), "CPU".into()),
            ("Name".into(), "host".into()),
        ]);
        assert_eq!(text, "    Device Type    CPU\n    Name           host\n");
    }
}
