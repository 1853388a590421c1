//! Byte buffers that start on a 64-byte boundary: the messages the remote backend and
//! its server exchange. A copy between two of them (MPI moving a message from one
//! process's buffer to another's, a reply's data into its buffer) then never runs at
//! the distances where `rep movsb` is slow (a few bytes, see `copy.rs`): their distance
//! is a multiple of 64 (buffers of at most 2 KiB, which no copy slows, are plain
//! `Vec`s, cheaper to allocate). With `Vec<u8>` (16-byte aligned, placed as the allocator
//! likes) a 4 KiB message crossed processes in 3.6 us instead of 2.2 us in some runs,
//! a 64 KiB one in 29 us instead of 8 (this machine, OpenMPI 4.1 over shared memory).
//!
//! Compiled into the MPI transport too (by path), which does not link the runtime.

use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

const LINE: usize = 64;

/// Up to this many bytes a buffer is a plain `Vec<u8>`: copies this short never take
/// the slow path, and an aligned allocation costs more than `malloc` (four of them per
/// request and reply added 0.3 us to a remote launch + sync).
const SMALL: usize = 2048;

/// 64 bytes on a 64-byte boundary: the unit of storage.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; LINE]);

enum Storage {
    Small(Vec<u8>),
    /// The first `len` bytes are written, the rest is spare.
    Lines(Vec<MaybeUninit<Line>>),
}

/// A growable byte buffer whose first byte is 64-byte aligned once it may hold more than
/// `SMALL` bytes.
pub struct AlignedBytes {
    storage: Storage,
    len: usize,
}

impl Default for AlignedBytes {
    fn default() -> Self {
        AlignedBytes {
            storage: Storage::Small(Vec::new()),
            len: 0,
        }
    }
}

impl AlignedBytes {
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty buffer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut bytes = Self::new();
        bytes.reserve_exact(capacity);
        bytes
    }

    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        let mut bytes = Self::with_capacity(len);
        // SAFETY: `with_capacity` made room for `len` bytes.
        unsafe { bytes.as_mut_ptr().write_bytes(0, len) };
        bytes.set_len(len);
        bytes
    }

    /// A copy of `data`.
    pub fn from_slice(data: &[u8]) -> Self {
        let mut bytes = Self::with_capacity(data.len());
        bytes.extend_from_slice(data);
        bytes
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        match &mut self.storage {
            Storage::Small(v) => v.as_mut_ptr(),
            Storage::Lines(lines) => lines.as_mut_ptr().cast::<u8>(),
        }
    }

    fn as_ptr(&self) -> *const u8 {
        match &self.storage {
            Storage::Small(v) => v.as_ptr(),
            Storage::Lines(lines) => lines.as_ptr().cast::<u8>(),
        }
    }

    /// The length, once the bytes up to it are written.
    fn set_len(&mut self, len: usize) {
        if let Storage::Small(v) = &mut self.storage {
            // SAFETY: the caller wrote the bytes up to `len`, within the capacity.
            unsafe { v.set_len(len) };
        }
        self.len = len;
    }

    /// Room for `extra` more bytes, the storage growing by doubling.
    pub fn reserve(&mut self, extra: usize) {
        self.grow(extra, false);
    }

    /// Room for exactly `extra` more bytes (whole lines once aligned).
    pub fn reserve_exact(&mut self, extra: usize) {
        self.grow(extra, true);
    }

    fn grow(&mut self, extra: usize, exact: bool) {
        let needed = self
            .len
            .checked_add(extra)
            .expect("AlignedBytes: size overflows");
        if let Storage::Small(v) = &mut self.storage {
            if needed <= SMALL {
                if exact {
                    v.reserve_exact(extra);
                } else {
                    v.reserve(extra);
                }
                return;
            }
            // Past `SMALL`: the bytes move to aligned storage, once.
            let mut lines: Vec<MaybeUninit<Line>> = Vec::with_capacity(needed.div_ceil(LINE));
            // SAFETY: `MaybeUninit` elements need no initialisation; the capacity is
            // allocated; the written bytes are copied over below.
            unsafe {
                lines.set_len(lines.capacity());
                std::ptr::copy_nonoverlapping(
                    v.as_ptr(),
                    lines.as_mut_ptr().cast::<u8>(),
                    self.len,
                );
            }
            self.storage = Storage::Lines(lines);
            return;
        }
        let Storage::Lines(lines) = &mut self.storage else {
            unreachable!("small storage handled above")
        };
        let needed = needed.div_ceil(LINE);
        if needed <= lines.len() {
            return;
        }
        let more = needed - lines.len();
        if exact {
            lines.reserve_exact(more);
        } else {
            lines.reserve(more);
        }
        let capacity = lines.capacity();
        // SAFETY: `MaybeUninit` elements need no initialisation, and the capacity is
        // allocated.
        unsafe { lines.set_len(capacity) };
    }

    pub fn push(&mut self, byte: u8) {
        self.reserve(1);
        let at = self.len;
        // SAFETY: `reserve` made room for one more byte.
        unsafe { self.as_mut_ptr().add(at).write(byte) };
        self.set_len(at + 1);
    }

    /// Appends `data`, copied as `copy::copy_bytes` does.
    pub fn extend_from_slice(&mut self, data: &[u8]) {
        self.reserve(data.len());
        let at = self.len;
        // SAFETY: `reserve` made room for `data.len()` bytes past `at`; `data` cannot
        // lie in this buffer's spare storage, which only `&mut self` reaches.
        unsafe { super::copy::copy_bytes(self.as_mut_ptr().add(at), data.as_ptr(), data.len()) };
        self.set_len(at + data.len());
    }

    /// The bytes as a raw allocation, for a C caller: give it back to `from_raw`.
    pub fn into_raw(self) -> (*mut u8, usize) {
        let len = self.len;
        let raw = match self.storage {
            Storage::Lines(mut lines) if len > SMALL => {
                lines.truncate(len.div_ceil(LINE));
                Box::into_raw(lines.into_boxed_slice()).cast::<u8>()
            }
            // What `from_raw` takes back as small (copied if it had grown).
            Storage::Lines(_) => Box::into_raw(self_bytes(&self.storage, len)).cast::<u8>(),
            Storage::Small(v) => Box::into_raw(v.into_boxed_slice()).cast::<u8>(),
        };
        (raw, len)
    }

    /// Takes back what `into_raw` gave out.
    ///
    /// # Safety
    /// `ptr` and `len` are exactly what one `into_raw` returned, and not taken back yet.
    pub unsafe fn from_raw(ptr: *mut u8, len: usize) -> Self {
        let storage = if len > SMALL {
            let lines = std::ptr::slice_from_raw_parts_mut(
                ptr.cast::<MaybeUninit<Line>>(),
                len.div_ceil(LINE),
            );
            // SAFETY: the caller's promise: a boxed slice of exactly these lines.
            Storage::Lines(unsafe { Box::from_raw(lines) }.into_vec())
        } else {
            let bytes = std::ptr::slice_from_raw_parts_mut(ptr, len);
            // SAFETY: the caller's promise: a boxed slice of exactly these bytes.
            Storage::Small(unsafe { Box::from_raw(bytes) }.into_vec())
        };
        AlignedBytes { storage, len }
    }
}

