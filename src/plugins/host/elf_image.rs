//! What the host device can load: an ELF shared object for this machine. `check_host_elf`
//! says why an image is not one (one function, so the general image reader of
//! `src/image` can replace it); `dynamic_symbols` lists what a loaded program exports.

use crate::runtime::error::{Error, Result};
use goblin::elf::header::{self, Header};
use goblin::elf::sym;
use goblin::elf::Elf;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The ELF machine of the CPU this library runs on.
#[cfg(target_arch = "x86_64")]
const HOST_MACHINE: u16 = header::EM_X86_64;
#[cfg(target_arch = "aarch64")]
const HOST_MACHINE: u16 = header::EM_AARCH64;
#[cfg(target_arch = "riscv64")]
const HOST_MACHINE: u16 = header::EM_RISCV;
#[cfg(target_arch = "powerpc64")]
const HOST_MACHINE: u16 = header::EM_PPC64;
#[cfg(target_arch = "s390x")]
const HOST_MACHINE: u16 = header::EM_S390;
#[cfg(target_arch = "loongarch64")]
const HOST_MACHINE: u16 = 258;
#[cfg(target_arch = "x86")]
const HOST_MACHINE: u16 = header::EM_386;
#[cfg(target_arch = "arm")]
const HOST_MACHINE: u16 = header::EM_ARM;
/// An architecture this list lacks: every image is refused, with its machine named.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "powerpc64",
    target_arch = "s390x",
    target_arch = "loongarch64",
    target_arch = "x86",
    target_arch = "arm"
)))]
const HOST_MACHINE: u16 = header::EM_NONE;

const HOST_CLASS: u8 = if cfg!(target_pointer_width = "64") {
    header::ELFCLASS64
} else {
    header::ELFCLASS32
};

const HOST_DATA: u8 = if cfg!(target_endian = "little") {
    header::ELFDATA2LSB
} else {
    header::ELFDATA2MSB
};

/// How the device names itself in messages.
pub fn host_description() -> String {
    format!(
        "the device is the host CPU ({}, {}-bit, {}-endian)",
        std::env::consts::ARCH,
        usize::BITS,
        if cfg!(target_endian = "little") {
            "little"
        } else {
            "big"
        }
    )
}

/// Accepts an ELF shared object (ET_DYN) of the host's machine, class and byte order;
/// otherwise `InvalidBinary` with a sentence saying what the image is and what the
/// device is.
pub fn check_host_elf(image: &[u8]) -> Result<()> {
    let refuse = |what: String| {
        Err(Error::invalid_binary(format!(
            "{what}; {}",
            host_description()
        )))
    };
    if let Some(kind) = non_elf_kind(image) {
        return refuse(kind);
    }
    let header_size = match image.get(header::EI_CLASS) {
        Some(&header::ELFCLASS64) => header::header64::SIZEOF_EHDR,
        Some(&header::ELFCLASS32) => header::header32::SIZEOF_EHDR,
        Some(&class) if image.len() > header::EI_DATA => {
            return refuse(format!("image is an ELF file of unknown class {class}"))
        }
        _ => 0,
    };
    if image.len() < header_size.max(header::SIZEOF_IDENT) {
        return refuse(format!(
            "image is {} bytes, too short for an ELF header",
            image.len()
        ));
    }
    let parsed = catch_unwind(AssertUnwindSafe(|| Elf::parse_header(image)));
    let h: Header = match parsed {
        Ok(Ok(h)) => h,
        Ok(Err(e)) => return refuse(format!("image has an unreadable ELF header ({e})")),
        Err(_) => return refuse(String::from("image has an unreadable ELF header")),
    };
    let class = h.e_ident[header::EI_CLASS];
    let data = h.e_ident[header::EI_DATA];
    let what = format!(
        "image is {} ELF {} for {}",
        class_words(class, data),
        type_words(h.e_type),
        machine_words(h.e_machine)
    );
    if h.e_machine != HOST_MACHINE || class != HOST_CLASS || data != HOST_DATA {
        return refuse(what);
    }
    match h.e_type {
        header::ET_DYN => Ok(()),
        header::ET_REL => refuse(format!(
            "{what}, expected a shared object (link it with -shared -fPIC)"
        )),
        header::ET_EXEC => refuse(format!(
            "{what}, expected a shared object (build it with -shared -fPIC, not as a program)"
        )),
        _ => refuse(format!("{what}, expected a shared object")),
    }
}

