//! The memory this server handed out: every allocation (mapped at the application's
//! address, or the device's own) and every global the application looked up. A transfer
//! that lies inside one of them, on a device whose memory is this process's own (the
//! host device), goes between MPI and the memory in place, with no staging copy; any
//! other goes through the device's own copy.

use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::AllocKind;
use std::collections::BTreeMap;

/// One range of device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub size: usize,
    pub device: u32,
    /// This process's own memory (a host device's): readable and writable in place.
    pub own: bool,
    /// Mapped here at the application's address (`place`), unmapped when freed.
    pub placed: bool,
    /// The program a global belongs to (forgotten with it); `None` for allocations.
    pub program: Option<u64>,
    /// An allocation's kind (what it is freed as); `None` for globals.
    pub kind: Option<AllocKind>,
}

#[derive(Default)]
pub struct MemoryTable {
    regions: BTreeMap<usize, Region>,
}

impl MemoryTable {
    pub fn add(&mut self, base: usize, region: Region) {
        self.regions.insert(base, region);
    }

    /// Takes out the allocation of `device` at `base` (not a global, not inside one).
    pub fn remove(&mut self, device: u32, base: u64) -> Option<Region> {
        let base = usize::try_from(base).ok()?;
        match self.regions.get(&base) {
            Some(r) if r.program.is_none() && r.device == device => self.regions.remove(&base),
            _ => None,
        }
    }

    /// Forgets the globals of a destroyed program.
    pub fn forget_program(&mut self, program: u64) {
        self.regions.retain(|_, r| r.program != Some(program));
    }

    /// Whether `size` bytes at `address` lie inside one region `device` handed out (an
    /// allocation or a global looked up): a request naming other memory is refused
    /// before any device touches it, as the application's runtime refuses it.
    pub fn check(&self, device: u32, address: u64, size: u64) -> Result<(), (ErrorCode, String)> {
        let inside = (|| {
            let address = usize::try_from(address).ok()?;
            let end = address.checked_add(usize::try_from(size).ok()?)?;
            let (&base, region) = self.regions.range(..=address).next_back()?;
            (region.device == device && end <= base + region.size).then_some(())
        })();
        inside.ok_or_else(|| {
            (
                ErrorCode::InvalidArgument,
                format!(
                    "{size} bytes at {address:#x} are not inside memory of device {device} this server handed out"
                ),
            )
        })
    }

    /// Whether `size` bytes at `address` lie inside one region of `device` that is this
    /// process's own memory: the address to read or write in place.
    pub fn own_range(&self, device: u32, address: u64, size: u64) -> Option<usize> {
        let address = usize::try_from(address).ok()?;
        let end = address.checked_add(usize::try_from(size).ok()?)?;
        let (&base, region) = self.regions.range(..=address).next_back()?;
        let inside = region.own && region.device == device && end <= base + region.size;
        inside.then_some(address)
    }
}

/// A read-write mapping of `size` bytes exactly at `at` (anonymous with `fd` -1, else
/// shared, of that object); false where the address is taken here.
fn map_exactly(at: usize, size: usize, fd: libc::c_int) -> bool {
    let kind = if fd < 0 {
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS
    } else {
        libc::MAP_SHARED
    };
    // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping: memory at `at`,
    // or a failure.
    let got = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            size.max(1),
            libc::PROT_READ | libc::PROT_WRITE,
            kind | libc::MAP_FIXED_NOREPLACE,
            fd,
            0,
        )
    };
    if got != libc::MAP_FAILED && got as usize != at {
        // An old kernel ignoring the flag placed it elsewhere: not usable.
        unplace(got as usize, size);
    }
    got as usize == at
}

