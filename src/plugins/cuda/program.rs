//! A program on a CUDA device: a module loaded from PTX (compiled by the driver's JIT),
//! a cubin, or a fatbin entry, and its kernels and global variables, looked up by name.
//!
//! The module is unloaded when the program and every kernel taken from it are gone.
//! Unloading needs no image parsing, so it works the same for PTX as for cubins (LLVM
//! 22's `olDestroyProgram` fails on PTX programs with "Invalid ELF class").

use super::calls_exec::JitLog;
use super::context::PrimaryContext;
use super::facts::DeviceFacts;
use super::ffi::CuModule;
use super::kernel::CudaKernel;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::flags::{trace, trace_enabled};
use crate::plugin::{GlobalVariable, Kernel, Program, SymbolKind};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;

/// A loaded module, unloaded (with its context current) when dropped.
pub struct Module {
    context: Arc<PrimaryContext>,
    handle: CuModule,
}

impl Module {
    /// Loads `image` (a selected PTX text, cubin or fatbin) into `context`.
    /// `description` says what it is ("CUDA PTX for sm_80"), for messages.
    pub fn load(
        context: Arc<PrimaryContext>,
        facts: &DeviceFacts,
        image: &[u8],
        description: &str,
    ) -> Result<Module> {
        // The JIT's logs are read when tracing, and after a failure (the load is made
        // again with them, for the error's words).
        let load = |with_logs| {
            let _current = context.make_current()?;
            Ok::<_, Error>(context.driver().module_load(image, with_logs))
        };
        let tracing = trace_enabled();
        let (mut loaded, mut log) = load(tracing)?;
        if loaded.is_err() && !tracing {
            (loaded, log) = load(true)?;
        }
        match loaded {
            Ok(handle) => {
                if !log.info.is_empty() {
                    trace(|| format!("CUDA JIT on {}: {}", facts.label(), log.info));
                }
                Ok(Module { context, handle })
            }
            Err(e) => Err(load_error(e, description, &facts.label(), &log)),
        }
    }

    pub fn context(&self) -> &Arc<PrimaryContext> {
        &self.context
    }

    pub fn handle(&self) -> CuModule {
        self.handle
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let unloaded = self
            .context
            .on_handles(|| self.context.driver().module_unload(self.handle));
        if let Err(e) = unloaded {
            trace(|| format!("CUDA: unloading a module: {e}"));
        }
    }
}

/// The error of a failed load: what was loaded, where, the driver's words and the JIT's
/// log (the line and message of a PTX error are in it).
pub fn load_error(error: Error, description: &str, label: &str, log: &JitLog) -> Error {
    let mut error = error.context(format!("loading {description} on {label}"));
    if !log.error.is_empty() {
        error.details = format!("{}; JIT log: {}", error.details, log.error);
    } else if !log.info.is_empty() {
        error.details = format!("{}; JIT info: {}", error.details, log.info);
    }
    error
}

/// What a name is in the module, once looked up.
#[derive(Clone)]
enum Symbol {
    Kernel(Arc<CudaKernel>),
    Global(GlobalVariable),
    Missing,
}

pub struct CudaProgram {
    module: Arc<Module>,
    facts: Arc<DeviceFacts>,
    /// Lookups so far: the driver has no call that lists a module's names, so each name
    /// is asked for once.
    symbols: Mutex<HashMap<String, Symbol>>,
}

impl CudaProgram {
    pub fn new(module: Module, facts: Arc<DeviceFacts>) -> CudaProgram {
        CudaProgram {
            module: Arc::new(module),
            facts,
            symbols: Mutex::new(HashMap::new()),
        }
    }

    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    fn lookup(&self, name: &str) -> Result<Symbol> {
        if let Some(found) = self.symbols.lock().get(name) {
            return Ok(found.clone());
        }
        let found = self.ask_driver(name)?;
        self.symbols.lock().insert(name.to_string(), found.clone());
        Ok(found)
    }

    fn ask_driver(&self, name: &str) -> Result<Symbol> {
        let Ok(c_name) = CString::new(name) else {
            return Ok(Symbol::Missing); // no symbol has a NUL in its name
        };
        let context = self.module.context();
        let driver = context.driver();
        let _current = context.make_current()?;
        if let Some(function) = driver.module_function(self.module.handle(), &c_name)? {
            let kernel = CudaKernel::new(name, function, self.module.clone(), self.facts.clone());
            return Ok(Symbol::Kernel(Arc::new(kernel)));
        }
        Ok(match driver.module_global(self.module.handle(), &c_name)? {
            Some((address, size)) => Symbol::Global(GlobalVariable {
                address: address as usize,
                size,
            }),
            None => Symbol::Missing,
        })
    }

    fn missing(&self, name: &str) -> Error {
        Error::not_found(format!(
            "the program on {} has no kernel or global variable named '{name}'",
            self.facts.label()
        ))
    }
}

impl Program for CudaProgram {
    fn symbol_kind(&self, name: &str) -> Option<SymbolKind> {
        match self.lookup(name) {
            Ok(Symbol::Kernel(_)) => Some(SymbolKind::Kernel),
            Ok(Symbol::Global(_)) => Some(SymbolKind::GlobalVariable),
            Ok(Symbol::Missing) => None,
            Err(e) => {
                trace(|| format!("CUDA: looking up '{name}': {e}"));
                None
            }
        }
    }

    fn kernel(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        match self.lookup(name)? {
            Symbol::Kernel(k) => Ok(k),
            Symbol::Global(g) => Err(Error::symbol_kind(format!(
                "'{name}' is a global variable ({} bytes), not a kernel",
                g.size
            ))),
            Symbol::Missing => Err(self.missing(name)),
        }
    }

    fn global(&self, name: &str) -> Result<GlobalVariable> {
        match self.lookup(name)? {
            Symbol::Global(g) => Ok(g),
            Symbol::Kernel(_) => Err(Error::symbol_kind(format!(
                "'{name}' is a kernel (a function), not a global variable"
            ))),
            Symbol::Missing => Err(self.missing(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::foundation::error::ErrorCode;

    #[test]
    fn load_errors_carry_the_jit_log() {
        let driver_said = Error::new(
            ErrorCode::InvalidBinary,
            "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)",
        );
        let log = JitLog {
            info: String::new(),
            error: "ptxas application ptx input, line 9; error   : Unknown symbol 'y'".into(),
        };
        let e = load_error(
            driver_said.clone(),
            "CUDA PTX for sm_80",
            "CUDA device 0 (GPU)",
            &log,
        );
        assert_eq!(e.code, ErrorCode::InvalidBinary);
        assert_eq!(
            e.details,
            "loading CUDA PTX for sm_80 on CUDA device 0 (GPU): cuModuleLoadDataEx failed: \
             CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed); JIT log: ptxas \
             application ptx input, line 9; error   : Unknown symbol 'y'"
        );
        let quiet = load_error(
            driver_said,
            "a CUDA cubin for sm_90",
            "d",
            &JitLog::default(),
        );
        assert!(quiet.details.ends_with("(a PTX JIT compilation failed)"));
    }
}
