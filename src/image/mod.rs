//! Device images: the one place that answers "what is this image, what does it contain,
//! and can this device run it", for `olIsValidBinary` and `olCreateProgram` of every
//! backend.
//!
//! Formats: ELF (host shared objects, AMDGPU code objects, CUDA cubins), LLVM
//! OffloadBinary containers, CUDA PTX text and fatbin containers. LLVM bitcode is refused:
//! the library is JIT-free. Every reader is total on arbitrary bytes: offsets and sizes
//! are checked before use, counts are bounded by the input length, and nothing panics.

mod amdgpu;
mod amdgpu_target;
mod bytes;
mod compat;
mod cubin;
mod cuda_ptx;
mod detect;
mod elf;
mod fatbin;
mod host_elf;
mod msgpack;
mod offload_binary;
mod omp_entries;

pub use amdgpu::{
    parse_amdgpu_code_object, AddressSpace, AmdgpuCodeObject, AmdgpuKernel, AmdgpuKernelArg,
    ArgValueKind, HiddenArg,
};
pub use amdgpu_target::{
    generic_members, parse_target_id, processor_name, processor_runs_on, AmdgpuTarget,
    FeatureSetting,
};
pub use bytes::{before_nul, contains_bytes, Endian};
pub use compat::{select_for, DeviceArch, DeviceTarget, LoadableKind, SelectedImage};
pub use cubin::{minimal_cubin, parse_cubin, Cubin};
pub use cuda_ptx::{parse_ptx, parse_ptx_header, PtxEntry, PtxHeader, PtxModule, PtxParam};
pub use detect::{detect_format, ImageFormat};
pub use elf::{symbol_names, ElfClass, ElfFileType, ElfHeader, ElfMachine};
pub use fatbin::{parse_fatbin, write_fatbin, FatbinEntry, FatbinEntryKind};
pub use host_elf::{host_symbols, HostSymbol, HostSymbolKind};
pub use msgpack::{decode_document as decode_msgpack, MsgValue};
pub use offload_binary::{
    parse_offload_binaries, write_offload_binary_v2, OffloadBinaryEntry, OffloadImageKind,
    OffloadImageSpec, OffloadKind,
};
pub use omp_entries::{offload_entries, OffloadEntry, OffloadEntryKind, OMP_ENTRIES_SECTION};

use crate::plugin::foundation::error::Result;

/// A CPU ELF object: what the host device (or a remote CPU) can load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostElf {
    pub header: ElfHeader,
    pub symbols: Vec<HostSymbol>,
    /// `omp_offloading_entries`, empty when the object has none.
    pub offload_entries: Vec<OffloadEntry>,
    /// Whether it embeds device images (a `.llvm.offloading` section).
    pub embeds_offload_binary: bool,
}

/// What an image is, with its parsed contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageInfo {
    HostElf(HostElf),
    Amdgpu(AmdgpuCodeObject),
    Cubin(Cubin),
    Ptx(PtxModule),
    OffloadBinary(Vec<OffloadBinaryEntry>),
    Fatbin(Vec<FatbinEntry>),
}

impl ImageInfo {
    /// One line for messages and traces.
    pub fn describe(&self) -> String {
        match self {
            ImageInfo::HostElf(h) => format!("a {}", h.header.describe()),
            ImageInfo::Amdgpu(a) => format!(
                "an AMDGPU code object for {} (code object v{}, {} kernels)",
                a.target,
                a.target.code_object_version,
                a.kernels.len()
            ),
            ImageInfo::Cubin(c) => format!("a CUDA cubin for sm_{}", c.sm),
            ImageInfo::Ptx(p) => {
                format!("CUDA PTX {}.{} for {}", p.version.0, p.version.1, p.target)
            }
            ImageInfo::OffloadBinary(e) => {
                let list: Vec<String> = e.iter().map(OffloadBinaryEntry::describe).collect();
                format!(
                    "an LLVM OffloadBinary with {} image(s): {}",
                    e.len(),
                    list.join(", ")
                )
            }
            ImageInfo::Fatbin(e) => {
                let list: Vec<String> = e.iter().map(FatbinEntry::describe).collect();
                format!(
                    "a CUDA fatbin with {} entries: {}",
                    e.len(),
                    list.join(", ")
                )
            }
        }
    }
}

/// Identifies `bytes` and reads what it contains.
pub fn identify(bytes: &[u8]) -> Result<ImageInfo> {
    match detect::require_known(bytes)? {
        ImageFormat::Elf => {
            let header = ElfHeader::parse(bytes)?;
            match header.machine {
                ElfMachine::Amdgpu => parse_amdgpu_code_object(bytes).map(ImageInfo::Amdgpu),
                ElfMachine::Cuda => parse_cubin(bytes).map(ImageInfo::Cubin),
                _ => {
                    let elf = elf::parse_tables(bytes)?;
                    let embeds = elf.section_headers.iter().any(|sh| {
                        sh.sh_type == elf::SHT_LLVM_OFFLOADING
                            || elf::section_name(&elf, sh) == ".llvm.offloading"
                    });
                    Ok(ImageInfo::HostElf(HostElf {
                        symbols: host_elf::exported_symbols(&elf),
                        offload_entries: omp_entries::entries_of(bytes, &header, &elf)?,
                        embeds_offload_binary: embeds,
                        header,
                    }))
                }
            }
        }
        ImageFormat::OffloadBinary => parse_offload_binaries(bytes).map(ImageInfo::OffloadBinary),
        ImageFormat::CudaFatbin => parse_fatbin(bytes).map(ImageInfo::Fatbin),
        ImageFormat::CudaPtx => parse_ptx(bytes).map(ImageInfo::Ptx),
        // require_known turned these into errors.
        ImageFormat::LlvmBitcode | ImageFormat::Unrecognised => {
            Err(detect::unrecognised_error(bytes))
        }
    }
}

/// The embedded OffloadBinary entries of a host ELF's `.llvm.offloading` section
/// (what `clang -fopenmp -fopenmp-targets=...` leaves in objects), empty if none.
pub fn embedded_offload_binaries(
    bytes: &[u8],
) -> Result<Vec<(Range<usize>, Vec<OffloadBinaryEntry>)>> {
    let elf = elf::parse_tables(bytes)?;
    let mut out = Vec::new();
    for sh in &elf.section_headers {
        let is_offloading = sh.sh_type == elf::SHT_LLVM_OFFLOADING
            || elf::section_name(&elf, sh) == ".llvm.offloading";
        if !is_offloading {
            continue;
        }
        let Some(data) = elf::section_bytes(bytes, sh) else {
            continue;
        };
        let start = sh.sh_offset as usize;
        let mut entries = parse_offload_binaries(data)?;
        for e in &mut entries {
            e.image_range = e.image_range.start + start..e.image_range.end + start;
        }
        out.push((start..start + data.len(), entries));
    }
    Ok(out)
}

use std::ops::Range;
