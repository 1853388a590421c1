//! ELF identification (class, byte order, machine, type, flags) read by hand, and a
//! guarded entry into goblin for the tables (symbols, sections, relocations, notes).
//!
//! The header is read here rather than by goblin so that identification works on any
//! ELF, however damaged its tables are, and so the table extents can be checked against
//! the input length before goblin walks them.

use std::fmt;

use super::bytes::{need, slice_at, u16_at, u32_at, u64_at, Endian};
use crate::plugin::foundation::error::{Error, Result};

/// `SHT_LLVM_OFFLOADING`: the section type of `.llvm.offloading` (embedded OffloadBinaries).
pub const SHT_LLVM_OFFLOADING: u32 = 0x6fff_4c0b;

/// `ELFCLASS32` / `ELFCLASS64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElfClass {
    Elf32,
    Elf64,
}

impl ElfClass {
    pub fn pointer_width(self) -> u32 {
        match self {
            ElfClass::Elf32 => 32,
            ElfClass::Elf64 => 64,
        }
    }
}

/// `e_machine`, with the machines this library has an opinion about named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElfMachine {
    X86,
    X86_64,
    Arm,
    Aarch64,
    PowerPc64,
    S390,
    RiscV,
    LoongArch,
    Cuda,
    Amdgpu,
    Other(u16),
}

impl ElfMachine {
    pub fn from_e_machine(value: u16) -> Self {
        match value {
            3 => ElfMachine::X86,
            62 => ElfMachine::X86_64,
            40 => ElfMachine::Arm,
            183 => ElfMachine::Aarch64,
            21 => ElfMachine::PowerPc64,
            22 => ElfMachine::S390,
            243 => ElfMachine::RiscV,
            258 => ElfMachine::LoongArch,
            190 => ElfMachine::Cuda,
            224 => ElfMachine::Amdgpu,
            other => ElfMachine::Other(other),
        }
    }

    /// True for CPU architectures (anything that is not a GPU).
    pub fn is_cpu(self) -> bool {
        !matches!(self, ElfMachine::Cuda | ElfMachine::Amdgpu)
    }
}

impl fmt::Display for ElfMachine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfMachine::X86 => f.write_str("x86"),
            ElfMachine::X86_64 => f.write_str("x86_64"),
            ElfMachine::Arm => f.write_str("arm"),
            ElfMachine::Aarch64 => f.write_str("aarch64"),
            ElfMachine::PowerPc64 => f.write_str("powerpc64"),
            ElfMachine::S390 => f.write_str("s390x"),
            ElfMachine::RiscV => f.write_str("riscv"),
            ElfMachine::LoongArch => f.write_str("loongarch"),
            ElfMachine::Cuda => f.write_str("CUDA"),
            ElfMachine::Amdgpu => f.write_str("AMDGPU"),
            ElfMachine::Other(v) => write!(f, "e_machine {v}"),
        }
    }
}

/// `e_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElfFileType {
    Relocatable,
    Executable,
    SharedObject,
    Core,
    Other(u16),
}

impl fmt::Display for ElfFileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfFileType::Relocatable => f.write_str("relocatable object (ET_REL)"),
            ElfFileType::Executable => f.write_str("executable (ET_EXEC)"),
            ElfFileType::SharedObject => f.write_str("shared object (ET_DYN)"),
            ElfFileType::Core => f.write_str("core file (ET_CORE)"),
            ElfFileType::Other(v) => write!(f, "ELF file of type {v}"),
        }
    }
}

/// The identification part of an ELF header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElfHeader {
    pub class: ElfClass,
    pub endian: Endian,
    /// `EI_OSABI`.
    pub os_abi: u8,
    /// `EI_ABIVERSION` (the code-object version for AMDGPU).
    pub abi_version: u8,
    pub file_type: ElfFileType,
    pub machine: ElfMachine,
    pub flags: u32,
    pub phoff: u64,
    pub phentsize: u16,
    pub phnum: u16,
    pub shoff: u64,
    pub shentsize: u16,
    pub shnum: u16,
}

