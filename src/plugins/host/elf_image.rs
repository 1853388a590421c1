//! What the host device can load: an ELF shared object for this machine, plain or inside
//! an OffloadBinary (the decision is `src/image`'s, shared by every backend), and what
//! such a program exports to the dynamic loader.

use crate::image::{select_for, DeviceTarget, LoadableKind};
use crate::plugin::foundation::error::{Error, Result};
use goblin::elf::sym;
use goblin::elf::Elf;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The part of `image` the host device loads: the image itself when it is a host shared
/// object, or the one inside an LLVM OffloadBinary that is. Anything else is
/// `InvalidBinary`, with the image reader's sentence naming the image and the device.
pub fn select_host_image(image: &[u8]) -> Result<Range<usize>> {
    let selected = select_for(image, &DeviceTarget::host())?;
    match selected.kind {
        LoadableKind::HostSharedObject => Ok(selected.range),
        other => Err(Error::invalid_binary(format!(
            "{} is a {other:?}, which the host device cannot load",
            selected.description
        ))),
    }
}

/// What a symbol of the dynamic symbol table is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynKind {
    Function,
    Object,
}

/// One defined, exported symbol of a shared object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynSymbol {
    pub name: String,
    pub kind: DynKind,
    pub size: usize,
}

/// The functions and data objects a shared object defines and exports (global or weak,
/// default or protected visibility). Linker-made entry points (`_init`, `_fini`) are left
/// out: they are not kernels.
pub fn dynamic_symbols(image: &[u8]) -> Result<Vec<DynSymbol>> {
    let parsed = catch_unwind(AssertUnwindSafe(|| Elf::parse(image)));
    let elf = match parsed {
        Ok(Ok(elf)) => elf,
        Ok(Err(e)) => {
            return Err(Error::invalid_binary(format!(
                "image is an ELF shared object whose symbol table cannot be read ({e})"
            )))
        }
        Err(_) => {
            return Err(Error::invalid_binary(
                "image is an ELF shared object whose symbol table cannot be read",
            ))
        }
    };
    let mut out = Vec::new();
    for s in elf.dynsyms.iter() {
        if s.st_shndx == 0 {
            continue; // an import
        }
        let bind = s.st_bind();
        if !matches!(bind, sym::STB_GLOBAL | sym::STB_WEAK | sym::STB_GNU_UNIQUE) {
            continue;
        }
        if !matches!(s.st_visibility(), sym::STV_DEFAULT | sym::STV_PROTECTED) {
            continue;
        }
        let kind = match s.st_type() {
            sym::STT_FUNC | sym::STT_GNU_IFUNC => DynKind::Function,
            sym::STT_OBJECT => DynKind::Object,
            _ => continue,
        };
        let Some(name) = elf.dynstrtab.get_at(s.st_name) else {
            continue;
        };
        if name.is_empty() || name == "_init" || name == "_fini" {
            continue;
        }
        out.push(DynSymbol {
            name: name.to_string(),
            kind,
            size: s.st_size as usize,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use goblin::elf::header;

    fn elf_header(class: u8, data: u8, e_type: u16, machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(header::ELFMAG);
        h[4] = class;
        h[5] = data;
        h[6] = 1;
        h[16..18].copy_from_slice(&e_type.to_le_bytes());
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[20..24].copy_from_slice(&1u32.to_le_bytes());
        h[52..54].copy_from_slice(&64u16.to_le_bytes());
        h
    }

    fn refusal(image: &[u8]) -> String {
        let e = select_host_image(image).unwrap_err();
        assert_eq!(
            e.code,
            crate::plugin::foundation::error::ErrorCode::InvalidBinary
        );
        e.details.clone()
    }

    #[test]
    fn short_and_foreign_images_are_named() {
        assert!(refusal(&[]).contains("empty"));
        assert!(refusal(b"BC\xC0\xDE1234").contains("LLVM bitcode"));
        assert!(refusal(b"hello world").contains("unrecognised image"));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn headers_are_checked() {
        let arm = refusal(&elf_header(2, 1, header::ET_DYN, header::EM_AARCH64));
        assert!(arm.contains("aarch64 shared object"), "{arm}");
        assert!(arm.contains("host CPU (x86_64"), "{arm}");
        let rel = refusal(&elf_header(2, 1, header::ET_REL, header::EM_X86_64));
        assert!(
            rel.contains("relocatable object") && rel.contains("-shared"),
            "{rel}"
        );
        let gpu = refusal(&elf_header(2, 1, header::ET_DYN, 224));
        assert!(gpu.contains("AMDGPU") || gpu.contains("amdgpu"), "{gpu}");
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed = 0x1234_5678u32;
        for len in 0..300 {
            let mut bytes = elf_header(2, 1, header::ET_DYN, header::EM_X86_64);
            bytes.resize(len.max(64), 0);
            for b in bytes.iter_mut().skip(16) {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                *b = (seed >> 16) as u8;
            }
            bytes.truncate(len);
            let _ = select_host_image(&bytes);
            let _ = dynamic_symbols(&bytes);
        }
    }
}
