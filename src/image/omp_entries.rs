//! LLVM/OpenMP offload entries of a host ELF: the `omp_offloading_entries` section that
//! clang 19 emits for every target region and `declare target` global, each a
//! `__tgt_offload_entry { void *addr; char *name; size_t size; int32_t flags; int32_t data; }`.
//!
//! In a linked object the pointers are filled by dynamic relocations, in a relocatable
//! object by section relocations; both are applied here so that names resolve without
//! loading the file. The libomptarget layer registers these entries later.

use std::collections::HashMap;

use goblin::elf::{Elf, Reloc, Sym};

use super::bytes::{cstr_at, u32_at, u64_at, Endian};
use super::elf::{
    file_offset_of_address, parse_tables, section_bytes, section_name, ElfClass, ElfHeader,
};
use crate::plugin::foundation::error::{Error, Result};

/// The section clang 19 places the entries in (a linker-defined start/stop array).
pub const OMP_ENTRIES_SECTION: &str = "omp_offloading_entries";
/// The symbol prefix clang gives each entry.
const ENTRY_SYMBOL_PREFIX: &str = ".offloading.entry.";

/// A kernel (target region) or a global variable, by the entry's `size` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OffloadEntryKind {
    /// `size == 0`: a target region or kernel; `address` is its host-side ID.
    Kernel,
    /// A `declare target` global of `size` bytes.
    GlobalVariable,
}

/// One `__tgt_offload_entry`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffloadEntry {
    pub name: String,
    pub kind: OffloadEntryKind,
    /// The resolved `addr` field: a load-base-relative address in a linked object,
    /// a section-relative value in a relocatable one (see `address_symbol`).
    pub address: u64,
    /// The symbol `addr` refers to, when a relocation names one.
    pub address_symbol: Option<String>,
    pub size: u64,
    pub flags: i32,
    pub data: i32,
}

/// Where a pointer field points once its relocation (if any) is applied.
enum Target {
    Address(u64),
    InSection { section: usize, offset: u64 },
}

struct Resolved {
    target: Target,
    symbol: Option<String>,
}

/// The offload entries of a host ELF; empty when it has no entry section.
pub fn offload_entries(bytes: &[u8]) -> Result<Vec<OffloadEntry>> {
    let header = ElfHeader::parse(bytes)?;
    let elf = parse_tables(bytes)?;
    entries_of(bytes, &header, &elf)
}

pub(crate) fn entries_of(
    bytes: &[u8],
    header: &ElfHeader,
    elf: &Elf<'_>,
) -> Result<Vec<OffloadEntry>> {
    let Some((index, sh)) = elf
        .section_headers
        .iter()
        .enumerate()
        .find(|(_, sh)| section_name(elf, sh) == OMP_ENTRIES_SECTION)
    else {
        return Ok(Vec::new());
    };
    let data = section_bytes(bytes, sh).ok_or_else(|| {
        Error::invalid_binary(format!(
            "section {OMP_ENTRIES_SECTION} lies outside the image"
        ))
    })?;
    let ptr = match header.class {
        ElfClass::Elf32 => 4u64,
        ElfClass::Elf64 => 8u64,
    };
    let entry_size = 3 * ptr + 8;
    if data.len() as u64 % entry_size != 0 {
        return Err(Error::invalid_binary(format!(
            "section {OMP_ENTRIES_SECTION} is {} bytes, not a whole number of {entry_size}-byte entries",
            data.len()
        )));
    }
    let mut ctx = Fields {
        bytes,
        elf,
        header,
        section: index,
        section_addr: sh.sh_addr,
        ptr,
        relocations: HashMap::new(),
        entry_symbols: HashMap::new(),
    };
    ctx.index_relocations(sh.sh_size);
    ctx.index_entry_symbols();
    let count = data.len() as u64 / entry_size;
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = i * entry_size;
        let read = |off: u64| ctx.read_word(data, at + off).unwrap_or(0);
        let size = read(2 * ptr);
        let flags = u32_at(data, at + 3 * ptr, header.endian).unwrap_or(0) as i32;
        let entry_data = u32_at(data, at + 3 * ptr + 4, header.endian).unwrap_or(0) as i32;
        let addr = ctx.resolve(data, at);
        let name = ctx
            .resolve(data, at + ptr)
            .and_then(|r| ctx.string_at(&r.target))
            .or_else(|| ctx.name_from_entry_symbol(at))
            .ok_or_else(|| {
                Error::invalid_binary(format!(
                    "offload entry {i} in {OMP_ENTRIES_SECTION} has a name that does not resolve to a string in the image"
                ))
            })?;
        let (address, address_symbol) = match addr {
            Some(Resolved {
                target: Target::Address(a),
                symbol,
            }) => (a, symbol),
            Some(Resolved {
                target: Target::InSection { offset, .. },
                symbol,
            }) => (offset, symbol),
            None => (0, None),
        };
        out.push(OffloadEntry {
            name,
            kind: if size == 0 {
                OffloadEntryKind::Kernel
            } else {
                OffloadEntryKind::GlobalVariable
            },
            address,
            address_symbol,
            size,
            flags,
            data: entry_data,
        });
    }
    Ok(out)
}