impl ElfHeader {
    /// Reads and checks the fixed header; every table extent must lie inside `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<ElfHeader> {
        let total = bytes.len();
        if bytes.get(..4) != Some(&super::detect::ELF_MAGIC[..]) {
            return Err(Error::invalid_binary(
                "not an ELF image (no \\x7fELF magic)",
            ));
        }
        let class = match bytes.get(4) {
            Some(1) => ElfClass::Elf32,
            Some(2) => ElfClass::Elf64,
            Some(v) => {
                return Err(Error::invalid_binary(format!(
                    "ELF image has invalid class {v} (expected 1 or 2)"
                )))
            }
            None => {
                return Err(Error::invalid_binary(
                    "ELF image is truncated inside e_ident",
                ))
            }
        };
        let endian = match bytes.get(5) {
            Some(1) => Endian::Little,
            Some(2) => Endian::Big,
            Some(v) => {
                return Err(Error::invalid_binary(format!(
                    "ELF image has invalid byte order {v} (expected 1 or 2)"
                )))
            }
            None => {
                return Err(Error::invalid_binary(
                    "ELF image is truncated inside e_ident",
                ))
            }
        };
        let header_len: u64 = match class {
            ElfClass::Elf32 => 52,
            ElfClass::Elf64 => 64,
        };
        need(slice_at(bytes, 0, header_len), "ELF header", 0, total)?;
        // All reads below are inside the header just checked.
        let r16 = |off| u16_at(bytes, off, endian).unwrap_or(0);
        let r32 = |off| u32_at(bytes, off, endian).unwrap_or(0);
        let r64 = |off| u64_at(bytes, off, endian).unwrap_or(0);
        let (phoff, shoff, flags, fields) = match class {
            ElfClass::Elf32 => (u64::from(r32(28)), u64::from(r32(32)), r32(36), 42),
            ElfClass::Elf64 => (r64(32), r64(40), r32(48), 54),
        };
        let header = ElfHeader {
            class,
            endian,
            os_abi: bytes[7],
            abi_version: bytes[8],
            file_type: match r16(16) {
                1 => ElfFileType::Relocatable,
                2 => ElfFileType::Executable,
                3 => ElfFileType::SharedObject,
                4 => ElfFileType::Core,
                v => ElfFileType::Other(v),
            },
            machine: ElfMachine::from_e_machine(r16(18)),
            flags,
            phoff,
            phentsize: r16(fields),
            phnum: r16(fields + 2),
            shoff,
            shentsize: r16(fields + 4),
            shnum: r16(fields + 6),
        };
        header.check_tables(total)?;
        Ok(header)
    }

    fn check_tables(&self, total: usize) -> Result<()> {
        let (ph_size, sh_size) = match self.class {
            ElfClass::Elf32 => (32, 40),
            ElfClass::Elf64 => (56, 64),
        };
        if self.phnum > 0 && self.phentsize != ph_size {
            return Err(Error::invalid_binary(format!(
                "ELF program header entries are {} bytes, expected {ph_size}",
                self.phentsize
            )));
        }
        if self.shnum > 0 && self.shentsize != sh_size {
            return Err(Error::invalid_binary(format!(
                "ELF section header entries are {} bytes, expected {sh_size}",
                self.shentsize
            )));
        }
        if self.shnum == 0 && self.shoff != 0 {
            // Extended section numbering (count in section 0) is only used by objects with
            // more than 65279 sections; no device image needs it.
            return Err(Error::invalid_binary(
                "ELF image uses extended section numbering, which is not supported",
            ));
        }
        let ph_bytes = u64::from(self.phnum) * u64::from(self.phentsize);
        if self.phnum > 0 && !fits(self.phoff, ph_bytes, total) {
            return Err(super::bytes::truncated(
                "ELF program header table",
                self.phoff,
                total,
            ));
        }
        let sh_bytes = u64::from(self.shnum) * u64::from(self.shentsize);
        if self.shnum > 0 && !fits(self.shoff, sh_bytes, total) {
            return Err(super::bytes::truncated(
                "ELF section header table",
                self.shoff,
                total,
            ));
        }
        Ok(())
    }

    /// "64-bit little-endian x86_64 shared object (ET_DYN)".
    pub fn describe(&self) -> String {
        format!(
            "{}-bit {} {} {}",
            self.class.pointer_width(),
            self.endian.name(),
            self.machine,
            self.file_type
        )
    }
}

fn fits(offset: u64, len: u64, total: usize) -> bool {
    offset
        .checked_add(len)
        .is_some_and(|end| end <= total as u64)
}

/// Parses the tables with goblin once the header has been checked.
pub fn parse_tables(bytes: &[u8]) -> Result<goblin::elf::Elf<'_>> {
    ElfHeader::parse(bytes)?;
    goblin::elf::Elf::parse(bytes)
        .map_err(|e| Error::invalid_binary(format!("malformed ELF image: {e}")))
}

