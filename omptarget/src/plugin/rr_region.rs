//! The device memory of kernel record and replay: while a device records or replays,
//! every allocation this library makes on it comes from one reserved region, one after
//! the other from its start (16-byte steps, as LLVM's bump allocator), and freeing is
//! a no-op. The region's used part is then everything a kernel can reach, which a
//! recording saves and a replay puts back at the same addresses.
//!
//! On the host device the region is anonymous memory mapped at the address asked for
//! (`MAP_FIXED_NOREPLACE`: an address already taken is refused, never overwritten). On
//! other devices the region is one allocation of theirs (its used part read back
//! through liboffload), placed with `olMemAllocAt` both ways, as LLVM's CUDA plugin
//! reserves its region's addresses both ways: a replay's where it was recorded. A
//! recording's region (no address asked) goes to a random place far from where any
//! process's own mappings lie (`far_address`), free here and on the device, so that a
//! replaying process (the tool, a remote server, with libraries and stacks of its own
//! placed by chance) finds those addresses free too; where none is, anywhere. A device that
//! cannot place memory records into a plain allocation (its replay then needs the same
//! address free, and says so when it is not).

use crate::plugin::ol::{self, Device};
use offload::plugin::foundation::far_address;
use offload::plugin::foundation::page::page_size;
use parking_lot::Mutex;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a region serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Record,
    Replay,
}

#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub device: Device,
    pub mode: Mode,
    /// Save the used part after each kernel (`<kernel>.original.output` when recording,
    /// `.replay.output` when replaying).
    pub save_output: bool,
    pub start: usize,
    pub capacity: usize,
    pub used: usize,
    /// Another device's region is read into host memory through the host device
    /// (`None`: the host device's own region, this process's memory, read in place).
    pub read_through: Option<Device>,
}

/// Bytes reserved for a recording: address space only (pages are committed when
/// touched), so that a program's allocations fit as they would on a device.
pub const RECORD_RESERVE: usize = 64 << 30;
/// Bytes a recording takes of another device's memory (allocated, so smaller).
pub const DEVICE_RECORD_RESERVE: usize = 1 << 30;
/// Room a replay keeps beyond the recorded memory.
const REPLAY_SLACK: usize = 64 << 20;
const STEP: usize = 16;

static REGIONS: Mutex<Vec<Region>> = Mutex::new(Vec::new());
/// Some region exists: what every allocation and free checks first.
static ANY: AtomicBool = AtomicBool::new(false);

/// Reserves the region of `device` for `mode`: `size` bytes (0: the recording default),
/// at `at` when given. Answers the region's start.
pub fn reserve(
    device: Device,
    mode: Mode,
    size: usize,
    at: Option<usize>,
    save_output: bool,
) -> Result<usize, String> {
    let host = ol::is_host(device)?;
    let mut regions = REGIONS.lock();
    if let Some(r) = regions.iter_mut().find(|r| r.device == device) {
        // Asked again (a second activation): the region stays, its use changes.
        r.mode = mode;
        r.save_output = save_output;
        return Ok(r.start);
    }
    let capacity = match mode {
        Mode::Record if size != 0 => size,
        Mode::Record if host => RECORD_RESERVE,
        Mode::Record => DEVICE_RECORD_RESERVE,
        Mode::Replay => size.saturating_add(REPLAY_SLACK),
    };
    let read_through = if host { None } else { Some(host_device()?) };
    let start = match (host, at) {
        (true, Some(at)) => map(capacity, Some(at))?,
        (true, None) => far_first(capacity, page_size(), |at| map(capacity, at))?,
        // Another device places its memory through liboffload (remote servers can; GPUs
        // say they cannot yet).
        (false, Some(at)) => ol::alloc_at(device, capacity, at)
            .map_err(|e| format!("cannot place {capacity} bytes at {at:#x}: {e}"))?,
        (false, None) => far_first(capacity, DEVICE_ALIGN, |at| match at {
            Some(at) => ol::alloc_at(device, capacity, at),
            None => placed_anywhere(device, capacity),
        })
        .or_else(|_| ol::alloc(device, capacity))
        .map_err(|e| format!("a {capacity}-byte region: {e}"))?,
    };
    regions.push(Region {
        device,
        mode,
        save_output,
        start,
        capacity,
        used: 0,
        read_through,
    });
    ANY.store(true, Ordering::Release);
    Ok(start)
}

/// liboffload's host device, which names host memory in copies.
fn host_device() -> Result<Device, String> {
    ol::devices()?
        .into_iter()
        .find(|&d| ol::is_host(d).unwrap_or(false))
        .ok_or_else(|| "liboffload has no host device to read a region into".to_string())
}

/// How GPUs align the memory they place.
const DEVICE_ALIGN: usize = 2 << 20;
/// Far places tried before the kernel's pick.
const FAR_TRIES: usize = 4;

/// `place(Some(at))` at up to `FAR_TRIES` random far addresses (`far_address`), then
/// `place(None)`. A recording's region far from where the kernel puts mappings is free
/// in a replaying process too (a tool's, a server's), whose own libraries and stacks
/// land elsewhere than the recording process's did.
fn far_first(
    size: usize,
    align: usize,
    mut place: impl FnMut(Option<usize>) -> Result<usize, String>,
) -> Result<usize, String> {
    for _ in 0..FAR_TRIES {
        let Some(at) = far_address::pick(size, align) else {
            break;
        };
        if let Ok(start) = place(Some(at)) {
            return Ok(start);
        }
    }
    place(None)
}

