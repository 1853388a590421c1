//! A launch's argument bytes, kept in place when they are few (most launches: a handful
//! of pointers and sizes) so that a launch allocates nothing; a larger buffer goes to
//! the heap. In place they start 16-byte aligned, as the host device's kernels expect
//! their argument buffer (it realigns a heap buffer the allocator placed otherwise).

use std::ops::Deref;

/// Bytes kept in place: four pointers.
const IN_PLACE: usize = 32;

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Block([u8; IN_PLACE]);

#[derive(Clone)]
enum Storage {
    InPlace { block: Block, len: u8 },
    Heap(Vec<u8>),
}

/// Argument bytes (see the module).
#[derive(Clone)]
pub struct ArgBytes(Storage);

impl ArgBytes {
    /// A copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> Self {
        if bytes.len() > IN_PLACE {
            return ArgBytes(Storage::Heap(bytes.to_vec()));
        }
        let mut block = Block([0; IN_PLACE]);
        block.0[..bytes.len()].copy_from_slice(bytes);
        ArgBytes(Storage::InPlace {
            block,
            len: bytes.len() as u8,
        })
    }

    /// The bytes as a vector of their own (no copy when they are on the heap already).
    pub fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Storage::InPlace { block, len } => block.0[..usize::from(len)].to_vec(),
            Storage::Heap(bytes) => bytes,
        }
    }
}

impl Default for ArgBytes {
    fn default() -> Self {
        ArgBytes::copy_of(&[])
    }
}

impl From<Vec<u8>> for ArgBytes {
    /// Kept as it is where it does not fit in place.
    fn from(bytes: Vec<u8>) -> Self {
        if bytes.len() > IN_PLACE {
            ArgBytes(Storage::Heap(bytes))
        } else {
            ArgBytes::copy_of(&bytes)
        }
    }
}

impl Deref for ArgBytes {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Storage::InPlace { block, len } => &block.0[..usize::from(*len)],
            Storage::Heap(bytes) => bytes,
        }
    }
}

impl PartialEq for ArgBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for ArgBytes {}

impl std::fmt::Debug for ArgBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_buffers_keep_their_bytes() {
        for len in [0, 1, 24, IN_PLACE, IN_PLACE + 1, 4096] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let copied = ArgBytes::copy_of(&bytes);
            assert_eq!(&*copied, &bytes[..]);
            if len <= IN_PLACE {
                assert_eq!(copied.as_ptr() as usize % 16, 0, "{len} bytes: not aligned");
            }
            assert_eq!(ArgBytes::from(bytes.clone()), copied);
            assert_eq!(copied.into_vec(), bytes);
        }
    }

    #[test]
    fn a_large_vector_is_kept_not_copied() {
        let bytes = vec![7u8; 1000];
        let at = bytes.as_ptr();
        assert_eq!(ArgBytes::from(bytes).as_ptr(), at);
    }
}