/// The names of an ELF object's symbols (its `.symtab`), in table order.
pub fn symbol_names(bytes: &[u8]) -> Result<Vec<String>> {
    let elf = parse_tables(bytes)?;
    Ok(elf
        .syms
        .iter()
        .filter_map(|sym| elf.strtab.get_at(sym.st_name))
        .map(str::to_string)
        .collect())
}

/// The file bytes of a section, `None` for `SHT_NOBITS` or out-of-range sections.
pub fn section_bytes<'a>(bytes: &'a [u8], sh: &goblin::elf::SectionHeader) -> Option<&'a [u8]> {
    if sh.sh_type == goblin::elf::section_header::SHT_NOBITS {
        return None;
    }
    slice_at(bytes, sh.sh_offset, sh.sh_size)
}

/// A section's name from the section-name string table.
pub fn section_name<'a>(elf: &'a goblin::elf::Elf<'_>, sh: &goblin::elf::SectionHeader) -> &'a str {
    elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("")
}

/// The file offset of a virtual address, through the section that contains it.
pub fn file_offset_of_address(elf: &goblin::elf::Elf<'_>, address: u64) -> Option<u64> {
    elf.section_headers.iter().find_map(|sh| {
        let inside = sh.sh_addr != 0
            && sh.sh_type != goblin::elf::section_header::SHT_NOBITS
            && address >= sh.sh_addr
            && address - sh.sh_addr < sh.sh_size;
        inside
            .then(|| sh.sh_offset.checked_add(address - sh.sh_addr))
            .flatten()
    })
}

/// One ELF note: `{namesz, descsz, type}`, then name and desc each padded to `align`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElfNote<'a> {
    pub name: &'a [u8],
    pub note_type: u32,
    pub desc: &'a [u8],
}

/// Walks the notes in a note section's or segment's bytes; stops at the first malformed one.
pub fn notes(data: &[u8], endian: Endian, align: u64) -> Vec<ElfNote<'_>> {
    let align = if align == 8 { 8 } else { 4 };
    let mut out = Vec::new();
    let mut at = 0u64;
    while let (Some(namesz), Some(descsz), Some(note_type)) = (
        u32_at(data, at, endian),
        u32_at(data, at + 4, endian),
        u32_at(data, at + 8, endian),
    ) {
        let name_at = at + 12;
        let Some(name) = slice_at(data, name_at, u64::from(namesz)) else {
            break;
        };
        let Some(desc_at) = super::bytes::align_up(name_at + u64::from(namesz), align) else {
            break;
        };
        let Some(desc) = slice_at(data, desc_at, u64::from(descsz)) else {
            break;
        };
        // The name includes its NUL terminator.
        let name = name.strip_suffix(&[0]).unwrap_or(name);
        out.push(ElfNote {
            name,
            note_type,
            desc,
        });
        match super::bytes::align_up(desc_at + u64::from(descsz), align) {
            Some(next) if next > at => at = next,
            _ => break,
        }
    }
    out
}

/// Every note of the image: from `SHT_NOTE` sections, or from `PT_NOTE` segments when the
/// section headers are stripped.
pub fn all_notes<'a>(
    bytes: &'a [u8],
    elf: &goblin::elf::Elf<'_>,
    endian: Endian,
) -> Vec<ElfNote<'a>> {
    let mut out = Vec::new();
    for sh in &elf.section_headers {
        if sh.sh_type == goblin::elf::section_header::SHT_NOTE {
            if let Some(data) = section_bytes(bytes, sh) {
                out.extend(notes(data, endian, sh.sh_addralign));
            }
        }
    }
    if out.is_empty() {
        for ph in &elf.program_headers {
            if ph.p_type == goblin::elf::program_header::PT_NOTE {
                if let Some(data) = slice_at(bytes, ph.p_offset, ph.p_filesz) {
                    out.extend(notes(data, endian, ph.p_align));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_walk_is_bounded() {
        let mut d = Vec::new();
        for v in [7u32, 3, 32] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        d.extend_from_slice(b"AMDGPU\0\0abc\0");
        let n = notes(&d, Endian::Little, 4);
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].name, b"AMDGPU");
        assert_eq!(n[0].desc, b"abc");
        assert_eq!(n[0].note_type, 32);
        assert!(notes(&d[..d.len() - 2], Endian::Little, 4).is_empty());
    }

    #[test]
    fn rejects_short_headers() {
        assert!(ElfHeader::parse(b"\x7fELF\x02\x01\x01").is_err());
        assert!(ElfHeader::parse(b"\x7fELF\x03").is_err());
    }
}
