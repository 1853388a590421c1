//! Can this device run this image? `select_for` answers with the exact bytes to load
//! (a sub-range for containers) or an `InvalidBinary` error that names both sides.

use std::fmt;
use std::ops::Range;

use super::amdgpu_target::{AmdgpuTarget, ELFOSABI_AMDGPU_HSA};
use super::bytes::Endian;
use super::cubin::parse_cubin;
use super::cuda_ptx::parse_ptx_header;
use super::detect::{bitcode_error, detect_format, unrecognised_error, ImageFormat};
use super::elf::{ElfFileType, ElfHeader, ElfMachine};
use super::fatbin::{parse_fatbin, FatbinEntryKind};
use super::offload_binary::{parse_offload_binaries, OffloadImageKind, FLAG_METADATA_ONLY};
use crate::plugin::foundation::error::{Error, Result};

/// What kind of processor a device is, in the terms images are built for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceArch {
    /// The CPU this library runs on (host device); loads ELF shared objects.
    Host {
        machine: ElfMachine,
        pointer_width: u32,
        endian: Endian,
    },
    /// An AMD GPU; `xnack`/`sramecc` are the device's modes, `None` where it has none.
    Amdgpu {
        processor: String,
        xnack: Option<bool>,
        sramecc: Option<bool>,
    },
    /// An NVIDIA GPU of compute capability `sm / 10`.`sm % 10` (80 = sm_80).
    Cuda { sm: u32 },
}

/// A device as the compatibility check sees it, with a label for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceTarget {
    pub arch: DeviceArch,
    /// How messages name the device, e.g. "device 0".
    pub label: String,
}

impl DeviceTarget {
    /// The machine this library is running on.
    pub fn host() -> DeviceTarget {
        let machine = if cfg!(target_arch = "x86_64") {
            ElfMachine::X86_64
        } else if cfg!(target_arch = "aarch64") {
            ElfMachine::Aarch64
        } else if cfg!(target_arch = "x86") {
            ElfMachine::X86
        } else if cfg!(target_arch = "arm") {
            ElfMachine::Arm
        } else if cfg!(target_arch = "powerpc64") {
            ElfMachine::PowerPc64
        } else if cfg!(target_arch = "s390x") {
            ElfMachine::S390
        } else if cfg!(any(target_arch = "riscv64", target_arch = "riscv32")) {
            ElfMachine::RiscV
        } else if cfg!(target_arch = "loongarch64") {
            ElfMachine::LoongArch
        } else {
            ElfMachine::Other(0)
        };
        let endian = if cfg!(target_endian = "big") {
            Endian::Big
        } else {
            Endian::Little
        };
        DeviceTarget {
            arch: DeviceArch::Host {
                machine,
                pointer_width: usize::BITS,
                endian,
            },
            label: "the host device".to_owned(),
        }
    }

    pub fn amdgpu(
        processor: impl Into<String>,
        xnack: Option<bool>,
        sramecc: Option<bool>,
    ) -> DeviceTarget {
        DeviceTarget {
            arch: DeviceArch::Amdgpu {
                processor: processor.into(),
                xnack,
                sramecc,
            },
            label: "the device".to_owned(),
        }
    }

    pub fn cuda(sm: u32) -> DeviceTarget {
        DeviceTarget {
            arch: DeviceArch::Cuda { sm },
            label: "the device".to_owned(),
        }
    }

    /// Sets how messages name the device ("device 0").
    pub fn with_label(mut self, label: impl Into<String>) -> DeviceTarget {
        self.label = label.into();
        self
    }
}

/// "the host CPU (x86_64)", "an AMD GPU gfx90a:xnack+", "an NVIDIA GPU sm_80".
impl fmt::Display for DeviceArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceArch::Host {
                machine,
                pointer_width,
                endian,
            } => {
                write!(f, "the host CPU ({machine}")?;
                let usual = *pointer_width == 64 && *endian == Endian::Little;
                if !usual {
                    write!(f, ", {pointer_width}-bit {}", endian.name())?;
                }
                f.write_str(")")
            }
            DeviceArch::Amdgpu {
                processor,
                xnack,
                sramecc,
            } => {
                write!(f, "an AMD GPU {processor}")?;
                for (name, mode) in [("sramecc", sramecc), ("xnack", xnack)] {
                    match mode {
                        Some(true) => write!(f, ":{name}+")?,
                        Some(false) => write!(f, ":{name}-")?,
                        None => {}
                    }
                }
                Ok(())
            }
            DeviceArch::Cuda { sm } => write!(f, "an NVIDIA GPU sm_{sm}"),
        }
    }
}