/// Maps `size` bytes of memory at `at`, the address the application reserved: this
/// process's memory is what its host device uses, so the address is the device's on
/// both sides. A taken address is `INVALID_VALUE` (the application tries another).
pub fn place(at: usize, size: usize) -> Result<usize, (ErrorCode, String)> {
    if !map_exactly(at, size, -1) {
        return Err((
            ErrorCode::InvalidValue,
            format!("address {at:#x} is taken here"),
        ));
    }
    Ok(at)
}

/// Maps the application's shared-memory object `name` (`size` bytes) at `at`, the
/// address it has it at: then the host device's memory is the application's memory too.
/// Fails where the object is not to be found (this server is on another node) or the
/// address is taken here.
pub fn attach(name: &str, at: usize, size: usize) -> Result<usize, String> {
    let c_name = std::ffi::CString::new(name).map_err(|_| format!("a name with NUL: {name}"))?;
    // SAFETY: a NUL-terminated name; opening an existing object, read-write.
    let fd = unsafe { libc::shm_open(c_name.as_ptr(), libc::O_RDWR, 0) };
    if fd < 0 {
        return Err(format!("{name}: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: plain data filled by fstat on our descriptor.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open; `stat` is writable.
    let sized = unsafe { libc::fstat(fd, &mut stat) } == 0 && stat.st_size as u64 >= size as u64;
    let mapped = sized && map_exactly(at, size, fd);
    // SAFETY: our descriptor; the mapping keeps the object.
    unsafe { libc::close(fd) };
    match (sized, mapped) {
        (true, true) => Ok(at),
        (true, false) => Err(format!("{name}: address {at:#x} is taken here")),
        (false, _) => Err(format!("{name}: smaller than {size} bytes")),
    }
}

/// Unmaps what `place` mapped.
pub fn unplace(at: usize, size: usize) {
    // SAFETY: a mapping `place` made, of this size, which nothing uses any more.
    unsafe { libc::munmap(at as *mut libc::c_void, size.max(1)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(size: usize, device: u32, own: bool, program: Option<u64>) -> Region {
        Region {
            size,
            device,
            own,
            placed: false,
            program,
            kind: program.is_none().then_some(AllocKind::Device),
        }
    }

    #[test]
    fn only_ranges_inside_own_memory_of_the_device_are_in_place() {
        let mut table = MemoryTable::default();
        table.add(0x1000, region(0x100, 0, true, None));
        table.add(0x2000, region(0x100, 1, false, None));
        table.add(0x3000, region(0x10, 0, true, Some(7)));
        assert_eq!(table.own_range(0, 0x1000, 0x100), Some(0x1000));
        assert_eq!(table.own_range(0, 0x1080, 0x80), Some(0x1080));
        assert_eq!(table.own_range(0, 0x1080, 0x81), None, "overruns");
        assert_eq!(table.own_range(1, 0x1000, 1), None, "another device's");
        assert_eq!(table.own_range(1, 0x2000, 1), None, "not own memory");
        assert_eq!(table.own_range(0, 0xfff, 1), None, "before any region");
        assert_eq!(table.own_range(0, u64::MAX, 2), None, "wraps");
        assert_eq!(table.own_range(0, 0x3008, 8), Some(0x3008), "a global");
        assert_eq!(table.remove(0, 0x3000), None, "a global is not freed");
        assert!(
            table.check(1, 0x2000, 0x100).is_ok(),
            "any memory of the device"
        );
        assert!(table.check(1, 0x2000, 0x101).is_err(), "overruns");
        assert!(table.check(0, 0x2000, 1).is_err(), "another device's");
        assert!(table.check(0, 0x500, 1).is_err(), "nobody's");
        assert!(table.check(0, u64::MAX, 2).is_err(), "wraps");
        assert!(table.remove(0, 0x1008).is_none(), "inside one");
        assert!(table.remove(1, 0x1000).is_none(), "another device's");
        table.forget_program(7);
        assert_eq!(table.own_range(0, 0x3008, 8), None);
        assert!(table.remove(0, 0x1000).is_some());
        assert_eq!(table.own_range(0, 0x1000, 1), None);
    }
}
