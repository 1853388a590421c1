//! CUDA fatbin containers (the `.nv_fatbin` section of CUDA host binaries).
//!
//! NVIDIA does not document the format; the layout used here is the one established by
//! the community tools that read it: a 16-byte header `{u32 magic 0xBA55ED50, u16
//! version 1, u16 header_size, u64 body_size}` then entries, each `{u16 kind (1 = PTX,
//! 2 = cubin), u16 ?, u32 entry_header_size, u64 payload_size, u32 compressed_size,
//! u32 ?, u16 minor, u16 major, u32 sm, u32 name_offset, u32 name_size, u64 flags, u64 ?,
//! u64 uncompressed_size}` (64 bytes, larger in newer toolkits) followed by the payload.
//! Compressed payloads are reported, not decompressed here: a fatbin whose fitting
//! entries are all compressed goes to the CUDA driver whole, which decompresses them.

use std::ops::Range;

use super::bytes::{slice_at, u16_at, u32_at, u64_at, Endian};
use super::detect::FATBIN_MAGIC;
use crate::plugin::foundation::error::{Error, Result};

const LE: Endian = Endian::Little;
const HEADER_SIZE: u64 = 16;
const ENTRY_HEADER_MIN: u64 = 64;
/// Flag bits that mark a compressed payload (the older LZ-style and the newer zstd one).
const FLAGS_COMPRESSED: u64 = 0x2000 | 0x8000;
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// What a fatbin entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FatbinEntryKind {
    Ptx,
    Cubin,
    Other(u16),
}

/// One entry of a fatbin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatbinEntry {
    pub kind: FatbinEntryKind,
    /// The SM the entry is for (e.g. 80).
    pub sm: u32,
    /// Compressed payloads cannot be loaded by this library.
    pub compressed: bool,
    /// The payload's bytes (compressed or not) in the input given to the reader.
    pub payload_range: Range<usize>,
    pub uncompressed_size: Option<u64>,
}

impl FatbinEntry {
    pub fn describe(&self) -> String {
        let kind = match self.kind {
            FatbinEntryKind::Ptx => "PTX".to_owned(),
            FatbinEntryKind::Cubin => "cubin".to_owned(),
            FatbinEntryKind::Other(k) => format!("entry kind {k}"),
        };
        let z = if self.compressed { ", compressed" } else { "" };
        format!("{kind} for sm_{}{z}", self.sm)
    }
}

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::invalid_binary(format!("malformed CUDA fatbin: {msg}"))
}

/// Every entry of every fatbin container concatenated in `bytes`.
pub fn parse_fatbin(bytes: &[u8]) -> Result<Vec<FatbinEntry>> {
    let mut out = Vec::new();
    let mut start = 0u64;
    let total = bytes.len() as u64;
    while start < total {
        let container = &bytes[start as usize..];
        if start > 0 && container.iter().all(|&b| b == 0) {
            break;
        }
        if container.get(..4) != Some(&FATBIN_MAGIC[..]) {
            return Err(bad(format!("no 0xBA55ED50 magic at byte offset {start}")));
        }
        let (Some(version), Some(header_size), Some(body_size)) = (
            u16_at(container, 4, LE),
            u16_at(container, 6, LE),
            u64_at(container, 8, LE),
        ) else {
            return Err(bad("header truncated"));
        };
        if version != 1 {
            return Err(bad(format!(
                "version {version} is not supported (expected 1)"
            )));
        }
        let header_size = u64::from(header_size).max(HEADER_SIZE);
        let end = header_size
            .checked_add(body_size)
            .filter(|&e| e <= container.len() as u64)
            .ok_or_else(|| {
                bad(format!(
                    "body of {body_size} bytes overruns the {} bytes available",
                    container.len()
                ))
            })?;
        let mut at = header_size;
        while at < end {
            let entry = parse_entry(&container[..end as usize], at, start)?;
            at = entry.1;
            out.push(entry.0);
        }
        start += end;
        // Containers in a section are 8-byte aligned.
        start = start.checked_add(7).map_or(total, |s| s & !7);
    }
    Ok(out)
}