/// Names formats that are not ELF at all, or says the bytes are unknown.
fn non_elf_kind(image: &[u8]) -> Option<String> {
    if image.len() >= 4 && image[..4] == *header::ELFMAG {
        return None;
    }
    let starts = |magic: &[u8]| image.starts_with(magic);
    if starts(b"BC\xC0\xDE") || starts(&[0xDE, 0xC0, 0x17, 0x0B]) {
        return Some(String::from(
            "image is LLVM bitcode: the library is JIT-free, compile the image for the device",
        ));
    }
    if starts(&0x10FF10ADu32.to_le_bytes()) {
        return Some(String::from(
            "image is an LLVM OffloadBinary container, which the host device does not unpack; \
             give it the ELF shared object inside",
        ));
    }
    if image.is_empty() {
        return Some(String::from("image is empty"));
    }
    if image.len() < 4 && header::ELFMAG.starts_with(image) {
        return Some(format!(
            "image is {} bytes, too short for an ELF header",
            image.len()
        ));
    }
    if starts(b"//") || starts(b".version") || starts(b"\n//") {
        return Some(String::from("image is PTX text for NVIDIA GPUs"));
    }
    let head: Vec<String> = image.iter().take(4).map(|b| format!("{b:02x}")).collect();
    Some(format!(
        "image is not an ELF file (it starts with bytes {}, not 7f 45 4c 46)",
        head.join(" ")
    ))
}

fn class_words(class: u8, data: u8) -> String {
    let bits = match class {
        header::ELFCLASS32 => "a 32-bit",
        header::ELFCLASS64 => "a 64-bit",
        _ => "an unknown-class",
    };
    let order = match data {
        header::ELFDATA2LSB => "little-endian",
        header::ELFDATA2MSB => "big-endian",
        _ => "unknown-byte-order",
    };
    format!("{bits} {order}")
}

fn type_words(e_type: u16) -> &'static str {
    match e_type {
        header::ET_DYN => "shared object",
        header::ET_REL => "relocatable object",
        header::ET_EXEC => "executable",
        header::ET_CORE => "core dump",
        _ => "file of unknown type",
    }
}

fn machine_words(machine: u16) -> String {
    match machine {
        header::EM_X86_64 => "x86_64".into(),
        header::EM_386 => "i386".into(),
        header::EM_AARCH64 => "aarch64".into(),
        header::EM_ARM => "arm".into(),
        header::EM_RISCV => "riscv".into(),
        header::EM_PPC64 => "powerpc64".into(),
        header::EM_PPC => "powerpc".into(),
        header::EM_S390 => "s390x".into(),
        258 => "loongarch".into(),
        224 => "AMD GPUs (amdgcn)".into(),
        header::EM_CUDA => "NVIDIA GPUs (cuda)".into(),
        other => format!("{} (machine {other})", header::machine_to_str(other)),
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
        let e = check_host_elf(image).unwrap_err();
        assert_eq!(e.code, crate::runtime::error::ErrorCode::InvalidBinary);
        e.details
    }

    #[test]
    fn short_and_foreign_images_are_named() {
        assert!(refusal(&[]).contains("empty"));
        assert!(refusal(&[0x7f, b'E']).contains("2 bytes, too short"));
        assert!(refusal(&elf_header(2, 1, 3, HOST_MACHINE)[..12]).contains("12 bytes"));
        assert!(refusal(b"BC\xC0\xDE1234").contains("LLVM bitcode"));
        assert!(refusal(&0x10FF10ADu32.to_le_bytes()).contains("OffloadBinary"));
        assert!(refusal(b"hello world").contains("not an ELF file"));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn headers_are_checked() {
        let ok = elf_header(2, 1, header::ET_DYN, header::EM_X86_64);
        check_host_elf(&ok).unwrap();
        let arm = refusal(&elf_header(2, 1, header::ET_DYN, header::EM_AARCH64));
        assert!(arm.contains("shared object for aarch64"), "{arm}");
        assert!(arm.contains("host CPU (x86_64"), "{arm}");
        let rel = refusal(&elf_header(2, 1, header::ET_REL, header::EM_X86_64));
        assert!(rel.contains("relocatable object") && rel.contains("-shared -fPIC"));
        let big = refusal(&elf_header(2, 2, header::ET_DYN, header::EM_X86_64));
        assert!(big.contains("big-endian"), "{big}");
        let gpu = refusal(&elf_header(2, 1, header::ET_DYN, 224));
        assert!(gpu.contains("AMD GPUs"), "{gpu}");
        let mut h32 = elf_header(1, 1, header::ET_DYN, header::EM_386);
        h32.truncate(52);
        assert!(refusal(&h32).contains("32-bit"));
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed = 0x1234_5678u32;
        for len in 0..300 {
            let mut bytes = elf_header(2, 1, header::ET_DYN, HOST_MACHINE);
            bytes.resize(len.max(64), 0);
            for b in bytes.iter_mut().skip(16) {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                *b = (seed >> 16) as u8;
            }
            bytes.truncate(len);
            let _ = check_host_elf(&bytes);
            let _ = dynamic_symbols(&bytes);
        }
    }
}
