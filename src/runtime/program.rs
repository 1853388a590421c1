//! Programs, their symbols and kernel launches, backend-neutral.

use crate::plugin::foundation::c_enum::c_enum;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::foundation::flags::trace;
use crate::plugin::StreamOp;
use crate::plugin::{self, GlobalVariable, InfoValue, KernelArgs, LaunchConfig, SymbolKind};
use crate::plugins::global_ctors::{self, Destructors};
use crate::runtime::context::Runtime;
use crate::runtime::platform::Device;
use crate::runtime::queue::Queue;
use crate::runtime::recording;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

c_enum! {
    /// `ol_symbol_info_t`: LLVM's keys, then our extension.
    pub enum SymbolInfo {
        Kind = 0,
        GlobalVariableAddress = 1,
        GlobalVariableSize = 2,
        Name = crate::plugin::EXTENSION_BASE,
    }
}

pub struct Program {
    pub device: Arc<Device>,
    pub imp: Arc<dyn plugin::Program>,
    /// The image, kept while launches are recorded (`OFFLOAD_RECORD`).
    pub image: Option<Arc<[u8]>>,
    /// Symbols handed out, by (name, kind), so asking twice gives the same handle.
    symbols: Mutex<HashMap<(String, u32), usize>>,
    /// The image's global destructors, still to run (GPU images with C++ globals).
    destructors: Mutex<Option<Destructors>>,
}

impl Program {
    /// Runs the image's global destructors, once (at `olDestroyProgram`, or when the
    /// runtime shuts down with the program still loaded).
    fn run_destructors(&self) -> Result<()> {
        match self.destructors.lock().take() {
            Some(owed) => owed.run(self.device.imp.as_ref(), self.imp.as_ref()),
            None => Ok(()),
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        if let Err(e) = self.run_destructors() {
            trace(|| format!("unloading a program on {}: {e}", self.device.describe()));
        }
    }
}

pub enum SymbolTarget {
    Kernel(Arc<dyn plugin::Kernel>),
    Global(GlobalVariable),
}

pub struct Symbol {
    pub name: String,
    pub device: Arc<Device>,
    pub target: SymbolTarget,
    /// Its program's image, while launches are recorded.
    pub image: Option<Arc<[u8]>>,
}

impl Symbol {
    pub fn kind(&self) -> SymbolKind {
        match self.target {
            SymbolTarget::Kernel(_) => SymbolKind::Kernel,
            SymbolTarget::Global(_) => SymbolKind::GlobalVariable,
        }
    }

    pub fn kernel(&self) -> Result<&Arc<dyn plugin::Kernel>> {
        match &self.target {
            SymbolTarget::Kernel(k) => Ok(k),
            SymbolTarget::Global(_) => Err(Error::symbol_kind(format!(
                "symbol '{}' is a global variable, not a kernel",
                self.name
            ))),
        }
    }

    pub fn info(&self, key: SymbolInfo) -> Result<InfoValue> {
        let global = || match &self.target {
            SymbolTarget::Global(g) => Ok(*g),
            SymbolTarget::Kernel(_) => Err(Error::symbol_kind(format!(
                "{key:?} is defined for global variables only, and '{}' is a kernel",
                self.name
            ))),
        };
        Ok(match key {
            SymbolInfo::Kind => InfoValue::U32(self.kind() as u32),
            SymbolInfo::GlobalVariableAddress => InfoValue::Handle(global()?.address),
            SymbolInfo::GlobalVariableSize => InfoValue::Usize(global()?.size),
            SymbolInfo::Name => InfoValue::Str(self.name.clone()),
        })
    }
}

/// The properties of a launch besides its grid.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchProperties {
    pub cooperative: bool,
}

impl Runtime {
    /// Whether `device` can run `image`; `Err` says why not.
    pub fn check_binary(&self, device: &Device, image: &[u8]) -> Result<()> {
        not_empty(image)?;
        device.imp.check_image(image).map_err(refused_image)
    }

    pub fn create_program(&self, device: &Arc<Device>, image: &[u8]) -> Result<usize> {
        // A backend whose load chooses the image refuses it there: the image is read once.
        if device.imp.load_checks_image() {
            not_empty(image)?;
        } else {
            self.check_binary(device, image)?;
        }
        let imp = device.imp.load_program(image)?;
        let destructors = global_ctors::construct(
            device.platform.backend,
            device.imp.as_ref(),
            imp.as_ref(),
            image,
        )?;
        Ok(self.programs.insert(Arc::new(Program {
            device: device.clone(),
            imp,
            image: recording::enabled().then(|| Arc::from(image)),
            symbols: Mutex::new(HashMap::new()),
            destructors: Mutex::new(destructors),
        })))
    }

