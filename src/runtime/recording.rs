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

use crate::memory::AllocationInfo;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::{KernelArgs, LaunchConfig};
use crate::record::format::{allocation_start, write_header, Header};
use crate::runtime::context::Runtime;
use crate::runtime::platform::Device;
use crate::runtime::program::Symbol;
use crate::runtime::queue::Queue;
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
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

/// Bytes read from the device at a time (one buffer per thread, kept between records,
/// so that a record costs no fresh pages but the file's).
const PIECE: usize = 8 << 20;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Why a record was not written (the launch itself goes on).
enum Failure {
    Io(std::io::Error),
    Read(Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Failure::Io(e) => write!(f, "{e}"),
            Failure::Read(e) => write!(f, "reading device memory: {}", e.details),
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Io(e)
    }
}

impl Runtime {
    /// Runs `launch` (the launch itself) recorded: the record's head and the memory
    /// before are written, the launch runs (after its queue's earlier work), the memory
    /// after is appended.
    pub fn record_launch(&self, l: Launch, launch: impl FnOnce() -> Result<()>) -> Result<()> {
        if let Some(q) = l.queue {
            q.sync()?;
        }
        let allocations = self.memory.allocations_of(l.device.index);
        // Device memory is read into host memory: the host device names it.
        let host = self.devices.iter().find(|d| d.is_host());
        let started = self.record_before(&l, host, &allocations);
        let launched = launch();
        let launched = launched.and_then(|()| l.queue.map_or(Ok(()), |q| q.sync()));
        match (started, &launched, host) {
            (Ok((path, mut file)), Ok(()), Some(host)) => {
                let done = allocations
                    .iter()
                    .try_for_each(|a| self.copy_one(host, l.device, a, &mut file))
                    .and_then(|()| file.flush().map_err(Failure::from));
                if let Err(e) = done {
                    stop(&path, &e);
                }
            }
            (Ok((path, _)), _, _) => {
                // No output to record: the record is not written.
                let _ = std::fs::remove_file(path);
            }
            (Err((path, e)), _, _) => stop(&path, &e),
        }
        launched
    }

    /// Creates the next record file and writes all of it that precedes the launch.
    fn record_before(
        &self,
        l: &Launch,
        host: Option<&Arc<Device>>,
        allocations: &[AllocationInfo],
    ) -> std::result::Result<(PathBuf, BufWriter<File>), (PathBuf, Failure)> {
        let path = next_path(&l.symbol.name);
        let written = (|| -> std::result::Result<BufWriter<File>, Failure> {
            let host = host
                .ok_or_else(|| Failure::Read(Error::new(ErrorCode::Unknown, "no host device")))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut file = BufWriter::with_capacity(1 << 20, File::create(&path)?);
            let header = Header {
                backend: l.device.platform.backend as u32,
                device_name: &l.device.describe(),
                kernel: &l.symbol.name,
                dimensions: l.config.dimensions,
                groups: l.config.num_groups,
                group_size: l.config.group_size,
                dyn_shared: l.config.dyn_shared_memory as u64,
                c_parameters: l.args.c_parameters,
                image: l.symbol.image.as_deref().unwrap_or_default(),
                args: &l.args.bytes,
                with_output: true,
                allocations: allocations.len() as u32,
            };
            write_header(&mut file, &header)?;
            for a in allocations {
                allocation_start(&mut file, a.base as u64, a.size as u64, a.kind as u32)?;
                self.copy_one(host, l.device, a, &mut file)?;
            }
            Ok(file)
        })();
        written
            .map(|file| (path.clone(), file))
            .map_err(|e| (path, e))
    }

    /// Reads allocation `a` of `device` in pieces into `out` (through `host` memory).
    fn copy_one(
        &self,
        host: &Arc<Device>,
        device: &Arc<Device>,
        a: &AllocationInfo,
        out: &mut impl Write,
    ) -> std::result::Result<(), Failure> {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let piece = PIECE.min(a.size.max(1));
            if scratch.len() < piece {
                scratch.resize(piece, 0);
            }
            let mut done = 0;
            while done < a.size {
                let n = piece.min(a.size - done);
                let at = scratch.as_mut_ptr() as usize;
                self.mem_copy(at, host, a.base + done, device, n)
                    .map_err(Failure::Read)?;
                out.write_all(&scratch[..n])?;
                done += n;
            }
            Ok(())
        })
    }
}

/// The next record's path.
fn next_path(kernel: &str) -> PathBuf {
    let dir = SETTINGS
        .as_ref()
        .map_or_else(PathBuf::new, |s| s.dir.clone());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name: String = kernel
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
    dir.join(format!("{n:06}-{name}.offrec"))
}

/// A record could not be written: it is removed, and recording stops (one warning).
fn stop(path: &std::path::Path, why: &Failure) {
    let _ = std::fs::remove_file(path);
    if !STOPPED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "liboffload warning: OFFLOAD_RECORD: cannot write {} ({why}); recording stops, \
             the program goes on",
            path.display()
        );
    }
}
