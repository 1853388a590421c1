//! CUDA cubins: ELF objects with `e_machine == EM_CUDA (190)` whose `e_flags` carry the
//! SM version (`EF_CUDA_SM`, low byte) and the virtual SM of the PTX they came from.

use super::elf::{parse_tables, ElfHeader, ElfMachine};
use super::host_elf::{exported_symbols, HostSymbolKind};
use crate::runtime::error::{Error, Result};

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

/// Builds a minimal, valid EM_CUDA ELF64 for `sm` (no sections), as tests and fuzzers
/// need one and NVIDIA's ptxas is not available to make a real one.
pub fn minimal_cubin(sm: u32) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(&super::detect::ELF_MAGIC);
    b[4] = 2; // ELFCLASS64
    b[5] = 1; // little-endian
    b[6] = 1; // EV_CURRENT
    b[7] = 51; // ELFOSABI_CUDA
    b[8] = 7; // ABI version written by recent ptxas
    b[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC, as ptxas writes
    b[18..20].copy_from_slice(&190u16.to_le_bytes());
    b[20..24].copy_from_slice(&1u32.to_le_bytes());
    let flags = sm | (sm << EF_CUDA_VIRTUAL_SM_SHIFT) | EF_CUDA_64BIT_ADDRESS;
    b[48..52].copy_from_slice(&flags.to_le_bytes());
    b[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    b[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
    b[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    b
}
