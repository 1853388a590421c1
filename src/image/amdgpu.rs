//! AMDGPU code objects: the target from the ELF header and the kernels from the
//! `NT_AMDGPU_METADATA` note (owner "AMDGPU", type 32), a MessagePack map whose
//! `amdhsa.kernels` array describes every kernel and its arguments.

use super::amdgpu_target::AmdgpuTarget;
use super::elf::{all_notes, parse_tables, ElfHeader, ElfMachine};
use super::msgpack::{decode_document, MsgValue};
use crate::plugin::foundation::error::{Error, Result};

/// `NT_AMDGPU_METADATA`.
pub const NT_AMDGPU_METADATA: u32 = 32;

/// How the runtime fills an argument (`.value_kind`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgValueKind {
    ByValue,
    GlobalBuffer,
    DynamicSharedPointer,
    Sampler,
    Image,
    Pipe,
    Queue,
    /// One of the `hidden_*` kinds, which the runtime (not the caller) provides; the
    /// string is the part after `hidden_`, e.g. `global_offset_x`, `block_count_x`.
    Hidden(String),
    Other(String),
}

impl ArgValueKind {
    fn parse(s: &str) -> Self {
        match s {
            "by_value" => Self::ByValue,
            "global_buffer" => Self::GlobalBuffer,
            "dynamic_shared_pointer" => Self::DynamicSharedPointer,
            "sampler" => Self::Sampler,
            "image" => Self::Image,
            "pipe" => Self::Pipe,
            "queue" => Self::Queue,
            other => match other.strip_prefix("hidden_") {
                Some(h) => Self::Hidden(h.to_owned()),
                None => Self::Other(other.to_owned()),
            },
        }
    }

    pub fn is_hidden(&self) -> bool {
        matches!(self, Self::Hidden(_))
    }

    /// What a hidden argument holds, `None` for explicit ones.
    pub fn hidden(&self) -> Option<HiddenArg> {
        match self {
            Self::Hidden(h) => Some(HiddenArg::parse(h)),
            _ => None,
        }
    }
}

/// The hidden (implicit) arguments the runtime fills, by `.value_kind` (`hidden_*`).
/// Code object v4 has the global offsets and the buffer/queue pointers; v5 and v6 add
/// the launch shape (block counts, group sizes, remainders, grid dimensions), the
/// dynamic LDS size and the apertures.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HiddenArg {
    /// Groups in dimension 0..3 (u32).
    BlockCount(usize),
    /// Work-items per group in dimension 0..3 (u16).
    GroupSize(usize),
    /// Work-items of the last, partial group in a dimension (u16; 0 = none partial).
    Remainder(usize),
    /// The grid's offset in a dimension (u64).
    GlobalOffset(usize),
    /// Dimensions of the launch, 1 to 3 (u16).
    GridDims,
    /// Dynamic group-segment (LDS) bytes of this launch (u32).
    DynamicLdsSize,
    PrintfBuffer,
    HostcallBuffer,
    DefaultQueue,
    CompletionAction,
    MultigridSyncArg,
    HeapV1,
    PrivateBase,
    SharedBase,
    QueuePtr,
    /// `hidden_none`: a slot the runtime leaves alone.
    None,
    /// A kind this library does not know (the part after `hidden_`).
    Other(String),
}

impl HiddenArg {
    /// From the part of `.value_kind` after `hidden_`.
    pub fn parse(kind: &str) -> HiddenArg {
        let axis = |s: &str| match s {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some((stem, a)) = kind.rsplit_once('_') {
            if let Some(d) = axis(a) {
                match stem {
                    "block_count" => return HiddenArg::BlockCount(d),
                    "group_size" => return HiddenArg::GroupSize(d),
                    "remainder" => return HiddenArg::Remainder(d),
                    "global_offset" => return HiddenArg::GlobalOffset(d),
                    _ => {}
                }
            }
        }
        match kind {
            "grid_dims" => HiddenArg::GridDims,
            "dynamic_lds_size" => HiddenArg::DynamicLdsSize,
            "printf_buffer" => HiddenArg::PrintfBuffer,
            "hostcall_buffer" => HiddenArg::HostcallBuffer,
            "default_queue" => HiddenArg::DefaultQueue,
            "completion_action" => HiddenArg::CompletionAction,
            "multigrid_sync_arg" => HiddenArg::MultigridSyncArg,
            "heap_v1" => HiddenArg::HeapV1,
            "private_base" => HiddenArg::PrivateBase,
            "shared_base" => HiddenArg::SharedBase,
            "queue_ptr" => HiddenArg::QueuePtr,
            "none" => HiddenArg::None,
            other => HiddenArg::Other(other.to_owned()),
        }
    }
}

/// `.address_space` of a pointer argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    Private,
    Global,
    Constant,
    Local,
    Generic,
    Region,
    Other(String),
}

