//! The target of an AMDGPU code object from its ELF header: processor (`EF_AMDGPU_MACH`),
//! xnack and sramecc settings, and code-object version (`EI_ABIVERSION`).

use std::fmt;

use super::elf::ElfHeader;

/// `ELFOSABI_AMDGPU_HSA`: the only OS ABI whose code objects the HSA runtime loads.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;

/// `EF_AMDGPU_MACH_*` values and the processor names LLVM gives them.
const MACHS: &[(u32, &str)] = &[
    (0x020, "gfx600"),
    (0x021, "gfx601"),
    (0x022, "gfx700"),
    (0x023, "gfx701"),
    (0x024, "gfx702"),
    (0x025, "gfx703"),
    (0x026, "gfx704"),
    (0x028, "gfx801"),
    (0x029, "gfx802"),
    (0x02a, "gfx803"),
    (0x02b, "gfx810"),
    (0x02c, "gfx900"),
    (0x02d, "gfx902"),
    (0x02e, "gfx904"),
    (0x02f, "gfx906"),
    (0x030, "gfx908"),
    (0x031, "gfx909"),
    (0x032, "gfx90c"),
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03a, "gfx602"),
    (0x03b, "gfx705"),
    (0x03c, "gfx805"),
    (0x03d, "gfx1035"),
    (0x03e, "gfx1034"),
    (0x03f, "gfx90a"),
    (0x040, "gfx940"),
    (0x041, "gfx1100"),
    (0x042, "gfx1013"),
    (0x043, "gfx1150"),
    (0x044, "gfx1103"),
    (0x045, "gfx1036"),
    (0x046, "gfx1101"),
    (0x047, "gfx1102"),
    (0x048, "gfx1200"),
    (0x04a, "gfx1151"),
    (0x04b, "gfx941"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x051, "gfx9-generic"),
    (0x052, "gfx10-1-generic"),
    (0x053, "gfx10-3-generic"),
    (0x054, "gfx11-generic"),
    (0x055, "gfx1152"),
    (0x059, "gfx12-generic"),
];

/// Processors each generic target runs on (LLVM 19's AMDGPUUsage), each with the lowest
/// generic version whose code runs on it. Every member accepts version 1 today; a
/// processor added to a family later would need the version that added it.
const GENERIC_MEMBERS: &[(&str, &[(&str, u32)])] = &[
    (
        "gfx9-generic",
        &[
            ("gfx900", 1),
            ("gfx902", 1),
            ("gfx904", 1),
            ("gfx906", 1),
            ("gfx909", 1),
            ("gfx90c", 1),
        ],
    ),
    (
        "gfx10-1-generic",
        &[
            ("gfx1010", 1),
            ("gfx1011", 1),
            ("gfx1012", 1),
            ("gfx1013", 1),
        ],
    ),
    (
        "gfx10-3-generic",
        &[
            ("gfx1030", 1),
            ("gfx1031", 1),
            ("gfx1032", 1),
            ("gfx1033", 1),
            ("gfx1034", 1),
            ("gfx1035", 1),
            ("gfx1036", 1),
        ],
    ),
    (
        "gfx11-generic",
        &[
            ("gfx1100", 1),
            ("gfx1101", 1),
            ("gfx1102", 1),
            ("gfx1103", 1),
            ("gfx1150", 1),
            ("gfx1151", 1),
            ("gfx1152", 1),
        ],
    ),
    ("gfx12-generic", &[("gfx1200", 1), ("gfx1201", 1)]),
];

/// The processor name for an `EF_AMDGPU_MACH` value.
pub fn processor_name(mach: u32) -> Option<&'static str> {
    MACHS.iter().find(|(v, _)| *v == mach).map(|(_, n)| *n)
}

/// The processors code for a generic target runs on; `None` for a specific processor.
pub fn generic_members(generic: &str) -> Option<Vec<&'static str>> {
    GENERIC_MEMBERS
        .iter()
        .find(|(g, _)| *g == generic)
        .map(|(_, members)| members.iter().map(|(p, _)| *p).collect())
}

