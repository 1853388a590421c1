//! A program on the host device: a shared object loaded from memory, its kernels and
//! global variables taken from its dynamic symbol table.

use super::debug_types::DebugInfo;
use super::elf_image::{dynamic_symbols, DynKind};
use super::kernel::{Convention, HostKernel};
use super::kernel_abi::{self, HostKernelFn, HostKernelMarker};
use super::memfd_loader::LoadedLibrary;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{GlobalVariable, Kernel, Program, SymbolKind};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What a kernel symbol is, decided at load time.
#[derive(Clone, Copy, Debug)]
enum KernelEntry {
    Ready(Convention),
    /// Marked for an ABI version this library does not implement.
    UnknownAbi(u32),
}

#[derive(Clone, Copy, Debug)]
enum Entry {
    Kernel(KernelEntry),
    Global(GlobalVariable),
}

pub struct HostProgram {
    library: Arc<LoadedLibrary>,
    symbols: HashMap<String, Entry>,
    local_memory: usize,
    /// The image's DWARF, where it has some: parameter types for typed calls.
    debug: Option<Arc<DebugInfo>>,
}

impl HostProgram {
    /// Loads `image` (already accepted by `select_host_image`). `local_memory` bounds the
    /// dynamic shared memory of its kernels' launches.
    pub fn load(image: &[u8], local_memory: usize) -> Result<HostProgram> {
        let exported = dynamic_symbols(image)?;
        let library = Arc::new(LoadedLibrary::load(image, "liboffload-program")?);

        // Markers first: kernel name -> (ABI version, marker symbol, its size).
        let mut markers: BTreeMap<&str, (u32, &str, usize)> = BTreeMap::new();
        for s in &exported {
            if let Some((kernel, version)) = kernel_abi::parse_marker_name(&s.name) {
                markers.insert(kernel, (version, &s.name, s.size));
            }
        }
        let address_of = |name: &str| {
            library.symbol(name).ok_or_else(|| {
                Error::invalid_binary(format!(
                    "the image exports '{name}' but the dynamic loader cannot find it"
                ))
            })
        };

        let mut symbols = HashMap::with_capacity(exported.len());
        for s in &exported {
            if kernel_abi::parse_marker_name(&s.name).is_some() {
                continue; // part of the ABI, not of the program
            }
            let address = address_of(&s.name)?;
            let entry = match s.kind {
                DynKind::Object => Entry::Global(GlobalVariable {
                    address,
                    size: s.size,
                }),
                DynKind::Function => Entry::Kernel(match markers.get(s.name.as_str()) {
                    None => KernelEntry::Ready(Convention::Llvm { address }),
                    Some(&(version, _, _)) if version != kernel_abi::ABI_VERSION => {
                        KernelEntry::UnknownAbi(version)
                    }
                    Some(&(_, marker, size)) => {
                        let args_size = read_marker(&s.name, marker, size, address_of(marker)?)?;
                        // SAFETY: the marker says this function has the host ABI's
                        // signature; `address` is its entry point, mapped while `library`
                        // lives, and every kernel made from it holds `library`.
                        let function: HostKernelFn = unsafe { std::mem::transmute(address) };
                        KernelEntry::Ready(Convention::HostAbi {
                            function,
                            args_size,
                        })
                    }
                }),
            };
            symbols.insert(s.name.clone(), entry);
        }
        for (kernel, (_, marker, _)) in &markers {
            if !matches!(symbols.get(*kernel), Some(Entry::Kernel(_))) {
                return Err(Error::invalid_binary(format!(
                    "the image exports the kernel marker '{marker}' but no function \
                     '{kernel}' (is it static, or hidden?)"
                )));
            }
        }
        Ok(HostProgram {
            library,
            symbols,
            local_memory,
            debug: DebugInfo::from_image(image).map(Arc::new),
        })
    }

    /// The path the dynamic loader opened the image from (under `/proc/self/fd/`).
    pub fn loaded_from(&self) -> &str {
        self.library.path()
    }

    /// `NotFound` naming `name`, with the closest exported names first.
    fn missing(&self, name: &str) -> Error {
        let mut names: Vec<(usize, &str)> = self
            .symbols
            .keys()
            .map(|k| (edit_distance(name, k), k.as_str()))
            .collect();
        names.sort_unstable();
        let shown = names.len().min(8);
        let mut list = names[..shown]
            .iter()
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > shown {
            list.push_str(&format!(" and {} more", names.len() - shown));
        }
        let hint = match names.first() {
            Some(&(d, close)) if d <= 2 => format!(" (did you mean '{close}'?)"),
            _ => String::new(),
        };
        if list.is_empty() {
            list = String::from("no kernels or global variables");
        }
        Error::not_found(format!(
            "the program has no symbol '{name}'{hint}; it exports {list}"
        ))
    }
}

/// Levenshtein distance, for suggesting names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Reads and checks a marker of this ABI version; returns the size of the argument buffer
/// the kernel takes (`None`: any).
fn read_marker(kernel: &str, marker: &str, size: usize, address: usize) -> Result<Option<usize>> {
    if size < std::mem::size_of::<HostKernelMarker>() {
        return Err(Error::invalid_binary(format!(
            "the kernel marker '{marker}' is {size} bytes, not an ol_host_kernel_marker_t"
        )));
    }
    // SAFETY: the symbol table says `marker` is a data object of at least the marker's
    // size at `address` (mapped while the library is loaded); read_unaligned needs no
    // alignment.
    let m: HostKernelMarker = unsafe { std::ptr::read_unaligned(address as *const _) };
    if m.magic != kernel_abi::MAGIC || m.abi_version != kernel_abi::ABI_VERSION {
        return Err(Error::invalid_binary(format!(
            "the kernel marker '{marker}' of '{kernel}' is not a host kernel ABI v{} marker \
             (magic {:#x}, version {})",
            kernel_abi::ABI_VERSION,
            m.magic,
            m.abi_version
        )));
    }
    Ok((m.args_size != kernel_abi::ANY_ARGS_SIZE).then_some(m.args_size as usize))
}

impl Program for HostProgram {
    fn symbol_kind(&self, name: &str) -> Option<SymbolKind> {
        self.symbols.get(name).map(|e| match e {
            Entry::Kernel(_) => SymbolKind::Kernel,
            Entry::Global(_) => SymbolKind::GlobalVariable,
        })
    }

    fn kernel(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        match self.symbols.get(name) {
            Some(Entry::Kernel(KernelEntry::Ready(convention))) => Ok(Arc::new(HostKernel::new(
                name,
                *convention,
                self.local_memory,
                self.library.clone(),
                self.debug.clone(),
            ))),
            Some(Entry::Kernel(KernelEntry::UnknownAbi(version))) => {
                Err(Error::invalid_binary(format!(
                    "kernel '{name}' was built for host kernel ABI version {version}; this \
                     library implements version {} (rebuild the program with this \
                     library's offload/host_kernel.h)",
                    kernel_abi::ABI_VERSION
                )))
            }
            Some(Entry::Global(g)) => Err(Error::symbol_kind(format!(
                "'{name}' is a global variable ({} bytes), not a kernel",
                g.size
            ))),
            None => Err(self.missing(name)),
        }
    }

    fn global(&self, name: &str) -> Result<GlobalVariable> {
        match self.symbols.get(name) {
            Some(Entry::Global(g)) => Ok(*g),
            Some(Entry::Kernel(_)) => Err(Error::symbol_kind(format!(
                "'{name}' is a kernel (a function), not a global variable"
            ))),
            None => Err(self.missing(name)),
        }
    }
}
