//! Kernel recording as LLVM's libomptarget 19 and 22 write it (`LIBOMPTARGET_RECORD=1`,
//! `LIBOMPTARGET_RR_SAVE_OUTPUT=1`), for `llvm-omp-kernel-replay` to replay: before each
//! launch on a recording device, in the current folder, named after the kernel (the
//! last launch of a kernel wins):
//! - `<kernel>.image`: the device image the kernel came from;
//! - `<kernel>.globals`: per `declare target` global of that image with a size, its name
//!   and a NUL, its size (4 bytes, little-endian) and its device bytes;
//! - `<kernel>.memory`: the used part of the device's record region, from its start;
//! - `<kernel>.json`: one line, keys sorted, no spaces and no final newline, as LLVM's
//!   JSON writer prints it: `ArgOffsets` (zeros), `ArgPtrs` (the argument values the
//!   kernel gets, which replay passes again; LLVM 19 and 22 write the addresses of their
//!   own argument slots there, which makes their recordings of pointer arguments
//!   unreplayable), `BumpAllocVAStart`, `DeviceId`, `DeviceMemorySize`, `LoopTripCount`,
//!   `Name`, `NumArgs`, `NumTeamsClause`, `ThreadLimitClause` (the grid launched);
//!
//! and after it, when asked, `<kernel>.original.output`: the used part again. A file
//! that cannot be written stops the recording with one warning; the program goes on.

use crate::devices::registry;
use crate::plugin::ol;
use crate::plugin::rr_region::{self, Region};
use crate::report::policy::message;
use offload::runtime::profile::json_string;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// A write failed: nothing more is recorded.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// What a recording says of one launch.
pub struct Launch {
    /// The OpenMP device number.
    pub device: usize,
    pub name: String,
    pub values: Vec<usize>,
    pub teams: u32,
    pub threads: u32,
    pub trip_count: u64,
    pub image: &'static [u8],
    /// `declare target` globals: name and device bytes.
    pub globals: Vec<(String, Vec<u8>)>,
}

/// The recording of the launch of region `host_ptr` on OpenMP device `device`, when that
/// device records: its kernel's name, image and globals read from the registry.
pub fn of_launch(
    device: usize,
    host_ptr: usize,
    values: &[usize],
    grid: (u32, u32),
    trip_count: u64,
) -> Option<(Region, Launch)> {
    if !rr_region::any() {
        return None;
    }
    let state = registry::state();
    let dev = state.devices.get(device)?;
    let region = active(rr_region::of(dev.handle))?;
    let lib = state
        .libraries
        .iter()
        .find(|l| l.entries.iter().any(|e| e.host_address == host_ptr))?;
    let entry = lib.entries.iter().find(|e| e.host_address == host_ptr)?;
    let image = lib
        .images
        .iter()
        .copied()
        .find(|i| ol::is_valid_binary(dev.handle, i).unwrap_or(false))?;
    let program = *dev.programs.get(&lib.desc)?;
    let host = state.host?;
    let globals = lib
        .entries
        .iter()
        .filter(|e| e.is_global() && e.size > 0)
        .filter_map(|e| {
            let address = ol::global_address(program, &e.name).ok()?;
            let mut bytes = vec![0u8; e.size];
            let at = bytes.as_mut_ptr() as usize;
            ol::memcpy(at, host, address, dev.handle, e.size).ok()?;
            Some((e.name.clone(), bytes))
        })
        .collect();
    let launch = Launch {
        device,
        name: entry.name.clone(),
        values: values.to_vec(),
        teams: grid.0,
        threads: grid.1,
        trip_count,
        image,
        globals,
    };
    Some((region, launch))
}

/// Whether launches on the device of `region` are recorded now.
pub fn active(region: Option<Region>) -> Option<Region> {
    region.filter(|r| r.mode == rr_region::Mode::Record && !STOPPED.load(Ordering::Relaxed))
}

/// The JSON description of `launch` in `region`.
pub fn description(region: &Region, launch: &Launch) -> String {
    let list = |values: &mut dyn Iterator<Item = i64>| {
        values.map(|v| v.to_string()).collect::<Vec<_>>().join(",")
    };
    let mut json = String::new();
    let _ = write!(
        json,
        "{{\"ArgOffsets\":[{}],\"ArgPtrs\":[{}],\"BumpAllocVAStart\":{},\"DeviceId\":{},\
         \"DeviceMemorySize\":{},\"LoopTripCount\":{},\"Name\":{},\"NumArgs\":{},\
         \"NumTeamsClause\":{},\"ThreadLimitClause\":{}}}",
        list(&mut launch.values.iter().map(|_| 0)),
        list(&mut launch.values.iter().map(|&v| v as i64)),
        region.start as i64,
        launch.device,
        region.used,
        launch.trip_count,
        json_string(&launch.name),
        launch.values.len(),
        launch.teams,
        launch.threads,
    );
    json
}

/// `<kernel>.globals`'s bytes.
pub fn globals_file(globals: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in globals {
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

/// Writes the files of `launch` before it runs.
pub fn before(region: &Region, launch: &Launch) {
    let globals = globals_file(&launch.globals);
    let json = description(region, launch);
    let memory = match rr_region::used_bytes(region) {
        Ok(memory) => memory,
        Err(e) => {
            stop(&format!("cannot read the device memory ({e})"));
            return;
        }
    };
    let files: [(&str, &[u8]); 4] = [
        ("image", launch.image),
        ("globals", &globals),
        ("memory", &memory),
        ("json", json.as_bytes()),
    ];
    for (suffix, bytes) in files {
        if !write(&launch.name, suffix, bytes) {
            return;
        }
    }
}

/// Writes `<kernel>.original.output` after the launch, when the recording saves output.
pub fn after(region: &Region, name: &str) {
    if region.save_output {
        match rr_region::used_bytes(region) {
            Ok(output) => {
                write(name, "original.output", &output);
            }
            Err(e) => stop(&format!("cannot read the device memory ({e})")),
        }
    }
}

/// `<name>.<suffix>` in the current folder; false (and recording stopped, with one
/// warning) when it cannot be written.
pub fn write(name: &str, suffix: &str, bytes: &[u8]) -> bool {
    let path = format!("{name}.{suffix}");
    match std::fs::write(&path, bytes) {
        Ok(()) => true,
        Err(e) => {
            stop(&format!("cannot write {path} ({e})"));
            false
        }
    }
}

/// Recording fails: it stops, with one warning saying `why`; the program goes on.
fn stop(why: &str) {
    if !STOPPED.swap(true, Ordering::Relaxed) {
        message(&format!(
            "warning: LIBOMPTARGET_RECORD: {why}; recording stops, the program goes on"
        ));
    }
}