impl AddressSpace {
    fn parse(s: &str) -> Self {
        match s {
            "private" => Self::Private,
            "global" => Self::Global,
            "constant" => Self::Constant,
            "local" => Self::Local,
            "generic" => Self::Generic,
            "region" => Self::Region,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// One kernel argument, explicit or hidden, in kernarg-segment order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdgpuKernelArg {
    pub name: Option<String>,
    pub type_name: Option<String>,
    pub offset: u64,
    pub size: u64,
    pub value_kind: ArgValueKind,
    pub address_space: Option<AddressSpace>,
}

/// One entry of `amdhsa.kernels`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdgpuKernel {
    pub name: String,
    /// The kernel descriptor symbol, `<name>.kd`.
    pub symbol: String,
    pub kernarg_segment_size: u64,
    pub kernarg_segment_align: u64,
    pub group_segment_fixed_size: u64,
    pub private_segment_fixed_size: u64,
    pub sgpr_count: u64,
    pub vgpr_count: u64,
    pub wavefront_size: u64,
    pub max_flat_workgroup_size: u64,
    pub args: Vec<AmdgpuKernelArg>,
}

impl AmdgpuKernel {
    /// The arguments a caller passes (hidden ones are the runtime's).
    pub fn explicit_args(&self) -> impl Iterator<Item = &AmdgpuKernelArg> {
        self.args.iter().filter(|a| !a.value_kind.is_hidden())
    }
}

/// A parsed AMDGPU code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdgpuCodeObject {
    pub header: ElfHeader,
    pub target: AmdgpuTarget,
    /// `amdhsa.target` from the metadata (v4+), e.g. `amdgcn-amd-amdhsa--gfx90a:xnack+`.
    pub metadata_target: Option<String>,
    pub kernels: Vec<AmdgpuKernel>,
}

/// Reads an AMDGPU code object: target from the header, kernels from the metadata note.
pub fn parse_amdgpu_code_object(bytes: &[u8]) -> Result<AmdgpuCodeObject> {
    let header = ElfHeader::parse(bytes)?;
    if header.machine != ElfMachine::Amdgpu {
        return Err(Error::invalid_binary(format!(
            "not an AMDGPU code object: the ELF machine is {}",
            header.machine
        )));
    }
    let target = AmdgpuTarget::from_header(&header);
    let elf = parse_tables(bytes)?;
    let mut metadata_target = None;
    let mut kernels = Vec::new();
    let notes = all_notes(bytes, &elf, header.endian);
    if let Some(note) = notes
        .iter()
        .find(|n| n.name == b"AMDGPU" && n.note_type == NT_AMDGPU_METADATA)
    {
        let doc = decode_document(note.desc)
            .map_err(|e| Error::invalid_binary(format!("AMDGPU metadata note: {e}")))?;
        metadata_target = doc
            .get("amdhsa.target")
            .and_then(MsgValue::as_str)
            .map(str::to_owned);
        kernels = kernels_of(&doc)?;
    }
    Ok(AmdgpuCodeObject {
        header,
        target,
        metadata_target,
        kernels,
    })
}

fn meta_err(msg: impl std::fmt::Display) -> Error {
    Error::invalid_binary(format!("AMDGPU metadata: {msg}"))
}

fn kernels_of(doc: &MsgValue) -> Result<Vec<AmdgpuKernel>> {
    let Some(list) = doc.get("amdhsa.kernels") else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .ok_or_else(|| meta_err("amdhsa.kernels is not an array"))?;
    list.iter()
        .enumerate()
        .map(|(i, k)| kernel_of(k).map_err(|e| e.context(format!("kernel {i}"))))
        .collect()
}

fn req_u64(map: &MsgValue, key: &str) -> Result<u64> {
    match map.get(key) {
        None => Err(meta_err(format!("required key {key} is missing"))),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| meta_err(format!("{key} is not a non-negative integer: {v:?}"))),
    }
}

fn req_str(map: &MsgValue, key: &str) -> Result<String> {
    opt_str(map, key)?.ok_or_else(|| meta_err(format!("required key {key} is missing")))
}

fn opt_str(map: &MsgValue, key: &str) -> Result<Option<String>> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .map(|s| Some(s.to_owned()))
            .ok_or_else(|| meta_err(format!("{key} is not a string: {v:?}"))),
    }
}

