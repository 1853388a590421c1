//! Backend-neutral value types shared by the plugin interface and the runtime.
//! Numeric values match the C header's enumerators.

use crate::plugin::foundation::c_enum::c_enum;

c_enum! {
    /// `ol_platform_backend_t`.
    pub enum Backend {
        Unknown = 0,
        Cuda = 1,
        Amdgpu = 2,
        LevelZero = 3,
        Host = 4,
        Mpi = EXTENSION_BASE,
    }
}

c_enum! {
    /// `ol_device_type_t`.
    pub enum DeviceType {
        Default = 0,
        All = 1,
        Gpu = 2,
        Cpu = 3,
        Host = 4,
    }
}

c_enum! {
    /// `ol_alloc_type_t`.
    pub enum AllocKind {
        Host = 0,
        Device = 1,
        Managed = 2,
    }
}

/// `ol_device_info_t`: LLVM 22.1's keys in the header's order, then our extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum DeviceInfo {
    Type = 0,
    Platform,
    Name,
    ProductName,
    Uid,
    Vendor,
    DriverVersion,
    MaxWorkGroupSize,
    MaxWorkGroupSizePerDimension,
    MaxWorkSize,
    MaxWorkSizePerDimension,
    VendorId,
    NumComputeUnits,
    MaxClockFrequency,
    MemoryClockRate,
    AddressBits,
    MaxMemAllocSize,
    GlobalMemSize,
    WorkGroupLocalMemSize,
    SingleFpConfig,
    DoubleFpConfig,
    HalfFpConfig,
    NativeVectorWidthChar,
    NativeVectorWidthShort,
    NativeVectorWidthInt,
    NativeVectorWidthLong,
    NativeVectorWidthFloat,
    NativeVectorWidthDouble,
    NativeVectorWidthHalf,
    /// Extension (0x10000).
    NumLanes = EXTENSION_BASE,
    /// Extension (0x10001): the vendor's own device handle (a `CUdevice`, an
    /// `hsa_agent_t`), for programs that hand it to the vendor's libraries.
    NativeHandle = EXTENSION_BASE + 1,
    /// Extension (0x10002): the vendor's context the device's work runs in (CUDA's
    /// primary `CUcontext`).
    NativeContext = EXTENSION_BASE + 2,
}

/// The first value of our extension enumerators in LLVM's enumerations (API.md).
pub const EXTENSION_BASE: u32 = 0x10000;

impl DeviceInfo {
    /// LLVM's keys, indexed by value.
    const LLVM: [DeviceInfo; 29] = [
        DeviceInfo::Type,
        DeviceInfo::Platform,
        DeviceInfo::Name,
        DeviceInfo::ProductName,
        DeviceInfo::Uid,
        DeviceInfo::Vendor,
        DeviceInfo::DriverVersion,
        DeviceInfo::MaxWorkGroupSize,
        DeviceInfo::MaxWorkGroupSizePerDimension,
        DeviceInfo::MaxWorkSize,
        DeviceInfo::MaxWorkSizePerDimension,
        DeviceInfo::VendorId,
        DeviceInfo::NumComputeUnits,
        DeviceInfo::MaxClockFrequency,
        DeviceInfo::MemoryClockRate,
        DeviceInfo::AddressBits,
        DeviceInfo::MaxMemAllocSize,
        DeviceInfo::GlobalMemSize,
        DeviceInfo::WorkGroupLocalMemSize,
        DeviceInfo::SingleFpConfig,
        DeviceInfo::DoubleFpConfig,
        DeviceInfo::HalfFpConfig,
        DeviceInfo::NativeVectorWidthChar,
        DeviceInfo::NativeVectorWidthShort,
        DeviceInfo::NativeVectorWidthInt,
        DeviceInfo::NativeVectorWidthLong,
        DeviceInfo::NativeVectorWidthFloat,
        DeviceInfo::NativeVectorWidthDouble,
        DeviceInfo::NativeVectorWidthHalf,
    ];

    /// Our keys, from `EXTENSION_BASE` up.
    const EXTENSIONS: [DeviceInfo; 3] = [
        DeviceInfo::NumLanes,
        DeviceInfo::NativeHandle,
        DeviceInfo::NativeContext,
    ];

    /// How many keys there are, LLVM's and ours.
    pub const COUNT: usize = Self::LLVM.len() + Self::EXTENSIONS.len();

    /// Every key, LLVM's then ours.
    pub fn all() -> impl Iterator<Item = DeviceInfo> {
        Self::LLVM.into_iter().chain(Self::EXTENSIONS)
    }

    /// The key's position in `all()`, below `COUNT`.
    pub fn index(self) -> usize {
        let value = self as u32;
        if value >= EXTENSION_BASE {
            Self::LLVM.len() + (value - EXTENSION_BASE) as usize
        } else {
            value as usize
        }
    }

    /// A handle of the vendor's, which means something in this process only.
    pub fn is_native(self) -> bool {
        matches!(self, DeviceInfo::NativeHandle | DeviceInfo::NativeContext)
    }
}

impl TryFrom<u32> for DeviceInfo {
    type Error = u32;
    fn try_from(v: u32) -> Result<Self, u32> {
        match v.checked_sub(EXTENSION_BASE) {
            Some(extension) => DeviceInfo::EXTENSIONS
                .get(extension as usize)
                .copied()
                .ok_or(v),
            None => DeviceInfo::LLVM.get(v as usize).copied().ok_or(v),
        }
    }
}

/// The value of an info query, before it is written to the caller's buffer.
#[derive(Clone, Debug, PartialEq)]
pub enum InfoValue {
    /// Written NUL-terminated.
    Str(String),
    U32(u32),
    U64(u64),
    Usize(usize),
    Bool(bool),
    /// `ol_dimensions_t`.
    Dims([u32; 3]),
    /// An opaque handle (a pointer-sized value).
    Handle(usize),
}

impl InfoValue {
    /// Bytes the value needs in the caller's buffer.
    pub fn size(&self) -> usize {
        match self {
            InfoValue::Str(s) => s.len() + 1,
            InfoValue::U32(_) => 4,
            InfoValue::U64(_) => 8,
            InfoValue::Usize(_) | InfoValue::Handle(_) => std::mem::size_of::<usize>(),
            InfoValue::Bool(_) => 1,
            InfoValue::Dims(_) => 12,
        }
    }

    /// Calls `f` with the value as the bytes C expects (native endianness, strings
    /// NUL-terminated). Scalars stay on the stack: info queries are a hot path.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let mut scalar = [0u8; 16];
        let n = match self {
            InfoValue::Str(s) => {
                let mut v = Vec::with_capacity(s.len() + 1);
                v.extend_from_slice(s.as_bytes());
                v.push(0);
                return f(&v);
            }
            InfoValue::U32(x) => put(&mut scalar, &x.to_ne_bytes()),
            InfoValue::U64(x) => put(&mut scalar, &x.to_ne_bytes()),
            InfoValue::Usize(x) | InfoValue::Handle(x) => put(&mut scalar, &x.to_ne_bytes()),
            InfoValue::Bool(b) => put(&mut scalar, &[*b as u8]),
            InfoValue::Dims(d) => {
                for (i, x) in d.iter().enumerate() {
                    scalar[i * 4..i * 4 + 4].copy_from_slice(&x.to_ne_bytes());
                }
                12
            }
        };
        f(&scalar[..n])
    }
}

fn put(buf: &mut [u8; 16], bytes: &[u8]) -> usize {
    buf[..bytes.len()].copy_from_slice(bytes);
    bytes.len()
}
