//! One initialised library: its platforms, devices and shared services.

use crate::memory::{MemoryManager, PoolConfig};
use crate::plugin::foundation::error::Result;
use crate::plugin::{Backend, Plugin};
use crate::plugins;
use crate::runtime::event::Event;
use crate::runtime::handle_table::HandleTable;
use crate::runtime::platform::{Device, Platform};
use crate::runtime::program::{Program, Symbol};
use crate::runtime::queue::Queue;
use crate::runtime::registration::Registrations;
use crate::runtime::state::InitOptions;
use std::sync::Arc;

pub struct Runtime {
    pub platforms: Vec<Arc<Platform>>,
    /// Every device of every platform; the host platform's come last.
    pub devices: Vec<Arc<Device>>,
    pub memory: MemoryManager,
    pub registrations: Registrations,
    pub queues: HandleTable<Queue>,
    pub events: HandleTable<Event>,
    pub programs: HandleTable<Program>,
    pub symbols: HandleTable<Symbol>,
    /// The streams of destroyed queues that may still run work: work not finished yet,
    /// or a queue still held elsewhere (the Rust API). A backend's stream handle may go
    /// with its queue while the work runs on, so the runtime keeps it: shutdown waits
    /// for these and for the live queues' streams.
    pub retired: parking_lot::Mutex<Vec<Arc<dyn crate::plugin::Stream>>>,
    /// The timeline of `OFFLOAD_PROFILE`.
    pub profile: Arc<crate::runtime::profile::Profile>,
}

impl Runtime {
    pub fn new(options: &InitOptions) -> Result<Self> {
        let mut chosen: Vec<Box<dyn Plugin>> = plugins::available()
            .into_iter()
            .filter(|p| {
                p.backend() == Backend::Host
                    || options.backends.is_empty()
                    || options.backends.contains(&p.backend())
            })
            .collect();
        // The host platform is listed last, so GPUs come first when iterating.
        chosen.sort_by_key(|p| p.backend() == Backend::Host);

        let mut platforms = Vec::new();
        let mut devices = Vec::new();
        for plugin in &chosen {
            let found = plugin.devices();
            let indices: Vec<usize> = (devices.len()..devices.len() + found.len()).collect();
            let platform = Arc::new(Platform::new(platforms.len(), plugin.as_ref(), indices));
            for imp in found {
                let device_type = imp.device_type();
                let device = Device::new(devices.len(), platform.clone(), imp, device_type);
                devices.push(Arc::new(device));
            }
            platforms.push(platform);
        }
        let memory = MemoryManager::new(
            PoolConfig::from_env(),
            devices.iter().map(|d| d.imp.clone()).collect(),
        );
        Ok(Runtime {
            platforms,
            devices,
            memory,
            registrations: Registrations::default(),
            queues: HandleTable::default(),
            events: HandleTable::default(),
            programs: HandleTable::default(),
            symbols: HandleTable::default(),
            retired: Default::default(),
            profile: Default::default(),
        })
    }

    /// Finishes outstanding work and releases every resource.
    pub fn shut_down(&self) {
        let queues = self.queues.drain();
        let retired = std::mem::take(&mut *self.retired.lock());
        let live = queues.iter().map(|q| q.stream.clone());
        for stream in live.chain(retired) {
            // Errors were the queues' to report; shutdown only waits.
            let _ = stream.synchronize();
        }
        self.profile.write();
        self.symbols.drain();
        self.programs.drain();
        self.events.drain();
        drop(queues);
        self.memory.shutdown();
    }

    #[inline]
    pub fn platform_by_handle(&self, handle: usize) -> Option<&Arc<Platform>> {
        self.platforms.iter().find(|p| p.handle() == handle)
    }

    #[inline]
    pub fn device_by_handle(&self, handle: usize) -> Option<&Arc<Device>> {
        self.devices.iter().find(|d| d.handle() == handle)
    }

    /// The device of the host platform (names host memory in copies).
    pub fn host_device(&self) -> &Arc<Device> {
        self.devices
            .iter()
            .rev()
            .find(|d| d.is_host())
            .expect("the host platform always has its device")
    }
}
