//! The exported functions and data objects of a host ELF (what `olGetSymbol` can find).

use std::collections::HashSet;

use goblin::elf::sym;

use super::elf::parse_tables;
use crate::plugin::foundation::error::Result;

/// What a symbol names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostSymbolKind {
    Function,
    Object,
}

/// A defined, externally visible function or data object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSymbol {
    pub name: String,
    pub kind: HostSymbolKind,
    /// `st_value`: the address relative to the load base (section-relative in ET_REL).
    pub address: u64,
    pub size: u64,
}

/// The exported function and object symbols of an ELF: the dynamic symbol table first
/// (what the dynamic loader can find), then `.symtab` when present. Sorted by address,
/// then name; each name once.
pub fn host_symbols(bytes: &[u8]) -> Result<Vec<HostSymbol>> {
    let elf = parse_tables(bytes)?;
    Ok(exported_symbols(&elf))
}

pub(crate) fn exported_symbols(elf: &goblin::elf::Elf<'_>) -> Vec<HostSymbol> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let tables = [(&elf.dynsyms, &elf.dynstrtab), (&elf.syms, &elf.strtab)];
    for (symbols, strings) in tables {
        for s in symbols.iter() {
            let kind = match s.st_type() {
                sym::STT_FUNC => HostSymbolKind::Function,
                sym::STT_OBJECT => HostSymbolKind::Object,
                _ => continue,
            };
            let exported = matches!(s.st_bind(), sym::STB_GLOBAL | sym::STB_WEAK)
                && s.st_shndx != 0
                && !matches!(s.st_visibility(), sym::STV_HIDDEN | sym::STV_INTERNAL);
            if !exported {
                continue;
            }
            let Some(name) = strings.get_at(s.st_name).filter(|n| !n.is_empty()) else {
                continue;
            };
            if seen.insert(name.to_owned()) {
                out.push(HostSymbol {
                    name: name.to_owned(),
                    kind,
                    address: s.st_value,
                    size: s.st_size,
                });
            }
        }
    }
    out.sort_by(|a, b| (a.address, &a.name).cmp(&(b.address, &b.name)));
    out
}