/// Reads the entry at `at`; returns it and the offset of the next one.
fn parse_entry(body: &[u8], at: u64, base: u64) -> Result<(FatbinEntry, u64)> {
    let field = |what: &str, v: Option<u64>| {
        v.ok_or_else(|| bad(format!("entry at byte {} has truncated {what}", base + at)))
    };
    let kind = field("kind", u16_at(body, at, LE).map(u64::from))? as u16;
    let header = field("header size", u32_at(body, at + 4, LE).map(u64::from))?;
    let payload_size = field("payload size", u64_at(body, at + 8, LE))?;
    if header < ENTRY_HEADER_MIN {
        return Err(bad(format!(
            "entry header of {header} bytes is smaller than {ENTRY_HEADER_MIN}"
        )));
    }
    let sm = field("sm", u32_at(body, at + 28, LE).map(u64::from))? as u32;
    let flags = field("flags", u64_at(body, at + 40, LE))?;
    let uncompressed = field("sizes", u64_at(body, at + 56, LE))?;
    let compressed_size = field("sizes", u32_at(body, at + 16, LE).map(u64::from))?;
    let payload_at = at
        .checked_add(header)
        .ok_or_else(|| bad("entry header size overflows"))?;
    let payload = slice_at(body, payload_at, payload_size).ok_or_else(|| {
        bad(format!(
            "payload of {payload_size} bytes at byte {} overruns the container",
            base.saturating_add(payload_at)
        ))
    })?;
    let compressed = flags & FLAGS_COMPRESSED != 0 || payload.starts_with(&ZSTD_MAGIC);
    // The stored payload is padded; a compressed one records its exact size.
    let stored = if compressed && compressed_size > 0 && compressed_size <= payload_size {
        compressed_size
    } else {
        payload_size
    };
    let start = (base + payload_at) as usize;
    let entry = FatbinEntry {
        kind: match kind {
            1 => FatbinEntryKind::Ptx,
            2 | 0x10 => FatbinEntryKind::Cubin,
            other => FatbinEntryKind::Other(other),
        },
        sm,
        compressed,
        payload_range: start..start + stored as usize,
        uncompressed_size: (compressed && uncompressed > 0).then_some(uncompressed),
    };
    Ok((entry, payload_at + payload_size))
}

/// Builds a fatbin from `(kind, sm, payload, compressed)` entries per the layout above;
/// the CUDA toolkit is not available to make real ones for tests.
pub fn write_fatbin(entries: &[(FatbinEntryKind, u32, &[u8], bool)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (kind, sm, payload, compressed) in entries {
        let padded = payload.len().div_ceil(8) * 8;
        let raw_kind: u16 = match kind {
            FatbinEntryKind::Ptx => 1,
            FatbinEntryKind::Cubin => 2,
            FatbinEntryKind::Other(k) => *k,
        };
        let mut h = [0u8; 64];
        h[0..2].copy_from_slice(&raw_kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        if *compressed {
            h[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
            h[40..48].copy_from_slice(&0x2000u64.to_le_bytes());
            h[56..64].copy_from_slice(&(4 * payload.len() as u64).to_le_bytes());
        }
        h[24..26].copy_from_slice(&0u16.to_le_bytes());
        h[26..28].copy_from_slice(&1u16.to_le_bytes());
        h[28..32].copy_from_slice(&sm.to_le_bytes());
        body.extend_from_slice(&h);
        body.extend_from_slice(payload);
        body.resize(body.len() + padded - payload.len(), 0);
    }
    let mut out = Vec::with_capacity(16 + body.len());
    out.extend_from_slice(&FATBIN_MAGIC);
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let f = write_fatbin(&[
            (
                FatbinEntryKind::Ptx,
                80,
                b".version 7.0\n.target sm_80\n",
                false,
            ),
            (FatbinEntryKind::Cubin, 90, b"\x7fELF", true),
        ]);
        let e = parse_fatbin(&f).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(&f[e[0].payload_range.clone()][..8], b".version");
        assert_eq!(
            (e[1].sm, e[1].compressed, e[1].uncompressed_size),
            (90, true, Some(16))
        );
        assert_eq!(&f[e[1].payload_range.clone()], b"\x7fELF");
        for cut in 0..f.len() {
            let _ = parse_fatbin(&f[..cut]);
        }
    }
}
