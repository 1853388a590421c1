//! A value alone on its cache line(s), so neighbouring locks do not false-share.

use std::ops::Deref;

/// `T` aligned to 128 bytes (two 64-byte lines: adjacent-line prefetchers pair them).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
