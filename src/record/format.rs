//! The kernel record format (`OFFLOAD_RECORD`), version 1: one file per recorded launch,
//! all integers little-endian, read back by `offload-replay`.
//!
//! ```text
//! magic        8 bytes  "OFFLDREC"
//! version      u32      1
//! flags        u32      bit 0: the output after the launch follows the allocations
//! backend      u32      the device's ol_platform_backend_t
//! device name  u32 length, bytes (UTF-8)
//! kernel name  u32 length, bytes (UTF-8)
//! dimensions   u32      1 to 3
//! groups       3 x u32
//! group size   3 x u32
//! dynamic shared memory  u64
//! C parameters u32      1: OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS was given
//! image        u64 length, bytes (the program the kernel came from)
//! arguments    u64 length, bytes (the launch's argument buffer)
//! allocations  u32 count, then each: u64 base, u64 size, u32 kind (ol_alloc_type_t),
//!              then its size bytes as they were before the launch
//! output       (flag bit 0) each allocation's size bytes after the launch
//! ```
//!
//! Nothing may follow. A reader refuses, naming the file and what it expected: another
//! magic (not a record), a newer version, a field cut short, bytes past the end.

use std::io::Write;

/// What every record starts with.
pub const MAGIC: [u8; 8] = *b"OFFLDREC";
/// The version this library writes and reads.
pub const VERSION: u32 = 1;
const FLAG_OUTPUT: u32 = 1;

/// One device allocation a recorded kernel could reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub base: u64,
    /// `ol_alloc_type_t`.
    pub kind: u32,
    /// Its bytes before the launch.
    pub bytes: Vec<u8>,
}

/// One recorded launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub backend: u32,
    pub device_name: String,
    pub kernel: String,
    pub dimensions: u32,
    pub groups: [u32; 3],
    pub group_size: [u32; 3],
    pub dyn_shared: u64,
    pub c_parameters: bool,
    pub image: Vec<u8>,
    pub args: Vec<u8>,
    pub allocations: Vec<Allocation>,
    /// Each allocation's bytes after the launch, when recorded.
    pub output: Option<Vec<Vec<u8>>>,
}

/// Everything of a record before its allocations, for a writer that streams the
/// allocations' bytes (`runtime::recording` reads them from the device in pieces).
pub struct Header<'a> {
    pub backend: u32,
    pub device_name: &'a str,
    pub kernel: &'a str,
    pub dimensions: u32,
    pub groups: [u32; 3],
    pub group_size: [u32; 3],
    pub dyn_shared: u64,
    pub c_parameters: bool,
    pub image: &'a [u8],
    pub args: &'a [u8],
    pub with_output: bool,
    pub allocations: u32,
}

/// Writes `h`; then come, per allocation, `allocation_start` and its bytes, and (with
/// output) each allocation's bytes again.
pub fn write_header(out: &mut impl Write, h: &Header) -> std::io::Result<()> {
    let mut b = Vec::with_capacity(128);
    b.extend_from_slice(&MAGIC);
    put32(&mut b, VERSION);
    put32(&mut b, if h.with_output { FLAG_OUTPUT } else { 0 });
    put32(&mut b, h.backend);
    put_text(&mut b, h.device_name);
    put_text(&mut b, h.kernel);
    put32(&mut b, h.dimensions);
    h.groups.iter().for_each(|&g| put32(&mut b, g));
    h.group_size.iter().for_each(|&g| put32(&mut b, g));
    put64(&mut b, h.dyn_shared);
    put32(&mut b, u32::from(h.c_parameters));
    put64(&mut b, h.image.len() as u64);
    out.write_all(&b)?;
    out.write_all(h.image)?;
    out.write_all(&(h.args.len() as u64).to_le_bytes())?;
    out.write_all(h.args)?;
    out.write_all(&h.allocations.to_le_bytes())
}

/// What precedes one allocation's bytes.
pub fn allocation_start(
    out: &mut impl Write,
    base: u64,
    size: u64,
    kind: u32,
) -> std::io::Result<()> {
    let mut b = Vec::with_capacity(20);
    put64(&mut b, base);
    put64(&mut b, size);
    put32(&mut b, kind);
    out.write_all(&b)
}

