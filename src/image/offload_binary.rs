//! LLVM OffloadBinary containers (magic `0x10FF10AD`), as written by clang's offload
//! packager into the `.llvm.offloading` section.
//!
//! Layout (all fields little-endian, offsets relative to the start of each binary):
//! header `{magic[4], u32 version, u64 size, u64 entries_offset, u64 entry_size_or_count
//! [, u64 inflated_size (v3)]}`; entries of 40 bytes `{u16 image_kind, u16 offload_kind,
//! u32 flags, u64 string_offset, u64 num_strings, u64 image_offset, u64 image_size}`;
//! string entries `{u64 key_offset, u64 value_offset [, u64 value_size (v2+)]}`.
//! Version 1 (clang 19) has exactly one entry and NUL-terminated values; version 2 holds
//! `count` entries; version 3 may compress everything after the header. Several binaries
//! may follow each other, each starting at an 8-byte boundary.

use std::ops::Range;

use super::bytes::{align_up, cstr_at, slice_at, u16_at, u32_at, u64_at, Endian};
use super::detect::OFFLOAD_BINARY_MAGIC;
use crate::plugin::foundation::error::{Error, Result};

const LE: Endian = Endian::Little;
const ENTRY_SIZE: u64 = 40;
/// The newest version this reader understands.
pub const MAX_VERSION: u32 = 3;

/// `ImageKind` of an entry: what the embedded bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OffloadImageKind {
    None,
    Object,
    Bitcode,
    Cubin,
    Fatbinary,
    Ptx,
    SpirV,
    Other(u16),
}

impl OffloadImageKind {
    fn from_raw(v: u16) -> Self {
        match v {
            0 => Self::None,
            1 => Self::Object,
            2 => Self::Bitcode,
            3 => Self::Cubin,
            4 => Self::Fatbinary,
            5 => Self::Ptx,
            6 => Self::SpirV,
            other => Self::Other(other),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Object => "object",
            Self::Bitcode => "bitcode",
            Self::Cubin => "cubin",
            Self::Fatbinary => "fatbinary",
            Self::Ptx => "ptx",
            Self::SpirV => "spir-v",
            Self::Other(_) => "unknown",
        }
    }
}

/// `OffloadKind` of an entry: the producing programming model (a bit set upstream).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OffloadKind(pub u16);

impl OffloadKind {
    pub const OPENMP: u16 = 1;
    pub const CUDA: u16 = 2;
    pub const HIP: u16 = 4;
    pub const SYCL: u16 = 8;

    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "none",
            Self::OPENMP => "openmp",
            Self::CUDA => "cuda",
            Self::HIP => "hip",
            Self::SYCL => "sycl",
            _ => "mixed",
        }
    }
}

/// Entry flag: the entry carries metadata only, no image.
pub const FLAG_METADATA_ONLY: u32 = 1;

/// One entry of an OffloadBinary, with its image located in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffloadBinaryEntry {
    /// The container's format version.
    pub version: u32,
    pub image_kind: OffloadImageKind,
    pub offload_kind: OffloadKind,
    pub flags: u32,
    /// The string table in file order, e.g. `("triple", "amdgcn-amd-amdhsa")`.
    pub strings: Vec<(String, String)>,
    /// Byte range of the embedded image in the bytes given to the reader.
    pub image_range: Range<usize>,
}

impl OffloadBinaryEntry {
    pub fn string(&self, key: &str) -> Option<&str> {
        self.strings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    pub fn triple(&self) -> &str {
        self.string("triple").unwrap_or("")
    }
    pub fn arch(&self) -> &str {
        self.string("arch").unwrap_or("")
    }
    /// "amdgcn-amd-amdhsa gfx90a:xnack+ (object, openmp)".
    pub fn describe(&self) -> String {
        let arch = match self.arch() {
            "" => String::new(),
            a => format!(" {a}"),
        };
        format!(
            "{}{} ({}, {})",
            self.triple(),
            arch,
            self.image_kind.name(),
            self.offload_kind.name()
        )
    }
}

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::invalid_binary(format!("malformed OffloadBinary: {msg}"))
}

/// Every entry of every OffloadBinary concatenated in `bytes`.
pub fn parse_offload_binaries(bytes: &[u8]) -> Result<Vec<OffloadBinaryEntry>> {
    let mut out = Vec::new();
    let mut start = 0u64;
    while (start as usize) < bytes.len() {
        let rest = &bytes[start as usize..];
        // Padding between binaries is allowed at the end of a section.
        if rest.iter().all(|&b| b == 0) && start > 0 {
            break;
        }
        let size = parse_one(bytes, start, &mut out).map_err(|e| {
            if start > 0 {
                e.context(format!("binary at byte offset {start}"))
            } else {
                e
            }
        })?;
        start = align_up(start.saturating_add(size), 8).unwrap_or(u64::MAX);
    }
    Ok(out)
}