/// Device memory placed at an address range this process does not use (found by
/// reserving host address space, 2 MiB-aligned as GPUs place memory, and giving it back).
fn placed_anywhere(device: Device, size: usize) -> ol::Result<usize> {
    let free = map(size + DEVICE_ALIGN, None)?;
    // SAFETY: the reservation just made, unused.
    unsafe { libc::munmap(free as *mut libc::c_void, size + DEVICE_ALIGN) };
    ol::alloc_at(device, size, free.next_multiple_of(DEVICE_ALIGN))
}

/// Anonymous memory of `size` bytes, at `at` when given (and free there).
fn map(size: usize, at: Option<usize>) -> Result<usize, String> {
    let flags = libc::MAP_PRIVATE
        | libc::MAP_ANONYMOUS
        | libc::MAP_NORESERVE
        | if at.is_some() {
            libc::MAP_FIXED_NOREPLACE
        } else {
            0
        };
    // SAFETY: a new anonymous mapping; with MAP_FIXED_NOREPLACE the kernel refuses an
    // address range that is already mapped instead of replacing it.
    let got = unsafe {
        libc::mmap(
            at.unwrap_or(0) as *mut libc::c_void,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    if got == libc::MAP_FAILED {
        let why = std::io::Error::last_os_error();
        return Err(match at {
            Some(at) => format!("cannot place {size} bytes at {at:#x}: {why}"),
            None => format!("cannot reserve {size} bytes: {why}"),
        });
    }
    if let Some(at) = at {
        // A kernel too old for MAP_FIXED_NOREPLACE takes it as a hint.
        if got as usize != at {
            // SAFETY: the mapping just made, not used.
            unsafe { libc::munmap(got, size) };
            return Err(format!(
                "cannot place {size} bytes at {at:#x}: the system gave {got:p}"
            ));
        }
    }
    Ok(got as usize)
}

/// Whether any device records or replays (one atomic load).
#[inline]
pub fn any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// `size` bytes of `device`'s region, when it has one (`None`: allocate as usual).
#[inline]
pub fn alloc(device: Device, size: usize) -> Option<Result<usize, String>> {
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    alloc_in_region(device, size)
}

fn alloc_in_region(device: Device, size: usize) -> Option<Result<usize, String>> {
    let mut regions = REGIONS.lock();
    let r = regions.iter_mut().find(|r| r.device == device)?;
    let step = size.div_ceil(STEP).max(1) * STEP;
    if r.capacity - r.used < step {
        return Some(Err(format!(
            "the record/replay region of {} bytes at {:#x} has {} bytes left, {size} asked",
            r.capacity,
            r.start,
            r.capacity - r.used
        )));
    }
    let at = r.start + r.used;
    r.used += step;
    Some(Ok(at))
}

/// Whether `ptr` lies in a region (its memory is never freed one allocation at a time).
#[inline]
pub fn owns(ptr: usize) -> bool {
    ANY.load(Ordering::Acquire) && in_a_region(ptr)
}

fn in_a_region(ptr: usize) -> bool {
    REGIONS
        .lock()
        .iter()
        .any(|r| (r.start..r.start + r.capacity).contains(&ptr))
}

/// `device`'s region, if it has one.
pub fn of(device: Device) -> Option<Region> {
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    REGIONS.lock().iter().find(|r| r.device == device).copied()
}

/// The used part of the region: in place on the host device, read back from another.
pub fn used_bytes(region: &Region) -> Result<Cow<'static, [u8]>, String> {
    let Some(host) = region.read_through else {
        // SAFETY: the region stays mapped for the program's life; its first `used`
        // bytes were handed out, and the host device's memory is this process's.
        return Ok(Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(region.start as *const u8, region.used)
        }));
    };
    let mut bytes = vec![0u8; region.used];
    ol::memcpy(
        bytes.as_mut_ptr() as usize,
        host,
        region.start,
        region.device,
        region.used,
    )?;
    Ok(Cow::Owned(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_region_lies_far_from_the_kernels_own_picks() {
        let size = 64 << 30;
        let start = far_first(size, page_size(), |at| map(size, at)).expect("a region");
        assert!(
            start >= far_address::FAR_START && start + size <= far_address::FAR_END,
            "{start:#x}"
        );
        // SAFETY: the mapping just made, unused.
        unsafe { libc::munmap(start as *mut libc::c_void, size) };
    }

    #[test]
    fn where_every_far_place_is_refused_the_region_goes_anywhere() {
        let mut asked = Vec::new();
        let got = far_first(4096, 4096, |at| {
            asked.push(at);
            at.map_or(Ok(7), |at| Err(format!("{at:#x} taken")))
        });
        assert_eq!(got, Ok(7));
        assert_eq!(asked.len(), FAR_TRIES + 1);
        assert!(asked[..FAR_TRIES].iter().all(Option::is_some));
        assert_eq!(asked[FAR_TRIES], None);
    }
}
