//! Which container or object format a byte string is, from its first bytes alone.

use super::bytes::{before_nul, hex_prefix};
use crate::plugin::foundation::error::{Error, Result};

/// `\x7fELF`.
pub const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
/// LLVM OffloadBinary, `0x10FF10AD` written as bytes.
pub const OFFLOAD_BINARY_MAGIC: [u8; 4] = [0x10, 0xff, 0x10, 0xad];
/// CUDA fatbin container header magic `0xBA55ED50`, stored little-endian.
pub const FATBIN_MAGIC: [u8; 4] = [0x50, 0xed, 0x55, 0xba];
/// Raw LLVM bitcode: `BC` then `0xC0DE`.
pub const BITCODE_MAGIC: [u8; 4] = [b'B', b'C', 0xc0, 0xde];
/// LLVM's bitcode wrapper header `0x0B17C0DE`, stored little-endian.
pub const BITCODE_WRAPPER_MAGIC: [u8; 4] = [0xde, 0xc0, 0x17, 0x0b];

/// The formats `image` tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    Elf,
    OffloadBinary,
    CudaFatbin,
    CudaPtx,
    /// LLVM bitcode, raw or inside the wrapper header; never loadable (JIT-free).
    LlvmBitcode,
    Unrecognised,
}

impl ImageFormat {
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Elf => "ELF",
            ImageFormat::OffloadBinary => "LLVM OffloadBinary",
            ImageFormat::CudaFatbin => "CUDA fatbin",
            ImageFormat::CudaPtx => "CUDA PTX",
            ImageFormat::LlvmBitcode => "LLVM bitcode",
            ImageFormat::Unrecognised => "unrecognised",
        }
    }
}

/// Classifies `bytes` by magic number (binary formats) or by its directives (PTX text).
pub fn detect_format(bytes: &[u8]) -> ImageFormat {
    let magic = bytes.get(..4);
    match magic {
        Some(m) if m == ELF_MAGIC => ImageFormat::Elf,
        Some(m) if m == OFFLOAD_BINARY_MAGIC => ImageFormat::OffloadBinary,
        Some(m) if m == FATBIN_MAGIC => ImageFormat::CudaFatbin,
        Some(m) if m == BITCODE_MAGIC || m == BITCODE_WRAPPER_MAGIC => ImageFormat::LlvmBitcode,
        _ if looks_like_ptx(bytes) => ImageFormat::CudaPtx,
        _ => ImageFormat::Unrecognised,
    }
}

/// PTX is text with a `.version` and a `.target` directive before any code. Trailing NULs
/// are allowed because PTX embedded in containers is usually NUL-terminated. Only the
/// lines up to `.target` are read (and must be UTF-8): a module can be megabytes, and
/// reading the header is what tells it apart; the PTX reader checks the rest.
fn looks_like_ptx(bytes: &[u8]) -> bool {
    let text = before_nul(bytes);
    if bytes[text.len()..].iter().any(|&b| b != 0) {
        return false;
    }
    let mut seen_version = false;
    for line in text.split(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            return false;
        };
        let line = line.trim_start();
        if line.starts_with(".version") {
            seen_version = true;
        } else if line.starts_with(".target") {
            return seen_version;
        }
    }
    false
}

/// The error for bitcode: this library never compiles, so it cannot run IR.
pub fn bitcode_error() -> Error {
    Error::invalid_binary(
        "image is LLVM bitcode: this library is JIT-free and does not compile IR; \
         compile the image for the device (e.g. clang -c, or link it with the offload linker)",
    )
}

/// The error for bytes that match no known format.
pub fn unrecognised_error(bytes: &[u8]) -> Error {
    if bytes.is_empty() {
        return Error::invalid_binary("unrecognised image: it is empty (0 bytes)");
    }
    Error::invalid_binary(format!(
        "unrecognised image ({} bytes) starting with {}: expected an ELF object, an LLVM \
         OffloadBinary, a CUDA fatbin or PTX text",
        bytes.len(),
        hex_prefix(bytes)
    ))
}

/// Fails for formats that are never loadable, so readers can start with `?`.
pub fn require_known(bytes: &[u8]) -> Result<ImageFormat> {
    match detect_format(bytes) {
        ImageFormat::LlvmBitcode => Err(bitcode_error()),
        ImageFormat::Unrecognised => Err(unrecognised_error(bytes)),
        known => Ok(known),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers() {
        assert_eq!(detect_format(b"\x7fELF\x02"), ImageFormat::Elf);
        assert_eq!(
            detect_format(&[0x10, 0xff, 0x10, 0xad, 1]),
            ImageFormat::OffloadBinary
        );
        assert_eq!(
            detect_format(&0xBA55_ED50u32.to_le_bytes()),
            ImageFormat::CudaFatbin
        );
        assert_eq!(detect_format(b"BC\xc0\xde...."), ImageFormat::LlvmBitcode);
        assert_eq!(
            detect_format(&0x0B17_C0DEu32.to_le_bytes()),
            ImageFormat::LlvmBitcode
        );
        assert_eq!(
            detect_format(b"//\n.version 7.0\n.target sm_80\n\0\0"),
            ImageFormat::CudaPtx
        );
        assert_eq!(
            detect_format(b".target sm_80\n.version 7.0\n"),
            ImageFormat::Unrecognised
        );
        assert_eq!(detect_format(b""), ImageFormat::Unrecognised);
        // Junk after the NUL, or a header that is not text: no PTX.
        assert_eq!(
            detect_format(b".version 7.0\n.target sm_80\n\0x"),
            ImageFormat::Unrecognised
        );
        assert_eq!(
            detect_format(b".version 7.0\xff\n.target sm_80\n"),
            ImageFormat::Unrecognised
        );
    }

    /// Only the header is read to tell PTX apart; a body that is not UTF-8 is the PTX
    /// reader's error, which says so.
    #[test]
    fn ptx_is_told_by_its_header_and_its_body_checked_by_the_reader() {
        let ptx = b".version 7.0\n.target sm_80\n.visible .entry k()\n{\n\xff ret;\n}\n\0";
        assert_eq!(detect_format(ptx), ImageFormat::CudaPtx);
        let e = crate::image::parse_ptx_header(ptx).unwrap_err();
        assert!(e.details.contains("not UTF-8 text"), "{}", e.details);
    }

    #[test]
    fn unrecognised_shows_hex() {
        let e = unrecognised_error(&[0xca, 0xfe, 0xba, 0xbe]);
        assert!(e.details.contains("[ca fe ba be]"), "{}", e.details);
    }
}