/// Parses the binary at `base`; returns its `size` field.
fn parse_one(bytes: &[u8], base: u64, out: &mut Vec<OffloadBinaryEntry>) -> Result<u64> {
    let available = bytes.len() as u64 - base;
    let whole = &bytes[base as usize..];
    if whole.get(..4) != Some(&OFFLOAD_BINARY_MAGIC[..]) {
        return Err(bad(format!("no 0x10FF10AD magic at byte offset {base}")));
    }
    let (Some(version), Some(size), Some(entries_offset), Some(count_field)) = (
        u32_at(whole, 4, LE),
        u64_at(whole, 8, LE),
        u64_at(whole, 16, LE),
        u64_at(whole, 24, LE),
    ) else {
        return Err(bad(format!("header truncated ({available} bytes)")));
    };
    if version == 0 || version > MAX_VERSION {
        return Err(bad(format!(
            "version {version} is not supported (this reader knows versions 1 to {MAX_VERSION})"
        )));
    }
    let header_len = if version >= 3 { 40 } else { 32 };
    if size < header_len || size > available {
        return Err(bad(format!(
            "size field {size} is outside {header_len}..={available} (the bytes available)"
        )));
    }
    let binary = &whole[..size as usize];
    if version >= 3 {
        let inflated = u64_at(binary, 32, LE).unwrap_or(0);
        if inflated != 0 {
            return Err(Error::invalid_binary(format!(
                "OffloadBinary version {version} is compressed ({size} bytes inflating to {inflated}); \
                 decompression is not supported, repackage it uncompressed"
            )));
        }
    }
    let count = if version == 1 { 1 } else { count_field };
    let entries_len = count.checked_mul(ENTRY_SIZE).filter(|&n| n <= size);
    let entries_fit = entries_len
        .and_then(|n| slice_at(binary, entries_offset, n))
        .is_some();
    if !entries_fit || count == 0 {
        return Err(bad(format!(
            "{count} entries at offset {entries_offset} do not fit in its {size} bytes"
        )));
    }
    let string_entry = if version == 1 { 16 } else { 24 };
    for i in 0..count {
        let at = entries_offset + i * ENTRY_SIZE;
        let r16 = |o| u16_at(binary, at + o, LE).unwrap_or(0);
        let r64 = |o| u64_at(binary, at + o, LE).unwrap_or(0);
        let (string_offset, num_strings) = (r64(8), r64(16));
        let (image_offset, image_size) = (r64(24), r64(32));
        if slice_at(binary, image_offset, image_size).is_none() {
            return Err(bad(format!(
                "entry {i}: image of {image_size} bytes at offset {image_offset} lies outside the binary"
            )));
        }
        let table_fits = num_strings
            .checked_mul(string_entry)
            .and_then(|n| slice_at(binary, string_offset, n))
            .is_some();
        if !table_fits {
            return Err(bad(format!(
                "entry {i}: {num_strings} strings at offset {string_offset} lie outside the binary"
            )));
        }
        let mut strings = Vec::with_capacity(num_strings as usize);
        for s in 0..num_strings {
            let e = string_offset + s * string_entry;
            let key_at = u64_at(binary, e, LE).unwrap_or(u64::MAX);
            let value_at = u64_at(binary, e + 8, LE).unwrap_or(u64::MAX);
            let key = cstr_at(binary, key_at).ok_or_else(|| {
                bad(format!(
                    "entry {i}: string key {s} is not a NUL-terminated UTF-8 string"
                ))
            })?;
            let value = if version == 1 {
                cstr_at(binary, value_at)
            } else {
                let len = u64_at(binary, e + 16, LE).unwrap_or(u64::MAX);
                slice_at(binary, value_at, len).and_then(|v| std::str::from_utf8(v).ok())
            }
            .ok_or_else(|| {
                bad(format!(
                    "entry {i}: value of string {key:?} lies outside the binary or is not UTF-8"
                ))
            })?;
            strings.push((key.to_owned(), value.to_owned()));
        }
        let image_start = (base + image_offset) as usize;
        out.push(OffloadBinaryEntry {
            version,
            image_kind: OffloadImageKind::from_raw(r16(0)),
            offload_kind: OffloadKind(r16(2)),
            flags: u32_at(binary, at + 4, LE).unwrap_or(0),
            strings,
            image_range: image_start..image_start + image_size as usize,
        });
    }
    Ok(size)
}