/// True when code for `image_processor` runs on a `device_processor` (by name alone:
/// the same processor, or a member of the image's generic family).
pub fn processor_runs_on(image_processor: &str, device_processor: &str) -> bool {
    image_processor == device_processor
        || generic_members(image_processor).is_some_and(|m| m.contains(&device_processor))
}

/// How a code object uses a target feature (xnack, sramecc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    /// The processor has no such mode (or the code-object version cannot say).
    Unsupported,
    /// Runs with the mode on or off.
    Any,
    Off,
    On,
}

impl FeatureSetting {
    /// Whether code with this setting runs on a device whose mode is `device`
    /// (`None`: the device has no such mode).
    pub fn runs_with(self, device: Option<bool>) -> bool {
        match self {
            FeatureSetting::Unsupported | FeatureSetting::Any => true,
            FeatureSetting::On => device == Some(true),
            FeatureSetting::Off => device == Some(false),
        }
    }
}

/// What an AMDGPU code object was built for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdgpuTarget {
    /// `gfx90a`, `gfx1030`, `gfx11-generic`, or `unknown-mach-0xNN`.
    pub processor: String,
    pub xnack: FeatureSetting,
    pub sramecc: FeatureSetting,
    /// Code-object version 2 to 6, from `EI_ABIVERSION`.
    pub code_object_version: u32,
    /// For generic processors (v6), the generic version from `e_flags`.
    pub generic_version: Option<u32>,
}

impl AmdgpuTarget {
    pub fn from_header(h: &ElfHeader) -> AmdgpuTarget {
        let flags = h.flags;
        let mach = flags & 0xff;
        // HSA ABI version 0 is code-object v2, 1 is v3, and so on.
        let code_object_version = u32::from(h.abi_version) + 2;
        let (xnack, sramecc) = match code_object_version {
            2 => (bit(flags, 0x01), FeatureSetting::Unsupported),
            3 => (bit(flags, 0x100), bit(flags, 0x200)),
            _ => (
                four_state(flags & 0x300, 0x100, 0x200, 0x300),
                four_state(flags & 0xc00, 0x400, 0x800, 0xc00),
            ),
        };
        let generic = (flags >> 24) & 0xff;
        AmdgpuTarget {
            processor: processor_name(mach)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("unknown-mach-{mach:#x}")),
            xnack,
            sramecc,
            code_object_version,
            generic_version: (code_object_version >= 6 && generic != 0).then_some(generic),
        }
    }
}

fn bit(flags: u32, mask: u32) -> FeatureSetting {
    if flags & mask != 0 {
        FeatureSetting::On
    } else {
        FeatureSetting::Off
    }
}

fn four_state(v: u32, any: u32, off: u32, on: u32) -> FeatureSetting {
    match v {
        x if x == any => FeatureSetting::Any,
        x if x == off => FeatureSetting::Off,
        x if x == on => FeatureSetting::On,
        _ => FeatureSetting::Unsupported,
    }
}

/// `hsa_isa_get_info`'s name of a device ISA, `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`
/// (or the bare target id): the processor and its xnack and sramecc modes, `None` where
/// the name does not mention one (the processor has no such mode).
pub fn parse_target_id(isa_name: &str) -> (String, Option<bool>, Option<bool>) {
    let id = isa_name
        .strip_prefix("amdgcn-amd-amdhsa--")
        .unwrap_or(isa_name)
        .trim_end_matches('\0');
    let mut parts = id.split(':');
    let processor = parts.next().unwrap_or_default().to_owned();
    let (mut xnack, mut sramecc) = (None, None);
    for feature in parts {
        let on = match feature.as_bytes().last() {
            Some(b'+') => true,
            Some(b'-') => false,
            _ => continue,
        };
        match &feature[..feature.len() - 1] {
            "xnack" => xnack = Some(on),
            "sramecc" => sramecc = Some(on),
            _ => {}
        }
    }
    (processor, xnack, sramecc)
}

