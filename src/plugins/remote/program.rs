//! A program loaded on a server's device, and its kernels: handles the server keeps.

use super::device::RemoteDevice;
use super::wire::{Reply, Request};
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::{
    Device, DeviceInfo, GlobalVariable, InfoValue, Kernel, KernelArgs, LaunchConfig, Program,
    SymbolKind,
};
use std::sync::Arc;

pub struct RemoteProgram {
    pub device: Arc<RemoteDevice>,
    pub handle: u64,
    /// The program on the server, destroyed when neither this nor a kernel of it (a
    /// launch still queued) uses it any more.
    pub on_server: Arc<ServerProgram>,
}

/// A program's life on its server.
pub struct ServerProgram {
    pub device: Arc<RemoteDevice>,
    pub handle: u64,
}

pub struct RemoteKernel {
    pub name: String,
    pub device: Arc<RemoteDevice>,
    pub handle: u64,
    /// Keeps the program on the server while the kernel may still be launched.
    pub _program: Arc<ServerProgram>,
}

fn unexpected(rank: i32, reply: Reply) -> Error {
    Error::new(
        ErrorCode::BackendFailure,
        format!("rank {rank}: an unexpected answer {reply:?}"),
    )
}

impl RemoteProgram {
    fn symbol(&self, kind: u32, name: &str) -> Result<Reply> {
        let request = Request::Symbol {
            program: self.handle,
            kind,
            name: name.to_string(),
        };
        let d = &self.device;
        d.session.exchange(d.rank, &request, &[], &mut [])
    }
}

impl Program for RemoteProgram {
    fn symbol_kind(&self, name: &str) -> Option<SymbolKind> {
        match self.symbol(u32::MAX, name) {
            Ok(Reply::Value(kind)) => SymbolKind::try_from(kind as u32).ok(),
            _ => None,
        }
    }

    fn kernel(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        match self.symbol(SymbolKind::Kernel as u32, name)? {
            Reply::Value(handle) => Ok(Arc::new(RemoteKernel {
                name: name.to_string(),
                device: self.device.clone(),
                handle,
                _program: self.on_server.clone(),
            })),
            other => Err(unexpected(self.device.rank, other)),
        }
    }

    fn global(&self, name: &str) -> Result<GlobalVariable> {
        match self.symbol(SymbolKind::GlobalVariable as u32, name)? {
            Reply::Pair(address, size) => Ok(GlobalVariable {
                address: address as usize,
                size: size as usize,
            }),
            other => Err(unexpected(self.device.rank, other)),
        }
    }
}

impl Drop for ServerProgram {
    /// The server forgets the program and its kernels (best effort: at exit the server
    /// may be gone already).
    fn drop(&mut self) {
        let request = Request::DestroyProgram {
            program: self.handle,
        };
        let d = &self.device;
        let _ = d.session.exchange(d.rank, &request, &[], &mut []);
    }
}

impl Kernel for RemoteKernel {
    fn name(&self) -> &str {
        &self.name
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// On the server's stream 0, which answers when the kernel is done.
    fn run_direct(&self, config: &LaunchConfig, args: &KernelArgs) -> Option<Result<()>> {
        Some(self.device.launch(self, config, args.clone(), 0))
    }

    /// The server's device answers no occupancy query yet: its largest group.
    fn optimal_group_size(&self, _shared_memory_per_item: usize) -> Result<usize> {
        match self.device.info(DeviceInfo::MaxWorkGroupSize) {
            Ok(InfoValue::U32(n)) => Ok(n.max(1) as usize),
            _ => Ok(1),
        }
    }

    /// The server's kernel answers.
    fn max_cooperative_groups(&self, config: &LaunchConfig) -> Result<u32> {
        let request = Request::CooperativeGroups {
            kernel: self.handle,
            dimensions: config.dimensions,
            groups: config.num_groups,
            group_size: config.group_size,
            dynamic_shared: config.dyn_shared_memory as u64,
        };
        let d = &self.device;
        match d.session.exchange(d.rank, &request, &[], &mut [])? {
            Reply::Value(n) => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
            other => Err(unexpected(d.rank, other)),
        }
    }
}
