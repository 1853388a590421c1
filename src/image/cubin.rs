//! CUDA cubins: ELF objects with `e_machine == EM_CUDA (190)` whose `e_flags` carry the
//! SM version (`EF_CUDA_SM`, low byte) and the virtual SM of the PTX they came from.

use super::elf::{parse_tables, ElfHeader, ElfMachine};
use super::host_elf::{exported_symbols, HostSymbolKind};
use crate::plugin::foundation::error::{Error, Result};

const EF_CUDA_SM: u32 = 0xff;
const EF_CUDA_64BIT_ADDRESS: u32 = 0x400;
const EF_CUDA_VIRTUAL_SM_SHIFT: u32 = 16;

/// A parsed cubin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cubin {
    pub header: ElfHeader,
    /// The SM the machine code is for, e.g. 80 for sm_80.
    pub sm: u32,
    /// The virtual architecture (compute_XX) of the PTX it was compiled from, if recorded.
    pub virtual_sm: Option<u32>,
    pub address_64bit: bool,
    /// Global functions defined in the cubin (kernels and device functions).
    pub functions: Vec<String>,
}

/// Reads a cubin's target from its header and its functions from its symbol table.
pub fn parse_cubin(bytes: &[u8]) -> Result<Cubin> {
    let header = ElfHeader::parse(bytes)?;
    if header.machine != ElfMachine::Cuda {
        return Err(Error::invalid_binary(format!(
            "not a cubin: the ELF machine is {}",
            header.machine
        )));
    }
    let elf = parse_tables(bytes)?;
    let functions = exported_symbols(&elf)
        .into_iter()
        .filter(|s| s.kind == HostSymbolKind::Function)
        .map(|s| s.name)
        .collect();
    let virtual_sm = (header.flags >> EF_CUDA_VIRTUAL_SM_SHIFT) & 0xff;
    Ok(Cubin {
        sm: header.flags & EF_CUDA_SM,
        virtual_sm: (virtual_sm != 0).then_some(virtual_sm),
        address_64bit: header.flags & EF_CUDA_64BIT_ADDRESS != 0,
        functions,
        header,
    })
}

/// Builds a small, valid EM_CUDA ELF64 for `sm` whose `.text` holds one global function
/// per name in `kernels`, as tests and fuzzers need cubins and NVIDIA's ptxas (the only
/// tool that makes real ones) is not available.
pub fn minimal_cubin(sm: u32, kernels: &[&str]) -> Vec<u8> {
    const TEXT_PER_KERNEL: u64 = 16;
    let shstrtab = b"\0.shstrtab\0.strtab\0.symtab\0.text\0".to_vec();
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 24]; // symbol 0 is the null symbol
    for (i, k) in kernels.iter().enumerate() {
        let name_at = strtab.len() as u32;
        strtab.extend_from_slice(k.as_bytes());
        strtab.push(0);
        symtab.extend_from_slice(&name_at.to_le_bytes());
        symtab.push(0x12); // STB_GLOBAL, STT_FUNC
        symtab.push(0x10); // STO_CUDA_ENTRY: a kernel
        symtab.extend_from_slice(&4u16.to_le_bytes()); // in .text
        symtab.extend_from_slice(&(i as u64 * TEXT_PER_KERNEL).to_le_bytes());
        symtab.extend_from_slice(&TEXT_PER_KERNEL.to_le_bytes());
    }
    let text = vec![0u8; kernels.len() * TEXT_PER_KERNEL as usize];
    let mut b = vec![0u8; 64];
    let place = |data: &[u8], b: &mut Vec<u8>| {
        b.resize(b.len().div_ceil(8) * 8, 0);
        let at = b.len() as u64;
        b.extend_from_slice(data);
        at
    };
    let shstr_at = place(&shstrtab, &mut b);
    let str_at = place(&strtab, &mut b);
    let sym_at = place(&symtab, &mut b);
    let text_at = place(&text, &mut b);
    b.resize(b.len().div_ceil(8) * 8, 0);
    let shoff = b.len() as u64;
    // Section headers: [name, type, link, info] as u32 and [flags, offset, size, align,
    // entsize] as u64; sh_addr stays 0.
    let sections: [([u32; 4], [u64; 5]); 5] = [
        ([0; 4], [0; 5]),
        ([1, 3, 0, 0], [0, shstr_at, shstrtab.len() as u64, 1, 0]),
        ([11, 3, 0, 0], [0, str_at, strtab.len() as u64, 1, 0]),
        ([19, 2, 2, 1], [0, sym_at, symtab.len() as u64, 8, 24]),
        ([27, 1, 0, 0], [6, text_at, text.len() as u64, 128, 0]),
    ];
    for ([name, ty, link, info], [flags, off, size, align, entsize]) in sections {
        b.extend_from_slice(&name.to_le_bytes());
        b.extend_from_slice(&ty.to_le_bytes());
        for v in [flags, 0, off, size] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&link.to_le_bytes());
        b.extend_from_slice(&info.to_le_bytes());
        b.extend_from_slice(&align.to_le_bytes());
        b.extend_from_slice(&entsize.to_le_bytes());
    }
    b[..4].copy_from_slice(&super::detect::ELF_MAGIC);
    b[4] = 2; // ELFCLASS64
    b[5] = 1; // little-endian
    b[6] = 1; // EV_CURRENT
    b[7] = 51; // ELFOSABI_CUDA
    b[8] = 7; // the ABI version recent ptxas writes
    b[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC, as ptxas writes
    b[18..20].copy_from_slice(&190u16.to_le_bytes());
    b[20..24].copy_from_slice(&1u32.to_le_bytes());
    b[40..48].copy_from_slice(&shoff.to_le_bytes());
    let flags = sm | (sm << EF_CUDA_VIRTUAL_SM_SHIFT) | EF_CUDA_64BIT_ADDRESS;
    b[48..52].copy_from_slice(&flags.to_le_bytes());
    b[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    b[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
    b[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    b[60..62].copy_from_slice(&5u16.to_le_bytes()); // e_shnum
    b[62..64].copy_from_slice(&1u16.to_le_bytes()); // e_shstrndx
    b
}