/// What the chosen bytes are, so the backend knows how to load them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadableKind {
    HostSharedObject,
    AmdgpuCodeObject,
    Cubin,
    Ptx,
    /// A whole CUDA fatbin, for the driver to choose and decompress an entry itself
    /// (only compressed entries fit the device).
    CudaFatbin,
}

/// The image a device should load: a byte range of the input (the whole input, or one
/// image inside an OffloadBinary or fatbin).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectedImage {
    pub range: Range<usize>,
    pub kind: LoadableKind,
    /// What was chosen, e.g. "entry 1 of the OffloadBinary: an AMDGPU code object for gfx1030".
    pub description: String,
}

impl SelectedImage {
    /// The selected bytes of `image` (the same slice given to `select_for`).
    pub fn bytes<'a>(&self, image: &'a [u8]) -> &'a [u8] {
        image.get(self.range.clone()).unwrap_or(&[])
    }
}

/// Containers nest (OffloadBinary → fatbin → cubin); deeper is not a real image.
const MAX_NESTING: u32 = 4;

/// Picks what `device` should load from `bytes`, or says why nothing fits.
pub fn select_for(bytes: &[u8], device: &DeviceTarget) -> Result<SelectedImage> {
    select_in(bytes, 0, device, 0)
}

fn mismatch(image: &str, device: &DeviceTarget, why: &str) -> Error {
    Error::invalid_binary(format!(
        "image is {image}; {} is {}{why}",
        device.label, device.arch
    ))
}

fn select_in(
    bytes: &[u8],
    base: usize,
    device: &DeviceTarget,
    depth: u32,
) -> Result<SelectedImage> {
    if depth > MAX_NESTING {
        return Err(Error::invalid_binary(
            "image containers are nested too deeply",
        ));
    }
    let whole = |kind, description: String| SelectedImage {
        range: base..base + bytes.len(),
        kind,
        description,
    };
    match detect_format(bytes) {
        ImageFormat::LlvmBitcode => Err(bitcode_error()),
        ImageFormat::Unrecognised => Err(unrecognised_error(bytes)),
        ImageFormat::Elf => {
            let header = ElfHeader::parse(bytes)?;
            let (kind, description) = check_elf(bytes, &header, device)?;
            Ok(whole(kind, description))
        }
        ImageFormat::CudaPtx => {
            // The header says which devices can run it; the JIT reads the rest.
            let ptx = parse_ptx_header(bytes)?;
            let image = format!("CUDA PTX for {}", ptx.target);
            let DeviceArch::Cuda { sm } = device.arch else {
                return Err(mismatch(&image, device, ""));
            };
            let fits = if ptx.arch_specific {
                ptx.sm == sm
            } else {
                ptx.sm <= sm
            };
            if !fits {
                return Err(Error::invalid_binary(format!(
                    "image needs sm_{}{}, {} is sm_{sm}",
                    ptx.sm,
                    if ptx.arch_specific {
                        " exactly"
                    } else {
                        " or newer"
                    },
                    device.label
                )));
            }
            Ok(whole(LoadableKind::Ptx, image))
        }
        ImageFormat::OffloadBinary => select_from_offload_binary(bytes, base, device, depth),
        ImageFormat::CudaFatbin => select_from_fatbin(bytes, base, device, depth),
    }
}

fn check_elf(bytes: &[u8], h: &ElfHeader, device: &DeviceTarget) -> Result<(LoadableKind, String)> {
    match h.machine {
        ElfMachine::Amdgpu => {
            let target = AmdgpuTarget::from_header(h);
            let image = format!(
                "an AMDGPU code object for {target} (code object v{})",
                target.code_object_version
            );
            let DeviceArch::Amdgpu {
                processor,
                xnack,
                sramecc,
            } = &device.arch
            else {
                return Err(mismatch(&image, device, ""));
            };
            if h.os_abi != ELFOSABI_AMDGPU_HSA {
                return Err(mismatch(&image, device, &format!(
                    ", which loads only HSA code objects (EI_OSABI {ELFOSABI_AMDGPU_HSA}), not OS ABI {}",
                    h.os_abi
                )));
            }
            if h.file_type != ElfFileType::SharedObject {
                return Err(mismatch(
                    &format!("{image}, a {}", h.file_type),
                    device,
                    ", which loads only linked code objects (ET_DYN): link it with ld.lld",
                ));
            }
            match target.why_not_on(processor, *xnack, *sramecc) {
                Some(why) => Err(mismatch(&image, device, &format!(": {why}"))),
                None => Ok((LoadableKind::AmdgpuCodeObject, image)),
            }
        }
        ElfMachine::Cuda => {
            let cubin = parse_cubin(bytes)?;
            let image = format!("a CUDA cubin for sm_{}", cubin.sm);
            let DeviceArch::Cuda { sm } = device.arch else {
                return Err(mismatch(&image, device, ""));
            };
            // Machine code runs on its own major version, at the same or a newer minor.
            if cubin.sm / 10 != sm / 10 || cubin.sm > sm {
                return Err(Error::invalid_binary(format!(
                    "image needs sm_{} (a cubin runs only on sm_{}x at minor {} or above), {} is sm_{sm}",
                    cubin.sm,
                    cubin.sm / 10,
                    cubin.sm % 10,
                    device.label
                )));
            }
            Ok((LoadableKind::Cubin, image))
        }
        _ => {
            let image = format!("a {}", h.describe());
            let DeviceArch::Host {
                machine,
                pointer_width,
                endian,
            } = &device.arch
            else {
                return Err(mismatch(&image, device, ""));
            };
            if h.machine != *machine
                || h.class.pointer_width() != *pointer_width
                || h.endian != *endian
            {
                return Err(mismatch(&image, device, ""));
            }
            if h.file_type != ElfFileType::SharedObject {
                return Err(mismatch(
                    &image,
                    device,
                    ", which loads only shared objects (ET_DYN): link the image with -shared",
                ));
            }
            Ok((LoadableKind::HostSharedObject, image))
        }
    }
}