impl AmdgpuTarget {
    /// Why code for this target cannot run on a device (processor and modes), as the end
    /// of a sentence; `None` when it can.
    pub fn why_not_on(
        &self,
        device_processor: &str,
        xnack: Option<bool>,
        sramecc: Option<bool>,
    ) -> Option<String> {
        if let Some(why) = self.processor_mismatch(device_processor) {
            return Some(why);
        }
        if !self.xnack.runs_with(xnack) {
            return Some(feature_why("xnack", self.xnack, xnack));
        }
        if !self.sramecc.runs_with(sramecc) {
            return Some(feature_why("sramecc", self.sramecc, sramecc));
        }
        None
    }

    fn processor_mismatch(&self, device: &str) -> Option<String> {
        let image = self.processor.as_str();
        if let Some(mach) = image.strip_prefix("unknown-mach-") {
            return Some(format!(
                "the image's processor (EF_AMDGPU_MACH {mach}) is not one this library knows \
                 (it knows LLVM 19's)"
            ));
        }
        let Some((_, members)) = GENERIC_MEMBERS.iter().find(|(g, _)| *g == image) else {
            return (image != device)
                .then(|| format!("code built for {image} runs only on {image}"));
        };
        let names: Vec<&str> = members.iter().map(|(p, _)| *p).collect();
        let Some((_, min_version)) = members.iter().find(|(p, _)| *p == device) else {
            return Some(format!(
                "{image} code runs only on {}, not on {device}",
                names.join(", ")
            ));
        };
        // Generic code objects exist from v6 on and must say their generic version
        // (e_flags bits 24-31); the HSA loader refuses them otherwise, and so do we.
        match self.generic_version {
            None if self.code_object_version < 6 => Some(format!(
                "a generic target ({image}) needs code object v6 or newer, the image is v{}",
                self.code_object_version
            )),
            None => Some(format!(
                "the {image} code object carries no generic version (EF_AMDGPU_GENERIC_VERSION \
                 is 0; it must be 1 or more)"
            )),
            Some(v) if v < *min_version => Some(format!(
                "{device} runs {image} code of generic version {min_version} or newer, the \
                 image is version {v}"
            )),
            Some(_) => None,
        }
    }
}

fn feature_why(name: &str, image: FeatureSetting, device: Option<bool>) -> String {
    let want = if image == FeatureSetting::On {
        "on"
    } else {
        "off"
    };
    let have = match device {
        Some(true) => format!("has {name} on"),
        Some(false) => format!("has {name} off"),
        None => format!("has no {name} mode"),
    };
    format!("the image needs {name} {want}, the device {have}")
}

/// The LLVM target-id spelling: `gfx90a:sramecc-:xnack+` (features only when on or off).
impl fmt::Display for AmdgpuTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.processor)?;
        for (name, setting) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            match setting {
                FeatureSetting::On => write!(f, ":{name}+")?,
                FeatureSetting::Off => write!(f, ":{name}-")?,
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_targets_cover_their_members() {
        assert!(processor_runs_on("gfx10-3-generic", "gfx1030"));
        assert!(!processor_runs_on("gfx10-3-generic", "gfx90a"));
        assert!(processor_runs_on("gfx90a", "gfx90a"));
        assert!(!processor_runs_on("gfx90a", "gfx908"));
        assert!(!processor_runs_on("gfx9-generic", "gfx90a"));
        assert!(generic_members("gfx90a").is_none());
    }

    #[test]
    fn isa_names() {
        assert_eq!(
            parse_target_id("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-\0"),
            ("gfx90a".to_owned(), Some(false), Some(true))
        );
        assert_eq!(
            parse_target_id("gfx1030"),
            ("gfx1030".to_owned(), None, None)
        );
        assert_eq!(parse_target_id(""), (String::new(), None, None));
    }

    #[test]
    fn feature_rules() {
        assert!(FeatureSetting::Any.runs_with(Some(true)));
        assert!(FeatureSetting::On.runs_with(Some(true)));
        assert!(!FeatureSetting::On.runs_with(Some(false)));
        assert!(!FeatureSetting::Off.runs_with(None));
        assert!(FeatureSetting::Unsupported.runs_with(None));
    }
}