impl Record {
    /// The record as a file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let header = Header {
            backend: self.backend,
            device_name: &self.device_name,
            kernel: &self.kernel,
            dimensions: self.dimensions,
            groups: self.groups,
            group_size: self.group_size,
            dyn_shared: self.dyn_shared,
            c_parameters: self.c_parameters,
            image: &self.image,
            args: &self.args,
            with_output: self.output.is_some(),
            allocations: self.allocations.len() as u32,
        };
        // Writing into a vector cannot fail.
        let _ = write_header(&mut out, &header);
        for a in &self.allocations {
            let _ = allocation_start(&mut out, a.base, a.bytes.len() as u64, a.kind);
            out.extend_from_slice(&a.bytes);
        }
        for bytes in self.output.iter().flatten() {
            out.extend_from_slice(bytes);
        }
        out
    }

    /// Reads a record from `bytes`; errors say what was wrong and where.
    pub fn decode(bytes: &[u8]) -> Result<Record, String> {
        let mut r = Reader { bytes, at: 0 };
        let magic = r.take(8, "the magic")?;
        if magic != MAGIC {
            return Err(format!(
                "not a liboffload kernel record: it starts with {:?}, a record with {:?}",
                String::from_utf8_lossy(magic),
                String::from_utf8_lossy(&MAGIC)
            ));
        }
        let version = r.u32("the version")?;
        if version != VERSION {
            return Err(format!(
                "a record of format version {version}; this liboffload reads version {VERSION}{}",
                if version > VERSION {
                    " (a newer liboffload wrote it)"
                } else {
                    ""
                }
            ));
        }
        let flags = r.u32("the flags")?;
        if flags & !FLAG_OUTPUT != 0 {
            return Err(format!(
                "unknown flags {flags:#x} (version 1 knows {FLAG_OUTPUT:#x})"
            ));
        }
        let mut rec = Record {
            backend: r.u32("the backend")?,
            device_name: r.text("the device name")?,
            kernel: r.text("the kernel name")?,
            dimensions: r.u32("the dimensions")?,
            ..Record::default()
        };
        if !(1..=3).contains(&rec.dimensions) {
            return Err(format!("{} dimensions (1 to 3 expected)", rec.dimensions));
        }
        for g in rec.groups.iter_mut() {
            *g = r.u32("the group counts")?;
        }
        for g in rec.group_size.iter_mut() {
            *g = r.u32("the group sizes")?;
        }
        rec.dyn_shared = r.u64("the dynamic shared memory size")?;
        rec.c_parameters = match r.u32("the C-parameters mark")? {
            0 => false,
            1 => true,
            other => return Err(format!("a C-parameters mark of {other} (0 or 1 expected)")),
        };
        let n = r.len64("the image length")?;
        rec.image = r.take(n, "the image")?.to_vec();
        let n = r.len64("the argument length")?;
        rec.args = r.take(n, "the arguments")?.to_vec();
        let count = r.u32("the allocation count")?;
        for i in 0..count {
            let base = r.u64("an allocation's base")?;
            let size = r.len64("an allocation's size")?;
            let kind = r.u32("an allocation's kind")?;
            let bytes = r
                .take(size, &format!("allocation {i}'s {size} bytes"))?
                .to_vec();
            rec.allocations.push(Allocation { base, kind, bytes });
        }
        if flags & FLAG_OUTPUT != 0 {
            let mut output = Vec::with_capacity(rec.allocations.len());
            for (i, a) in rec.allocations.iter().enumerate() {
                let size = a.bytes.len();
                output.push(r.take(size, &format!("allocation {i}'s output"))?.to_vec());
            }
            rec.output = Some(output);
        }
        if r.at != bytes.len() {
            return Err(format!(
                "{} bytes past the record's end at byte {}",
                bytes.len() - r.at,
                r.at
            ));
        }
        Ok(rec)
    }
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    put32(out, text.len() as u32);
    out.extend_from_slice(text.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let left = self.bytes.len() - self.at;
        if n > left {
            return Err(format!(
                "cut short at byte {}: {what} needs {n} bytes, {left} are left",
                self.at
            ));
        }
        let taken = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(taken)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        let mut word = [0u8; 8];
        word.copy_from_slice(b);
        Ok(u64::from_le_bytes(word))
    }

    /// A length that must fit what is left of the file.
    fn len64(&mut self, what: &str) -> Result<usize, String> {
        let at = self.at;
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(format!(
                "cut short: {what} at byte {at} announces {n} bytes, {left} are left"
            ));
        }
        Ok(n as usize)
    }

    fn text(&mut self, what: &str) -> Result<String, String> {
        let n = self.u32(what)? as usize;
        let bytes = self.take(n, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("{what} is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        Record {
            backend: 4,
            device_name: "host".into(),
            kernel: "saxpy".into(),
            dimensions: 2,
            groups: [4, 2, 1],
            group_size: [64, 1, 1],
            dyn_shared: 128,
            c_parameters: true,
            image: b"\x7fELF...".to_vec(),
            args: vec![1, 2, 3, 4, 5, 6, 7, 8],
            allocations: vec![
                Allocation {
                    base: 0x7000_0000,
                    kind: 0,
                    bytes: vec![9; 40],
                },
                Allocation {
                    base: 0x7000_1000,
                    kind: 2,
                    bytes: vec![],
                },
            ],
            output: Some(vec![vec![7; 40], vec![]]),
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let rec = sample();
        assert_eq!(Record::decode(&rec.encode()).unwrap(), rec);
        let without_output = Record {
            output: None,
            ..sample()
        };
        assert_eq!(
            Record::decode(&without_output.encode()).unwrap(),
            without_output
        );
    }

    #[test]
    fn every_cut_is_refused_with_where() {
        let bytes = sample().encode();
        for n in 0..bytes.len() {
            let e = Record::decode(&bytes[..n]).unwrap_err();
            assert!(e.contains("cut short"), "at {n}: {e}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Record::decode(&longer)
            .unwrap_err()
            .contains("past the record's end"));
    }

    #[test]
    fn foreign_files_and_newer_versions_are_refused() {
        let e = Record::decode(b"\x7fELF\x02\x01\x01\x00 and more").unwrap_err();
        assert!(e.contains("not a liboffload kernel record"), "{e}");
        let mut newer = sample().encode();
        newer[8..12].copy_from_slice(&2u32.to_le_bytes());
        let e = Record::decode(&newer).unwrap_err();
        assert!(e.contains("version 2") && e.contains("newer"), "{e}");
        let mut flags = sample().encode();
        flags[12..16].copy_from_slice(&6u32.to_le_bytes());
        assert!(Record::decode(&flags)
            .unwrap_err()
            .contains("unknown flags"));
    }

    #[test]
    fn a_length_larger_than_the_file_is_caught_before_it_is_read() {
        let mut rec = sample();
        rec.allocations.truncate(0);
        rec.output = None;
        let mut bytes = rec.encode();
        // The image length field: after magic, version, flags, backend, two texts and
        // the launch shape.
        let at = 8 + 4 + 4 + 4 + (4 + 4) + (4 + 5) + 4 + 12 + 12 + 8 + 4;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = Record::decode(&bytes).unwrap_err();
        assert!(e.contains("announces"), "{e}");
    }
}
