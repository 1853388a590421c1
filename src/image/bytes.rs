//! Bounds-checked reads from an untrusted byte slice.
//!
//! Every reader in `image` goes through these helpers, so an offset or size taken from
//! the input can never index out of range or overflow: a bad one is `None`, and the
//! caller turns that into an `InvalidBinary` error naming the field.

use crate::plugin::foundation::error::{Error, Result};

/// Byte order of a multi-byte field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    pub fn name(self) -> &'static str {
        match self {
            Endian::Little => "little-endian",
            Endian::Big => "big-endian",
        }
    }
}

/// The `len` bytes at `offset`, or `None` when any of them lies outside `data`.
pub fn slice_at(data: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let len = usize::try_from(len).ok()?;
    let end = start.checked_add(len)?;
    data.get(start..end)
}

fn array_at<const N: usize>(data: &[u8], offset: u64) -> Option<[u8; N]> {
    slice_at(data, offset, N as u64)?.try_into().ok()
}

pub fn u16_at(data: &[u8], offset: u64, endian: Endian) -> Option<u16> {
    let b = array_at::<2>(data, offset)?;
    Some(match endian {
        Endian::Little => u16::from_le_bytes(b),
        Endian::Big => u16::from_be_bytes(b),
    })
}

pub fn u32_at(data: &[u8], offset: u64, endian: Endian) -> Option<u32> {
    let b = array_at::<4>(data, offset)?;
    Some(match endian {
        Endian::Little => u32::from_le_bytes(b),
        Endian::Big => u32::from_be_bytes(b),
    })
}

pub fn u64_at(data: &[u8], offset: u64, endian: Endian) -> Option<u64> {
    let b = array_at::<8>(data, offset)?;
    Some(match endian {
        Endian::Little => u64::from_le_bytes(b),
        Endian::Big => u64::from_be_bytes(b),
    })
}

/// The NUL-terminated string starting at `offset` (without the NUL), if it ends inside
/// `data` and is valid UTF-8.
pub fn cstr_at(data: &[u8], offset: u64) -> Option<&str> {
    let start = usize::try_from(offset).ok()?;
    let text = std::ffi::CStr::from_bytes_until_nul(data.get(start..)?).ok()?;
    text.to_str().ok()
}

/// The bytes before the first NUL, or all of `data` where it has none. The search reads
/// a word at a time (the standard library's `memchr`), not a byte: PTX text can be
/// megabytes, and a load looks for its end more than once.
pub fn before_nul(data: &[u8]) -> &[u8] {
    match std::ffi::CStr::from_bytes_until_nul(data) {
        Ok(text) => text.to_bytes(),
        Err(_) => data,
    }
}

/// Whether `needle` occurs in `haystack` (the C library's `memmem`, vectorised; no UTF-8
/// check of a text that may be megabytes).
pub fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    // SAFETY: both pointers and lengths come from live slices; memmem only reads them.
    let found = unsafe {
        libc::memmem(
            haystack.as_ptr().cast(),
            haystack.len(),
            needle.as_ptr().cast(),
            needle.len(),
        )
    };
    !found.is_null()
}

/// Rounds `value` up to a multiple of `align` (a power of two, or 0/1 for none).
pub fn align_up(value: u64, align: u64) -> Option<u64> {
    if align <= 1 {
        return Some(value);
    }
    let mask = align - 1;
    value.checked_add(mask).map(|v| v & !mask)
}

/// The first bytes of `data` (up to 16) in hex, for "unrecognised image" messages.
pub fn hex_prefix(data: &[u8]) -> String {
    let shown = &data[..data.len().min(16)];
    let hex: Vec<String> = shown.iter().map(|b| format!("{b:02x}")).collect();
    let more = if data.len() > shown.len() { " ..." } else { "" };
    format!("[{}{}]", hex.join(" "), more)
}

/// Shorthand for the error every reader raises when a field points outside the image.
pub fn truncated(what: &str, at: u64, total: usize) -> Error {
    Error::invalid_binary(format!(
        "{what} at byte offset {at} lies outside the image ({total} bytes): the image is truncated or corrupt"
    ))
}

/// Turns a missing bounded read into an `InvalidBinary` error.
pub fn need<T>(value: Option<T>, what: &str, at: u64, total: usize) -> Result<T> {
    value.ok_or_else(|| truncated(what, at, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stay_in_bounds() {
        let d = [1u8, 2, 3, 4, 5];
        assert_eq!(u32_at(&d, 1, Endian::Little), Some(0x0504_0302));
        assert_eq!(u32_at(&d, 1, Endian::Big), Some(0x0203_0405));
        assert_eq!(u32_at(&d, 2, Endian::Little), None);
        assert_eq!(u64_at(&d, u64::MAX, Endian::Little), None);
        assert_eq!(slice_at(&d, u64::MAX - 1, 4), None);
        assert_eq!(cstr_at(b"ab\0cd", 0), Some("ab"));
        assert_eq!(cstr_at(b"ab\0cd", 3), None);
        assert_eq!(align_up(9, 8), Some(16));
        assert_eq!(align_up(u64::MAX, 8), None);
        assert_eq!(hex_prefix(&[0xde, 0xad]), "[de ad]");
    }

    #[test]
    fn text_ends_at_the_first_nul_and_is_searched_as_bytes() {
        assert_eq!(before_nul(b"ab\0cd\0"), b"ab");
        assert_eq!(before_nul(b"abc"), b"abc");
        assert_eq!(before_nul(b"\0"), b"");
        assert_eq!(before_nul(b""), b"");
        let long = [vec![b'x'; 100_000], b"nvptx$device$init\xff".to_vec()].concat();
        assert!(contains_bytes(&long, b"nvptx$device$init"));
        assert!(!contains_bytes(&long, b"nvptx$device$fini"));
        assert!(!contains_bytes(b"ab", b"abc"));
        assert!(contains_bytes(b"", b""));
    }
}
