//! One record replayed: the device chosen, the memory placed, the kernel loaded and
//! launched K times (the memory put back before each), the first launch verified.

use crate::device::{self, Device, Launch};
use crate::options::Options;
use crate::placement;
use offload::record::format::Record;
use offload::runtime::profile::json_string;
use std::path::Path;
use std::time::Instant;

/// What a replay prints.
pub struct Report {
    file: String,
    kernel: String,
    device: String,
    groups: [u32; 3],
    group_size: [u32; 3],
    launches: usize,
    median_us: f64,
    /// `None` without `--verify`.
    pub verified: Option<bool>,
    difference: String,
}

impl Report {
    pub fn line(&self, json: bool) -> String {
        if json {
            let verified = match self.verified {
                None => "null".to_string(),
                Some(v) => v.to_string(),
            };
            return format!(
                "{{\"record\":{},\"kernel\":{},\"device\":{},\"groups\":{:?},\"group_size\":{:?},\
                 \"launches\":{},\"median_us\":{:.3},\"verified\":{verified},\"difference\":{}}}",
                json_string(&self.file),
                json_string(&self.kernel),
                json_string(&self.device),
                self.groups,
                self.group_size,
                self.launches,
                self.median_us,
                json_string(&self.difference)
            );
        }
        let verdict = match self.verified {
            None => String::new(),
            Some(true) => ": verified".to_string(),
            Some(false) => format!(": {}", self.difference),
        };
        format!(
            "{}: {} on {}, groups {:?} of {:?}, {} launch{}, median {:.3} us{verdict}",
            self.file,
            self.kernel,
            self.device,
            self.groups,
            self.group_size,
            self.launches,
            if self.launches == 1 { "" } else { "es" },
            self.median_us
        )
    }
}

/// The device to replay on: `--device N`, or the first of the recorded backend, or else
/// the first host device that loads the image (a remote server's host device records
/// programs this process's host device runs).
fn choose(record: &Record, opts: &Options) -> Result<Device, String> {
    const HOST: u32 = offload::capi::OL_PLATFORM_BACKEND_HOST;
    let devices = device::devices()?;
    let chosen = match opts.device {
        Some(n) => devices
            .get(n)
            .cloned()
            .ok_or_else(|| format!("--device {n}: liboffload offers {} devices", devices.len()))?,
        None => devices
            .iter()
            .find(|d| d.backend == record.backend)
            .or_else(|| {
                devices
                    .iter()
                    .find(|d| d.backend == HOST && device::accepts(d, &record.image))
            })
            .cloned()
            .ok_or_else(|| {
                format!(
                    "no device of the recorded backend ({}; recorded on {}) and no host \
                     device that loads its image",
                    record.backend, record.device_name
                )
            })?,
    };
    if chosen.backend != record.backend && !device::accepts(&chosen, &record.image) {
        return Err(format!(
            "{} (backend {}) cannot load the image recorded on {} (backend {})",
            chosen.name, chosen.backend, record.device_name, record.backend
        ));
    }
    Ok(chosen)
}

pub fn replay(file: &Path, record: &Record, opts: &Options) -> Result<Report, String> {
    if opts.verify && record.output.is_none() {
        return Err("--verify: the record holds no output to compare with".into());
    }
    if record.image.is_empty() {
        return Err("the record holds no image".into());
    }
    let target = choose(record, opts)?;
    let memory = Memory::place(&target, record)?;
    let program = device::load(&target, &record.image)?;
    let kernel = device::kernel(&program, &record.kernel)?;
    let launch = Launch {
        device: &target,
        kernel,
        args: &record.args,
        dimensions: if opts.groups.is_some() || opts.group_size.is_some() {
            3
        } else {
            record.dimensions
        },
        groups: opts.groups.unwrap_or(record.groups),
        group_size: opts.group_size.unwrap_or(record.group_size),
        dyn_shared: usize::try_from(record.dyn_shared)
            .map_err(|_| format!("{} bytes of shared memory", record.dyn_shared))?,
        c_parameters: record.c_parameters,
    };
    let mut times = Vec::with_capacity(opts.repeat);
    let mut verified = None;
    let mut difference = String::new();
    for i in 0..opts.repeat {
        memory.fill(&target, record)?;
        let start = Instant::now();
        device::launch(&launch)?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
        if i == 0 && opts.verify {
            let expected = record.output.as_deref().unwrap_or_default();
            match memory.first_difference(&target, record, expected)? {
                None => verified = Some(true),
                Some((a, offset, want, got)) => {
                    let before: usize = record.allocations[..a].iter().map(|x| x.bytes.len()).sum();
                    difference = format!(
                        "differs at byte {} (allocation {a} at {:#x}, offset {offset}: \
                         recorded {want:#04x}, replayed {got:#04x})",
                        before + offset,
                        record.allocations[a].base
                    );
                    verified = Some(false);
                }
            }
        }
    }
    let (groups, group_size) = (launch.groups, launch.group_size);
    drop(program);
    drop(memory);
    times.sort_by(f64::total_cmp);
    Ok(Report {
        file: file.display().to_string(),
        kernel: record.kernel.clone(),
        device: target.name,
        groups,
        group_size,
        launches: opts.repeat,
        median_us: times[times.len() / 2],
        verified,
        difference,
    })
}

/// The recorded memory in place: this process's own on the host device, liboffload's
/// placement on another.
enum Memory {
    Host(placement::Placed),
    Device(device::DevicePlaced),
}

impl Memory {
    fn place(target: &Device, record: &Record) -> Result<Memory, String> {
        if target.backend == offload::capi::OL_PLATFORM_BACKEND_HOST {
            placement::place(&record.allocations).map(Memory::Host)
        } else {
            device::place_on(target, &record.allocations).map(Memory::Device)
        }
    }

    fn fill(&self, target: &Device, record: &Record) -> Result<(), String> {
        match self {
            Memory::Host(placed) => {
                placement::fill(placed, &record.allocations);
                Ok(())
            }
            Memory::Device(placed) => device::fill_on(target, placed, &record.allocations),
        }
    }

    fn first_difference(
        &self,
        target: &Device,
        record: &Record,
        expected: &[Vec<u8>],
    ) -> Result<Option<(usize, usize, u8, u8)>, String> {
        match self {
            Memory::Host(placed) => Ok(placement::first_difference(
                placed,
                &record.allocations,
                expected,
            )),
            Memory::Device(placed) => {
                let now = device::read_back(target, placed, &record.allocations)?;
                Ok(now
                    .iter()
                    .zip(expected)
                    .enumerate()
                    .find_map(|(i, (got, want))| {
                        got.iter()
                            .zip(want)
                            .position(|(x, y)| x != y)
                            .map(|k| (i, k, want[k], got[k]))
                    }))
            }
        }
    }
}