fn select_from_offload_binary(
    bytes: &[u8],
    base: usize,
    device: &DeviceTarget,
    depth: u32,
) -> Result<SelectedImage> {
    let entries = parse_offload_binaries(bytes)?;
    let mut reasons = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.flags & FLAG_METADATA_ONLY != 0 || e.image_range.is_empty() {
            continue;
        }
        if e.image_kind == OffloadImageKind::Bitcode {
            reasons.push(format!(
                "entry {i} ({}) is LLVM bitcode, which this JIT-free library cannot compile",
                e.describe()
            ));
            continue;
        }
        let sub = &bytes[e.image_range.clone()];
        match select_in(sub, base + e.image_range.start, device, depth + 1) {
            Ok(mut chosen) => {
                chosen.description = format!(
                    "entry {i} of the OffloadBinary ({}): {}",
                    e.describe(),
                    chosen.description
                );
                return Ok(chosen);
            }
            Err(err) => reasons.push(format!("entry {i} ({}): {}", e.describe(), err.details)),
        }
    }
    Err(Error::invalid_binary(format!(
        "image is an LLVM OffloadBinary with {} image(s), none of which runs on {} ({}): {}",
        entries.len(),
        device.label,
        device.arch,
        if reasons.is_empty() {
            "it holds no loadable image".to_owned()
        } else {
            reasons.join("; ")
        }
    )))
}

fn select_from_fatbin(
    bytes: &[u8],
    base: usize,
    device: &DeviceTarget,
    depth: u32,
) -> Result<SelectedImage> {
    let entries = parse_fatbin(bytes)?;
    let listing: Vec<String> = entries.iter().map(|e| e.describe()).collect();
    let image = format!(
        "a CUDA fatbin with {} entries ({})",
        entries.len(),
        listing.join(", ")
    );
    let DeviceArch::Cuda { sm } = device.arch else {
        return Err(mismatch(&image, device, ""));
    };
    // Prefer machine code over PTX, then the newest architecture that still fits.
    let mut best: Option<(bool, u32, SelectedImage)> = None;
    let mut compressed_fit = Vec::new();
    for e in &entries {
        let fits = match e.kind {
            FatbinEntryKind::Cubin => e.sm / 10 == sm / 10 && e.sm <= sm,
            FatbinEntryKind::Ptx => e.sm <= sm,
            FatbinEntryKind::Other(_) => false,
        };
        if !fits {
            continue;
        }
        if e.compressed {
            compressed_fit.push(e.describe());
            continue;
        }
        let sub = &bytes[e.payload_range.clone()];
        let Ok(chosen) = select_in(sub, base + e.payload_range.start, device, depth + 1) else {
            continue;
        };
        let rank = (e.kind == FatbinEntryKind::Cubin, e.sm);
        if best.as_ref().map_or(true, |(c, s, _)| rank > (*c, *s)) {
            best = Some((rank.0, rank.1, chosen));
        }
    }
    if let Some((_, _, mut chosen)) = best {
        chosen.description = format!("fatbin entry: {}", chosen.description);
        return Ok(chosen);
    }
    if compressed_fit.is_empty() {
        return Err(mismatch(
            &image,
            device,
            ": no entry is for this architecture",
        ));
    }
    // Only compressed entries fit: the driver, given the whole fatbin, picks one and
    // decompresses it (JIT-compiling PTX) itself.
    Ok(SelectedImage {
        range: base..base + bytes.len(),
        kind: LoadableKind::CudaFatbin,
        description: format!(
            "{image}, whole, for the driver to decompress an entry that fits ({})",
            compressed_fit.join(", ")
        ),
    })
}