/// The first `len` bytes of aligned storage as a plain boxed slice.
fn self_bytes(storage: &Storage, len: usize) -> Box<[u8]> {
    let Storage::Lines(lines) = storage else {
        unreachable!("only aligned storage is copied out")
    };
    // SAFETY: the first `len` bytes are written.
    unsafe { std::slice::from_raw_parts(lines.as_ptr().cast::<u8>(), len) }.into()
}

impl Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the first `len` bytes of the storage are written; an empty buffer's
        // pointer is dangling but aligned and non-null, valid for 0 bytes.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        // SAFETY: as in `deref`, and `&mut self` makes the bytes ours alone.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), len) }
    }
}

impl AsRef<[u8]> for AlignedBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_aligned_and_keeps_what_is_written() {
        let mut b = AlignedBytes::new();
        assert!(b.is_empty());
        for i in 0..10_000u32 {
            b.push(i as u8);
            assert!(b.len() <= SMALL || b.as_ptr() as usize % LINE == 0);
        }
        b.extend_from_slice(&[7; 5000]);
        assert_eq!(b.len(), 15_000);
        assert!((0..10_000).all(|i| b[i] == i as u8));
        assert!(b[10_000..].iter().all(|&x| x == 7));

        let z = AlignedBytes::zeroed(4097);
        assert!(z.iter().all(|&x| x == 0) && z.len() == 4097);
        assert_eq!(&*AlignedBytes::from_slice(b"abc"), b"abc");
    }

    #[test]
    fn a_raw_round_trip_gives_back_the_same_bytes() {
        for len in [0, 1, 64, 65, 1000, SMALL, SMALL + 1, 4105] {
            let mut b = AlignedBytes::with_capacity(len * 3);
            b.extend_from_slice(&vec![3u8; len]);
            assert!(len <= SMALL || b.as_ptr() as usize % LINE == 0);
            let (ptr, n) = b.into_raw();
            assert_eq!(n, len);
            // SAFETY: what into_raw returned, once.
            let back = unsafe { AlignedBytes::from_raw(ptr, n) };
            assert_eq!(&*back, &vec![3u8; len][..]);
        }
    }
}
