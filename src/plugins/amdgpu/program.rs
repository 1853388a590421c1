//! A program on an AMD GPU: a code object loaded into a frozen, validated HSA
//! executable, and its kernels and global variables by name. Kernels are described by
//! the executable (kernel object, segment sizes) and by the code object's metadata
//! (arguments, for the kernarg segment); globals by their symbol's address and size.
//!
//! The executable is destroyed when the program and every kernel taken from it are
//! gone. Loading takes no global lock: HSA's loader is thread-safe.

use super::device::DeviceShared;
use super::ffi::{symbol_info as si, Executable, SYMBOL_KIND_KERNEL, SYMBOL_KIND_VARIABLE};
use super::hsa::Hsa;
use super::kernel::{AmdgpuKernel, KernelObject};
use crate::image::{parse_amdgpu_code_object, AmdgpuCodeObject};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{GlobalVariable, Kernel, Program, SymbolKind};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// A loaded executable, destroyed when dropped.
pub struct Loaded {
    hsa: Arc<Hsa>,
    pub executable: Executable,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        self.hsa.destroy_executable(self.executable);
    }
}

pub struct AmdgpuProgram {
    device: Arc<DeviceShared>,
    loaded: Arc<Loaded>,
    metadata: AmdgpuCodeObject,
    kernels: Mutex<HashMap<String, Arc<AmdgpuKernel>>>,
}

impl AmdgpuProgram {
    /// Loads `image` (a code object `select_for` chose; `description` says which).
    pub fn load(
        device: Arc<DeviceShared>,
        image: &[u8],
        description: &str,
    ) -> Result<AmdgpuProgram> {
        let label = device.label();
        let metadata = parse_amdgpu_code_object(image)
            .map_err(|e| e.context(format!("reading {description} for {label}")))?;
        let executable = device
            .hsa
            .load_executable(device.agent, image)
            .map_err(|e| e.context(format!("loading {description} on {label}")))?;
        Ok(AmdgpuProgram {
            loaded: Arc::new(Loaded {
                hsa: device.hsa.clone(),
                executable,
            }),
            device,
            metadata,
            kernels: Mutex::new(HashMap::new()),
        })
    }

    fn hsa(&self) -> &Hsa {
        &self.device.hsa
    }

    /// What the executable says the named symbol is.
    fn symbol_type(&self, name: &str) -> Option<(super::ffi::ExecutableSymbol, u32)> {
        let symbol = self
            .hsa()
            .symbol(self.loaded.executable, self.device.agent, name)?;
        let kind = self.hsa().symbol_u32(symbol, si::TYPE).ok()?;
        Some((symbol, kind))
    }

    fn missing(&self, name: &str) -> Error {
        Error::not_found(format!(
            "the program on {} has no kernel or global variable named '{name}'",
            self.device.label()
        ))
    }

    fn make_kernel(&self, name: &str) -> Result<Option<Arc<AmdgpuKernel>>> {
        let Some(meta) = self.metadata.kernels.iter().find(|k| k.name == name) else {
            return Ok(None);
        };
        let what = |e: Error| {
            e.context(format!(
                "reading kernel '{name}' of the program on {}",
                self.device.label()
            ))
        };
        let (symbol, kind) = self.symbol_type(&meta.symbol).ok_or_else(|| {
            Error::invalid_binary(format!(
                "the metadata names kernel '{name}' but the executable has no symbol '{}'",
                meta.symbol
            ))
        })?;
        if kind != SYMBOL_KIND_KERNEL {
            return Err(Error::invalid_binary(format!(
                "'{}' is not a kernel symbol",
                meta.symbol
            )));
        }
        let hsa = self.hsa();
        let object = KernelObject {
            kernel_object: hsa.symbol_u64(symbol, si::KERNEL_OBJECT).map_err(what)?,
            kernarg_size: hsa
                .symbol_u32(symbol, si::KERNEL_KERNARG_SEGMENT_SIZE)
                .map_err(what)?,
            group_size: hsa
                .symbol_u32(symbol, si::KERNEL_GROUP_SEGMENT_SIZE)
                .map_err(what)?,
            private_size: hsa
                .symbol_u32(symbol, si::KERNEL_PRIVATE_SEGMENT_SIZE)
                .map_err(what)?,
            dynamic_callstack: hsa
                .symbol_bool(symbol, si::KERNEL_DYNAMIC_CALLSTACK)
                .unwrap_or(false),
        };
        Ok(Some(Arc::new(AmdgpuKernel::new(
            meta.clone(),
            object,
            self.loaded.clone(),
            self.device.clone(),
        ))))
    }

    fn lookup_kernel(&self, name: &str) -> Result<Option<Arc<AmdgpuKernel>>> {
        if let Some(k) = self.kernels.lock().get(name) {
            return Ok(Some(k.clone()));
        }
        let made = self.make_kernel(name)?;
        if let Some(k) = &made {
            self.kernels.lock().insert(name.to_owned(), k.clone());
        }
        Ok(made)
    }
}

impl Program for AmdgpuProgram {
    fn symbol_kind(&self, name: &str) -> Option<SymbolKind> {
        if self.metadata.kernels.iter().any(|k| k.name == name) {
            return Some(SymbolKind::Kernel);
        }
        match self.symbol_type(name)?.1 {
            SYMBOL_KIND_VARIABLE => Some(SymbolKind::GlobalVariable),
            SYMBOL_KIND_KERNEL => Some(SymbolKind::Kernel),
            _ => None,
        }
    }

    fn kernel(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        if let Some(k) = self.lookup_kernel(name)? {
            return Ok(k);
        }
        match self.symbol_type(name) {
            Some((symbol, SYMBOL_KIND_VARIABLE)) => Err(Error::symbol_kind(format!(
                "'{name}' is a global variable ({} bytes), not a kernel",
                self.hsa()
                    .symbol_u32(symbol, si::VARIABLE_SIZE)
                    .unwrap_or(0)
            ))),
            _ => Err(self.missing(name)),
        }
    }

    fn global(&self, name: &str) -> Result<GlobalVariable> {
        if self.metadata.kernels.iter().any(|k| k.name == name) {
            return Err(Error::symbol_kind(format!(
                "'{name}' is a kernel (a function), not a global variable"
            )));
        }
        match self.symbol_type(name) {
            Some((symbol, SYMBOL_KIND_VARIABLE)) => Ok(GlobalVariable {
                address: self.hsa().symbol_u64(symbol, si::VARIABLE_ADDRESS)? as usize,
                size: self.hsa().symbol_u32(symbol, si::VARIABLE_SIZE)? as usize,
            }),
            Some(_) => Err(Error::symbol_kind(format!(
                "'{name}' is not a global variable"
            ))),
            None => Err(self.missing(name)),
        }
    }
}