fn kernel_of(k: &MsgValue) -> Result<AmdgpuKernel> {
    if k.as_map().is_none() {
        return Err(meta_err("kernel entry is not a map"));
    }
    let args = match k.get(".args") {
        None => Vec::new(),
        Some(a) => a
            .as_array()
            .ok_or_else(|| meta_err(".args is not an array"))?
            .iter()
            .enumerate()
            .map(|(i, a)| arg_of(a).map_err(|e| e.context(format!("argument {i}"))))
            .collect::<Result<_>>()?,
    };
    Ok(AmdgpuKernel {
        name: req_str(k, ".name")?,
        symbol: req_str(k, ".symbol")?,
        kernarg_segment_size: req_u64(k, ".kernarg_segment_size")?,
        kernarg_segment_align: req_u64(k, ".kernarg_segment_align")?,
        group_segment_fixed_size: req_u64(k, ".group_segment_fixed_size")?,
        private_segment_fixed_size: req_u64(k, ".private_segment_fixed_size")?,
        sgpr_count: req_u64(k, ".sgpr_count")?,
        vgpr_count: req_u64(k, ".vgpr_count")?,
        wavefront_size: req_u64(k, ".wavefront_size")?,
        max_flat_workgroup_size: req_u64(k, ".max_flat_workgroup_size")?,
        args,
    })
}

fn arg_of(a: &MsgValue) -> Result<AmdgpuKernelArg> {
    if a.as_map().is_none() {
        return Err(meta_err("argument entry is not a map"));
    }
    Ok(AmdgpuKernelArg {
        name: opt_str(a, ".name")?,
        type_name: opt_str(a, ".type_name")?,
        offset: req_u64(a, ".offset")?,
        size: req_u64(a, ".size")?,
        value_kind: ArgValueKind::parse(&req_str(a, ".value_kind")?),
        address_space: opt_str(a, ".address_space")?.map(|s| AddressSpace::parse(&s)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel_doc(with_symbol: bool) -> Vec<u8> {
        use rmp::encode::{write_array_len, write_map_len, write_str, write_uint};
        let mut b = Vec::new();
        write_map_len(&mut b, 1).unwrap();
        write_str(&mut b, "amdhsa.kernels").unwrap();
        write_array_len(&mut b, 1).unwrap();
        let numbers = [
            ".kernarg_segment_size",
            ".kernarg_segment_align",
            ".group_segment_fixed_size",
            ".private_segment_fixed_size",
            ".sgpr_count",
            ".vgpr_count",
            ".wavefront_size",
            ".max_flat_workgroup_size",
        ];
        write_map_len(&mut b, numbers.len() as u32 + 2 + u32::from(with_symbol)).unwrap();
        write_str(&mut b, ".name").unwrap();
        write_str(&mut b, "k").unwrap();
        if with_symbol {
            write_str(&mut b, ".symbol").unwrap();
            write_str(&mut b, "k.kd").unwrap();
        }
        for n in numbers {
            write_str(&mut b, n).unwrap();
            write_uint(&mut b, 64).unwrap();
        }
        write_str(&mut b, ".args").unwrap();
        write_array_len(&mut b, 1).unwrap();
        write_map_len(&mut b, 3).unwrap();
        for (k, v) in [(".offset", 0u64), (".size", 8)] {
            write_str(&mut b, k).unwrap();
            write_uint(&mut b, v).unwrap();
        }
        write_str(&mut b, ".value_kind").unwrap();
        write_str(&mut b, "hidden_hostcall_buffer").unwrap();
        b
    }

    #[test]
    fn metadata_to_kernels() {
        let bytes = kernel_doc(true);
        let doc = decode_document(&bytes).unwrap();
        let k = kernels_of(&doc).unwrap();
        assert_eq!(
            (
                k[0].name.as_str(),
                k[0].symbol.as_str(),
                k[0].wavefront_size
            ),
            ("k", "k.kd", 64)
        );
        assert_eq!(
            k[0].args[0].value_kind,
            ArgValueKind::Hidden("hostcall_buffer".into())
        );
        assert_eq!(k[0].explicit_args().count(), 0);
    }

    #[test]
    fn hidden_kinds_parse() {
        let h = |s: &str| ArgValueKind::parse(s).hidden();
        assert_eq!(h("hidden_block_count_z"), Some(HiddenArg::BlockCount(2)));
        assert_eq!(h("hidden_group_size_x"), Some(HiddenArg::GroupSize(0)));
        assert_eq!(h("hidden_remainder_y"), Some(HiddenArg::Remainder(1)));
        assert_eq!(
            h("hidden_global_offset_y"),
            Some(HiddenArg::GlobalOffset(1))
        );
        assert_eq!(h("hidden_grid_dims"), Some(HiddenArg::GridDims));
        assert_eq!(
            h("hidden_dynamic_lds_size"),
            Some(HiddenArg::DynamicLdsSize)
        );
        assert_eq!(h("hidden_queue_ptr"), Some(HiddenArg::QueuePtr));
        assert_eq!(
            h("hidden_block_count_w"),
            Some(HiddenArg::Other("block_count_w".into()))
        );
        assert_eq!(h("by_value"), None);
    }

    #[test]
    fn missing_required_key_names_kernel_and_key() {
        let bytes = kernel_doc(false);
        let doc = decode_document(&bytes).unwrap();
        let e = kernels_of(&doc).unwrap_err();
        assert!(
            e.details.contains("kernel 0") && e.details.contains(".symbol"),
            "{}",
            e.details
        );
    }
}