/// The entry section, with its relocations and entry symbols indexed by section offset,
/// so that resolving n entries costs O(n), not O(n x relocations).
struct Fields<'a, 'e> {
    bytes: &'a [u8],
    elf: &'e Elf<'a>,
    header: &'e ElfHeader,
    section: usize,
    section_addr: u64,
    ptr: u64,
    relocations: HashMap<u64, Reloc>,
    entry_symbols: HashMap<u64, String>,
}

impl Fields<'_, '_> {
    fn read_word(&self, data: &[u8], at: u64) -> Option<u64> {
        let e: Endian = self.header.endian;
        match self.ptr {
            4 => u32_at(data, at, e).map(u64::from),
            _ => u64_at(data, at, e),
        }
    }

    fn relocatable(&self) -> bool {
        self.header.file_type == super::elf::ElfFileType::Relocatable
    }

    /// Relocations that patch the entry section: from its `.rela` section in a relocatable
    /// object, from the dynamic relocations otherwise. The first one per offset wins.
    fn index_relocations(&mut self, section_size: u64) {
        let elf = self.elf;
        if self.relocatable() {
            for (rel_index, relocs) in &elf.shdr_relocs {
                let applies = elf
                    .section_headers
                    .get(*rel_index)
                    .is_some_and(|rsh| rsh.sh_info as usize == self.section);
                if applies {
                    for r in relocs.iter() {
                        self.relocations.entry(r.r_offset).or_insert(r);
                    }
                }
            }
        } else {
            for r in elf.dynrelas.iter().chain(elf.dynrels.iter()) {
                let at = r.r_offset.wrapping_sub(self.section_addr);
                if r.r_offset >= self.section_addr && at < section_size {
                    self.relocations.entry(at).or_insert(r);
                }
            }
        }
    }

    /// `.offloading.entry.<name>` symbols by their offset in the entry section.
    fn index_entry_symbols(&mut self) {
        let elf = self.elf;
        let tables = [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)];
        for (syms, strings) in tables {
            for s in syms.iter() {
                let Some(name) = strings
                    .get_at(s.st_name)
                    .and_then(|n| n.strip_prefix(ENTRY_SYMBOL_PREFIX))
                else {
                    continue;
                };
                let at = if self.relocatable() {
                    if s.st_shndx != self.section {
                        continue;
                    }
                    s.st_value
                } else {
                    s.st_value.wrapping_sub(self.section_addr)
                };
                self.entry_symbols
                    .entry(at)
                    .or_insert_with(|| name.to_owned());
            }
        }
    }

    /// The value of the pointer at `at` in the section, with its relocation applied.
    fn resolve(&self, data: &[u8], at: u64) -> Option<Resolved> {
        let stored = self.read_word(data, at)?;
        let Some(r) = self.relocations.get(&at) else {
            // Unrelocated: meaningful as an address only in a linked object.
            return (!self.relocatable()).then_some(Resolved {
                target: Target::Address(stored),
                symbol: None,
            });
        };
        // REL (no addend field) keeps the addend in the patched word.
        let addend = r.r_addend.unwrap_or(stored as i64) as u64;
        if self.relocatable() {
            let sym = self.elf.syms.get(r.r_sym)?;
            return Some(Resolved {
                target: Target::InSection {
                    section: sym.st_shndx,
                    offset: sym.st_value.wrapping_add(addend),
                },
                symbol: self.symbol_name(&sym, false),
            });
        }
        if r.r_sym == 0 {
            // R_*_RELATIVE: load base + addend.
            return Some(Resolved {
                target: Target::Address(addend),
                symbol: None,
            });
        }
        let sym = self.elf.dynsyms.get(r.r_sym)?;
        Some(Resolved {
            target: Target::Address(sym.st_value.wrapping_add(addend)),
            symbol: self.symbol_name(&sym, true),
        })
    }

    fn symbol_name(&self, sym: &Sym, dynamic: bool) -> Option<String> {
        let strings = if dynamic {
            &self.elf.dynstrtab
        } else {
            &self.elf.strtab
        };
        strings
            .get_at(sym.st_name)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
    }

    fn string_at(&self, target: &Target) -> Option<String> {
        let offset = match *target {
            Target::Address(a) => file_offset_of_address(self.elf, a)?,
            Target::InSection { section, offset } => {
                let sh = self.elf.section_headers.get(section)?;
                section_bytes(self.bytes, sh)?;
                if offset >= sh.sh_size {
                    return None;
                }
                sh.sh_offset.checked_add(offset)?
            }
        };
        cstr_at(self.bytes, offset)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    }

    /// Falls back on the `.offloading.entry.<name>` symbol that marks the entry at `at`.
    fn name_from_entry_symbol(&self, at: u64) -> Option<String> {
        self.entry_symbols.get(&at).cloned()
    }
}
