//! The host platform: one device, the CPU this library runs on.
//!
//! Programs for it are ELF shared objects for this machine (`elf_image` checks them),
//! loaded from memory without touching any file system (`memfd_loader`). Their exported
//! functions are kernels, called as `include/offload/host_kernel.h` describes: per
//! work-group with a context when a `__ol_host_kernel_v2_<name>` marker says so
//! (`kernel_abi`), otherwise once per launch in LLVM's host plugin convention (`kernel`),
//! or, for a launch whose arguments are the kernel's C parameters (clang's kernel-language
//! launches), with the platform's C calling convention from the parameter types the
//! image records (`c_call`: the mangled name, `mangled`, and DWARF, `debug_types`).

mod block_cache;
mod c_call;
pub mod cpu_features;
mod debug_types;
mod elf_image;
mod facts;
mod huge_pages;
mod kernel;
pub mod kernel_abi;
mod mangled;
mod memfd_loader;
mod memory;
mod program;
mod stream;

pub use elf_image::select_host_image;
pub use facts::HostFacts;
pub use kernel::{HostKernel, PREFERRED_GROUP_SIZE};
pub use program::HostProgram;

use crate::plugin::foundation::error::Result;
use crate::plugin::{self, AllocKind, Backend, DeviceInfo, DeviceType, InfoValue, Program};
use block_cache::BlockCache;
use std::sync::Arc;

pub struct HostPlugin;

impl plugin::Plugin for HostPlugin {
    fn backend(&self) -> Backend {
        Backend::Host
    }
    fn name(&self) -> String {
        String::from("Host")
    }
    fn vendor(&self) -> String {
        String::from("liboffload")
    }
    fn version(&self) -> String {
        String::from(env!("CARGO_PKG_VERSION"))
    }
    fn devices(&self) -> Vec<Arc<dyn plugin::Device>> {
        vec![Arc::new(HostDevice {
            facts: HostFacts::get(),
            blocks: BlockCache::default(),
        })]
    }
}

pub struct HostDevice {
    facts: &'static HostFacts,
    /// Large freed blocks kept for reuse (`block_cache`), freed when the device goes.
    blocks: BlockCache,
}

impl Drop for HostDevice {
    fn drop(&mut self) {
        memory::release(&self.blocks);
    }
}

impl plugin::Device for HostDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Host
    }

    fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        self.facts.info(key)
    }

    fn allocate(&self, size: usize, _kind: AllocKind) -> Result<usize> {
        memory::allocate(&self.blocks, size)
    }

    fn free(&self, addr: usize, size: usize, _kind: AllocKind) -> Result<()> {
        memory::free(&self.blocks, addr, size)
    }

    fn copy_to_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        memory::copy(dst, src, size);
        Ok(())
    }

    fn copy_from_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        memory::copy(dst, src, size);
        Ok(())
    }

    fn copy_within_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        memory::copy(dst, src, size);
        Ok(())
    }

    fn fill(&self, dst: usize, pattern: &[u8], size: usize) -> Result<()> {
        memory::fill(dst, pattern, size);
        Ok(())
    }

    fn lock_host_memory(&self, addr: usize, _size: usize) -> Result<usize> {
        Ok(addr)
    }

    fn unlock_host_memory(&self, _addr: usize) -> Result<()> {
        Ok(())
    }

    fn check_image(&self, image: &[u8]) -> Result<()> {
        select_host_image(image).map(|_| ())
    }

    fn load_program(&self, image: &[u8]) -> Result<Arc<dyn Program>> {
        let range = select_host_image(image)?;
        let program = HostProgram::load(&image[range], self.facts.local_memory as usize)?;
        Ok(Arc::new(program))
    }

    /// Streams run on the shared worker pool (`stream`).
    fn create_stream(&self) -> Result<Arc<dyn plugin::Stream>> {
        Ok(Arc::new(stream::HostStream::new(stream::HostOps)))
    }
}
