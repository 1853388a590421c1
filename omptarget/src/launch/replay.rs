//! Kernel replay, as `llvm-omp-kernel-replay` (19 and 22) drives it: it registers the
//! recorded image, activates replay on the recorded device asking for the recorded
//! memory at its recorded address (`__tgt_activate_record_replay`), and replays the
//! launch (`__tgt_target_kernel_replay`): the memory snapshot is put back at the start of
//! the device's region, the kernel runs with the recorded argument values, and with
//! `--verify` the region's used part after it is written to `<kernel>.replay.output`,
//! which the tool compares with `<kernel>.original.output`.
//!
//! On the host device the kernel runs as its image defines the region (one call; the
//! teams and threads it forks are its own), so a replay's team and thread counts do
//! not change what it runs.

use crate::devices::registry;
use crate::plugin::device_memory;
use crate::plugin::ol;
use crate::plugin::rr_region::{self, Mode};
use crate::report::policy::message;

/// Starts recording (`record`) or replaying on OpenMP device `device_id`: `size` bytes at
/// `vaddr`. Answers how far the region lies below `vaddr` when it could not be placed
/// there (the tool then moves pointer arguments by as much), 0 when it could.
pub fn activate(
    device_id: i64,
    size: u64,
    vaddr: usize,
    record: bool,
    save_output: bool,
) -> Result<u64, String> {
    let handle = {
        let state = registry::state();
        let device = usize::try_from(device_id)
            .ok()
            .filter(|&d| d < state.devices.len())
            .ok_or_else(|| {
                format!(
                    "device {device_id} does not exist ({} devices)",
                    state.devices.len()
                )
            })?;
        state.devices[device].handle
    };
    let size = usize::try_from(size).map_err(|_| format!("{size} bytes do not fit memory"))?;
    let mode = if record { Mode::Record } else { Mode::Replay };
    let at = (vaddr != 0).then_some(vaddr);
    match rr_region::reserve(handle, mode, size, at, save_output) {
        Ok(_) => Ok(0),
        Err(placing) if at.is_some() => {
            let start = rr_region::reserve(handle, mode, size, None, save_output)?;
            let offset = vaddr.wrapping_sub(start) as u64;
            message(&format!(
                "warning: record replay: {placing}; the memory is at {start:#x} instead, and \
                 pointer arguments move by {} bytes (pointers inside it do not)",
                offset as i64
            ));
            Ok(offset)
        }
        Err(e) => Err(e),
    }
}

/// What a replay gets.
pub struct Replay<'a> {
    pub device_id: i64,
    pub host_ptr: usize,
    pub memory: &'a [u8],
    pub args: Vec<usize>,
}

/// Replays one launch.
pub fn replay(r: Replay) -> Result<(), String> {
    let device = registry::device_or_abort(r.device_id);
    let (handle, host, kernel, name) = {
        let mut state = registry::state();
        state.load_images(device)?;
        let host = state.host.ok_or("liboffload has no host device")?;
        let dev = &state.devices[device];
        let kernel = *dev.kernels.get(&r.host_ptr).ok_or_else(|| {
            format!(
                "no kernel on device {device} for region {:#x} (is its image registered?)",
                r.host_ptr
            )
        })?;
        let name = state.entry_name(r.host_ptr).unwrap_or_default();
        (dev.handle, host, kernel, name)
    };
    let at = device_memory::alloc(handle, r.memory.len().max(1))?;
    ol::memcpy(at, handle, r.memory.as_ptr() as usize, host, r.memory.len())?;
    ol::launch_grid(
        None,
        handle,
        kernel,
        ol::as_bytes(&r.args),
        [1; 3],
        [1; 3],
        0,
    )?;
    if let Some(region) = rr_region::of(handle).filter(|r| r.save_output) {
        let path = format!("{name}.replay.output");
        std::fs::write(&path, rr_region::used_bytes(&region)?)
            .map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}