    /// Ends the program's handle and its symbols'. The image is unloaded once no kernel
    /// of it is running or enqueued (they hold it).
    pub fn destroy_program(&self, handle: usize) -> Result<()> {
        let program = self.programs.remove(handle).ok_or_else(|| {
            Error::invalid_argument(format!("Program {handle:#x} is not a live program"))
        })?;
        for (_, symbol) in program.symbols.lock().drain() {
            self.symbols.remove(symbol);
        }
        program.run_destructors()
    }

    pub fn get_symbol(&self, program: &Program, name: &str, kind: SymbolKind) -> Result<usize> {
        let mut symbols = program.symbols.lock();
        if let Some(&handle) = symbols.get(&(name.to_string(), kind as u32)) {
            return Ok(handle);
        }
        let target = match (program.imp.symbol_kind(name), kind) {
            (None, _) => {
                return Err(Error::not_found(format!(
                    "the program has no symbol named '{name}'"
                )))
            }
            (Some(SymbolKind::Kernel), SymbolKind::Kernel) => {
                SymbolTarget::Kernel(program.imp.kernel(name)?)
            }
            (Some(SymbolKind::GlobalVariable), SymbolKind::GlobalVariable) => {
                SymbolTarget::Global(program.imp.global(name)?)
            }
            (Some(actual), wanted) => {
                return Err(Error::symbol_kind(format!(
                    "symbol '{name}' is a {}, not a {}",
                    kind_name(actual),
                    kind_name(wanted)
                )))
            }
        };
        let handle = self.symbols.insert(Arc::new(Symbol {
            name: name.to_string(),
            device: program.device.clone(),
            target,
            image: program.image.clone(),
        }));
        symbols.insert((name.to_string(), kind as u32), handle);
        Ok(handle)
    }

    /// Checks a launch and runs it now (no queue) or enqueues it.
    pub fn launch_kernel(
        &self,
        queue: Option<&Arc<Queue>>,
        device: &Arc<Device>,
        symbol: &Symbol,
        config: LaunchConfig,
        args: KernelArgs,
    ) -> Result<()> {
        if symbol.device.index != device.index {
            return Err(Error::new(
                ErrorCode::InvalidDevice,
                format!(
                    "kernel '{}' belongs to a program loaded on {}, not on {}",
                    symbol.name,
                    symbol.device.describe(),
                    device.describe()
                ),
            ));
        }
        if let Some(q) = queue {
            if q.device.index != device.index {
                return Err(Error::new(
                    ErrorCode::InvalidDevice,
                    format!(
                        "Queue belongs to {}, but Device is {}",
                        q.device.describe(),
                        device.describe()
                    ),
                ));
            }
        }
        // Checked after the devices, as LLVM does; a queued launch now, not when it
        // reaches the front of its queue.
        let kernel = symbol.kernel()?.clone();
        let limits = device.launch_limits().tighter(kernel.limits());
        plugin::check_launch(kernel.as_ref(), limits, &config, &args, &|| {
            format!("kernel '{}' on {}", symbol.name, device.describe())
        })?;
        if recording::wants(&symbol.name) {
            return self.launch_recorded(queue, device, symbol, kernel, config, args);
        }
        Self::run(queue, device, kernel, config, args)
    }

    /// A checked launch under `OFFLOAD_RECORD` (out of the launch path's way).
    #[cold]
    #[inline(never)]
    fn launch_recorded(
        &self,
        queue: Option<&Arc<Queue>>,
        device: &Arc<Device>,
        symbol: &Symbol,
        kernel: Arc<dyn plugin::Kernel>,
        config: LaunchConfig,
        args: KernelArgs,
    ) -> Result<()> {
        let recorded_args = args.clone();
        let launch = recording::Launch {
            queue,
            device,
            symbol,
            config: &config,
            args: &recorded_args,
        };
        self.record_launch(launch, || Self::run(queue, device, kernel, config, args))
    }

    /// A checked launch, run now (no queue) or enqueued.
    #[inline(always)]
    fn run(
        queue: Option<&Arc<Queue>>,
        device: &Arc<Device>,
        kernel: Arc<dyn plugin::Kernel>,
        config: LaunchConfig,
        args: KernelArgs,
    ) -> Result<()> {
        match queue {
            None => plugin::launch_now(device.imp.as_ref(), &kernel, &config, &args),
            Some(q) => q.enqueue(
                "olLaunchKernel",
                StreamOp::Launch {
                    kernel,
                    config,
                    args,
                },
                None,
            ),
        }
    }
}

fn not_empty(image: &[u8]) -> Result<()> {
    if image.is_empty() {
        return Err(Error::invalid_size(
            "Size is 0; expected the image's length in bytes",
        ));
    }
    Ok(())
}

/// A device that cannot load images at all refuses every image as not valid for it.
fn refused_image(e: Error) -> Error {
    let code = if e.code == ErrorCode::Unsupported {
        ErrorCode::InvalidBinary
    } else {
        e.code
    };
    e.with_code(code)
}

fn kind_name(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::Kernel => "kernel",
        SymbolKind::GlobalVariable => "global variable",
    }
}