/// One image to write with [`write_offload_binary_v2`].
#[derive(Clone, Copy, Debug)]
pub struct OffloadImageSpec<'a> {
    pub kind: OffloadImageKind,
    /// An `OffloadKind` bit, e.g. [`OffloadKind::OPENMP`].
    pub offload_kind: u16,
    pub strings: &'a [(&'a str, &'a str)],
    pub image: &'a [u8],
}

/// Writes a version-2 OffloadBinary holding `images`. Used by tests and fuzz seeds to build
/// multi-entry containers, which clang 19 does not produce.
pub fn write_offload_binary_v2(images: &[OffloadImageSpec<'_>]) -> Vec<u8> {
    let raw_kind = |k: OffloadImageKind| match k {
        OffloadImageKind::None => 0,
        OffloadImageKind::Object => 1,
        OffloadImageKind::Bitcode => 2,
        OffloadImageKind::Cubin => 3,
        OffloadImageKind::Fatbinary => 4,
        OffloadImageKind::Ptx => 5,
        OffloadImageKind::SpirV => 6,
        OffloadImageKind::Other(v) => v,
    };
    let n_strings: usize = images.iter().map(|i| i.strings.len()).sum();
    let entries_at = 32u64;
    let strings_at = entries_at + ENTRY_SIZE * images.len() as u64;
    let mut text_at = strings_at + 24 * n_strings as u64;
    let mut text = Vec::new();
    let mut table = Vec::new();
    for spec in images {
        for (k, v) in spec.strings {
            let k_at = text_at + text.len() as u64;
            text.extend_from_slice(k.as_bytes());
            text.push(0);
            let v_at = text_at + text.len() as u64;
            text.extend_from_slice(v.as_bytes());
            text.push(0);
            table.push((k_at, v_at, v.len() as u64));
        }
    }
    text_at += text.len() as u64;
    let mut image_at = align_up(text_at, 8).unwrap_or(text_at);
    let mut entries = Vec::new();
    let mut string_cursor = strings_at;
    for &OffloadImageSpec {
        kind,
        offload_kind: offload,
        strings: strs,
        image,
    } in images
    {
        entries.extend_from_slice(&raw_kind(kind).to_le_bytes());
        entries.extend_from_slice(&offload.to_le_bytes());
        entries.extend_from_slice(&0u32.to_le_bytes());
        for v in [
            string_cursor,
            strs.len() as u64,
            image_at,
            image.len() as u64,
        ] {
            entries.extend_from_slice(&v.to_le_bytes());
        }
        string_cursor += 24 * strs.len() as u64;
        image_at += image.len() as u64;
    }
    let size = align_up(image_at, 8).unwrap_or(image_at);
    let mut out = Vec::with_capacity(size as usize);
    out.extend_from_slice(&OFFLOAD_BINARY_MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    for v in [size, entries_at, images.len() as u64] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&entries);
    for (k, v, l) in table {
        for x in [k, v, l] {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out.extend_from_slice(&text);
    out.resize(align_up(out.len() as u64, 8).unwrap_or(0) as usize, 0);
    for spec in images {
        out.extend_from_slice(spec.image);
    }
    out.resize(size as usize, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_round_trip() {
        let bin = write_offload_binary_v2(&[
            OffloadImageSpec {
                kind: OffloadImageKind::Ptx,
                offload_kind: OffloadKind::CUDA,
                strings: &[("triple", "nvptx64-nvidia-cuda"), ("arch", "sm_80")],
                image: b"abc",
            },
            OffloadImageSpec {
                kind: OffloadImageKind::Object,
                offload_kind: OffloadKind::OPENMP,
                strings: &[("triple", "x86_64")],
                image: b"hello",
            },
        ]);
        let entries = parse_offload_binaries(&bin).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].arch(), "sm_80");
        assert_eq!(&bin[entries[0].image_range.clone()], b"abc");
        assert_eq!(&bin[entries[1].image_range.clone()], b"hello");
        assert_eq!(entries[1].triple(), "x86_64");
    }

    #[test]
    fn huge_counts_are_rejected_without_allocating() {
        let mut bin = write_offload_binary_v2(&[OffloadImageSpec {
            kind: OffloadImageKind::Ptx,
            offload_kind: OffloadKind::CUDA,
            strings: &[],
            image: b"x",
        }]);
        bin[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_offload_binaries(&bin).is_err());
    }
}
