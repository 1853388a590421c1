//! `OFFLOAD_RECORD=DIR`: every kernel launch of the program (or of the kernels
//! `OFFLOAD_RECORD_KERNELS=name,...` names), whatever runtime sits above, is written to
//! DIR as one record (`record::format`), `NNNNNN-<kernel>.offrec` in launch order: the
//! image, the kernel, the argument buffer, the launch's shape, and every live allocation
//! of the device (a kernel may reach any of them; no smaller set is proven) before and
//! after the launch. `offload-replay` runs it again.
//!
//! A recorded launch waits for its queue's earlier work before the memory is read, and
//! for itself before it is read again: recording serialises the launches it records.
//! A record that cannot be written (a full disk) stops recording with one warning; the
//! program goes on.

use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::{KernelArgs, LaunchConfig};
use crate::record::format::{Allocation, Record};
use crate::runtime::context::Runtime;
use crate::runtime::platform::Device;
use crate::runtime::program::Symbol;
use crate::runtime::queue::Queue;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

struct Settings {
    dir: PathBuf,
    /// `None`: every kernel.
    kernels: Option<Vec<String>>,
}

static SETTINGS: LazyLock<Option<Settings>> = LazyLock::new(|| {
    let dir = std::env::var("OFFLOAD_RECORD").ok()?;
    if dir.trim().is_empty() {
        return None;
    }
    let kernels = std::env::var("OFFLOAD_RECORD_KERNELS").ok().map(|list| {
        list.split(',')
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect()
    });
    Some(Settings {
        dir: PathBuf::from(dir),
        kernels,
    })
});

/// A record could not be written: nothing more is recorded.
static STOPPED: AtomicBool = AtomicBool::new(false);
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Whether launches are recorded (programs then keep their images).
pub fn enabled() -> bool {
    SETTINGS.is_some() && !STOPPED.load(Ordering::Relaxed)
}

/// Whether a launch of `kernel` is recorded (without `OFFLOAD_RECORD`: one load).
#[inline]
pub fn wants(kernel: &str) -> bool {
    match SETTINGS.as_ref() {
        Some(s) if !STOPPED.load(Ordering::Relaxed) => s
            .kernels
            .as_ref()
            .map_or(true, |list| list.iter().any(|k| k == kernel)),
        _ => false,
    }
}

/// One launch to record.
pub struct Launch<'a> {
    pub queue: Option<&'a Arc<Queue>>,
    pub device: &'a Arc<Device>,
    pub symbol: &'a Symbol,
    pub config: &'a LaunchConfig,
    pub args: &'a KernelArgs,
}

impl Runtime {
    /// Runs `launch` (the launch itself) recorded: memory read before and after.
    pub fn record_launch(&self, l: Launch, launch: impl FnOnce() -> Result<()>) -> Result<()> {
        if let Some(q) = l.queue {
            q.sync()?;
        }
        let before = self.device_memory(l.device)?;
        launch()?;
        if let Some(q) = l.queue {
            q.sync()?;
        }
        let after = self.device_memory(l.device)?;
        let output: Vec<Vec<u8>> = before
            .iter()
            .map(|a| {
                after
                    .iter()
                    .find(|b| b.base == a.base)
                    .map_or_else(Vec::new, |b| b.bytes.clone())
            })
            .collect();
        let record = Record {
            backend: l.device.platform.backend as u32,
            device_name: l.device.describe(),
            kernel: l.symbol.name.clone(),
            dimensions: l.config.dimensions,
            groups: l.config.num_groups,
            group_size: l.config.group_size,
            dyn_shared: l.config.dyn_shared_memory as u64,
            c_parameters: l.args.c_parameters,
            image: l
                .symbol
                .image
                .as_deref()
                .map_or_else(Vec::new, <[u8]>::to_vec),
            args: l.args.bytes.clone(),
            allocations: before,
            output: Some(output),
        };
        write(&record);
        Ok(())
    }

    /// Every live allocation of `device`, read.
    fn device_memory(&self, device: &Arc<Device>) -> Result<Vec<Allocation>> {
        let host =
            self.devices.iter().find(|d| d.is_host()).ok_or_else(|| {
                Error::new(ErrorCode::Unknown, "no host device to read memory into")
            })?;
        self.memory
            .allocations_of(device.index)
            .into_iter()
            .map(|a| {
                let mut bytes = vec![0u8; a.size];
                self.mem_copy(bytes.as_mut_ptr() as usize, host, a.base, device, a.size)?;
                Ok(Allocation {
                    base: a.base as u64,
                    kind: a.kind as u32,
                    bytes,
                })
            })
            .collect()
    }
}

/// Writes `record` as the next file; the first failure stops recording.
fn write(record: &Record) {
    let Some(settings) = SETTINGS.as_ref() else {
        return;
    };
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name: String = record
        .kernel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    let path = settings.dir.join(format!("{n:06}-{name}.offrec"));
    let written = std::fs::create_dir_all(&settings.dir)
        .and_then(|()| std::fs::write(&path, record.encode()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&path);
        if !STOPPED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "liboffload warning: OFFLOAD_RECORD: cannot write {} ({e}); recording stops, \
                 the program goes on",
                path.display()
            );
        }
    }
}
