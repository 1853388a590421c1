//! Platforms (one per backend) and their devices, as the runtime sees them.

use crate::plugin::foundation::c_enum::c_enum;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{self, Backend, DeviceInfo, DeviceType, InfoValue};
use crate::runtime::handle_table::new_handle;
use std::sync::{Arc, OnceLock};

c_enum! {
    /// `ol_platform_info_t`, in the header's order.
    pub enum PlatformInfo {
        Name = 0,
        VendorName = 1,
        Version = 2,
        Backend = 3,
    }
}

pub struct Platform {
    /// The value of the handle that names this platform (unique in the process).
    pub handle: usize,
    pub index: usize,
    pub backend: Backend,
    /// The answers to NAME, VENDOR_NAME, VERSION and BACKEND, in that order.
    answers: [InfoValue; 4],
    /// Indices into `Runtime::devices`.
    pub device_indices: Vec<usize>,
}

impl Platform {
    pub fn new(index: usize, plugin: &dyn plugin::Plugin, device_indices: Vec<usize>) -> Self {
        Platform {
            handle: new_handle(),
            index,
            backend: plugin.backend(),
            answers: [
                InfoValue::Str(plugin.name()),
                InfoValue::Str(plugin.vendor()),
                InfoValue::Str(plugin.version()),
                InfoValue::U32(plugin.backend() as u32),
            ],
            device_indices,
        }
    }

    pub fn handle(&self) -> usize {
        self.handle
    }

    pub fn info(&self, key: PlatformInfo) -> &InfoValue {
        &self.answers[key as usize]
    }
}

pub struct Device {
    /// The value of the handle that names this device (unique in the process).
    pub handle: usize,
    /// Position in `Runtime::devices`; also the memory manager's device number.
    pub index: usize,
    pub platform: Arc<Platform>,
    pub imp: Arc<dyn plugin::Device>,
    pub device_type: DeviceType,
    /// Each info answer, asked of the backend once: every key is a fixed property of the
    /// device, and a query is then a table read (callers poll them in loops).
    info_answers: [OnceLock<Result<InfoValue>>; DeviceInfo::COUNT],
    /// What a launch may ask of the device, from those answers (read at every launch).
    launch_limits: OnceLock<plugin::LaunchLimits>,
}

impl Device {
    pub fn handle(&self) -> usize {
        self.handle
    }

    pub fn is_host(&self) -> bool {
        self.platform.backend == Backend::Host
    }

    /// A short description for messages: "device 1 (AMDGPU gfx90a)".
    pub fn describe(&self) -> String {
        let name = match self.imp.info(DeviceInfo::Name) {
            Ok(InfoValue::Str(s)) => s,
            _ => String::from("unnamed"),
        };
        format!(
            "device {} ({:?} platform, {name})",
            self.index, self.platform.backend
        )
    }

    pub fn new(
        index: usize,
        platform: Arc<Platform>,
        imp: Arc<dyn plugin::Device>,
        device_type: DeviceType,
    ) -> Self {
        Device {
            handle: new_handle(),
            index,
            platform,
            imp,
            device_type,
            info_answers: std::array::from_fn(|_| OnceLock::new()),
            launch_limits: OnceLock::new(),
        }
    }

    /// The answer to an info query (the backend is asked once per key).
    pub fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        self.info_ref(key).clone()
    }

    /// What a launch may ask of this device (its info answers, read once).
    #[inline]
    pub fn launch_limits(&self) -> plugin::LaunchLimits {
        *self
            .launch_limits
            .get_or_init(|| plugin::LaunchLimits::from_info(|key| self.info(key)))
    }

    /// `info` without a copy, for the C API's hot path.
    #[inline]
    pub fn info_ref(&self, key: DeviceInfo) -> &Result<InfoValue> {
        self.info_answers[key.index()].get_or_init(|| self.ask_backend(key))
    }

    fn ask_backend(&self, key: DeviceInfo) -> Result<InfoValue> {
        match key {
            DeviceInfo::Type => Ok(InfoValue::U32(self.device_type as u32)),
            DeviceInfo::Platform => Ok(InfoValue::Handle(self.platform.handle())),
            _ => self
                .imp
                .info(key)
                .map_err(|e| Error::new(e.code, format!("{} on {}", e.details, self.describe()))),
        }
    }
}
