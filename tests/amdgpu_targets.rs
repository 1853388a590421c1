//! Which AMD GPUs a code object runs on: the processor (a specific one, or a member of a
//! generic family with a high enough generic version), and the xnack / sramecc modes
//! (any, on, off). Code objects from tests/fixtures/kernarg/ (clang-19), some with their
//! ELF flags edited to make the cases clang will not write.

use offload::image::{parse_target_id, select_for, DeviceTarget, LoadableKind};
use offload::plugin::foundation::error::ErrorCode;

fn load(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/kernarg/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// ELF64 `e_flags` and `EI_ABIVERSION`.
const E_FLAGS: usize = 48;
const EI_ABIVERSION: usize = 8;

fn with_flags(mut image: Vec<u8>, edit: impl FnOnce(u32) -> u32) -> Vec<u8> {
    let old = u32::from_le_bytes(image[E_FLAGS..E_FLAGS + 4].try_into().unwrap());
    image[E_FLAGS..E_FLAGS + 4].copy_from_slice(&edit(old).to_le_bytes());
    image
}

fn gpu(processor: &str, xnack: Option<bool>, sramecc: Option<bool>) -> DeviceTarget {
    DeviceTarget::amdgpu(processor, xnack, sramecc).with_label("device 0")
}

fn runs(image: &[u8], device: &DeviceTarget) -> bool {
    match select_for(image, device) {
        Ok(chosen) => {
            assert_eq!(chosen.kind, LoadableKind::AmdgpuCodeObject);
            true
        }
        Err(e) => {
            assert_eq!(e.code, ErrorCode::InvalidBinary, "{}", e.details);
            false
        }
    }
}

fn refusal(image: &[u8], device: &DeviceTarget) -> String {
    let e = select_for(image, device).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidBinary);
    e.details.clone()
}

#[test]
fn a_specific_processor_runs_only_on_itself() {
    let gfx1030 = load("gfx1030_v5.co");
    assert!(runs(&gfx1030, &gpu("gfx1030", None, None)));
    let d = refusal(&gfx1030, &gpu("gfx90a", Some(false), Some(true)));
    assert_eq!(
        d,
        "image is an AMDGPU code object for gfx1030 (code object v5); device 0 is an AMD \
         GPU gfx90a:sramecc+:xnack-: code built for gfx1030 runs only on gfx1030"
    );
    assert!(!runs(&gfx1030, &gpu("gfx1031", None, None)));
    // A processor newer than LLVM 19 (EF_AMDGPU_MACH 0x5f) is named as unknown.
    let unknown = with_flags(gfx1030.clone(), |f| (f & !0xff) | 0x5f);
    let d = refusal(&unknown, &gpu("gfx1030", None, None));
    assert!(
        d.ends_with("(EF_AMDGPU_MACH 0x5f) is not one this library knows (it knows LLVM 19's)"),
        "{d}"
    );
    let gfx90a = load("gfx90a_v4.co");
    let d = refusal(&gfx90a, &gpu("gfx908", Some(false), Some(false)));
    assert!(
        d.ends_with("code built for gfx90a runs only on gfx90a"),
        "{d}"
    );
}

#[test]
fn xnack_and_sramecc_any_on_off() {
    // Built without a mode: any.
    let any = load("gfx90a_v4.co");
    for xnack in [true, false] {
        for sramecc in [true, false] {
            assert!(runs(&any, &gpu("gfx90a", Some(xnack), Some(sramecc))));
        }
    }
    // gfx90a:xnack+ runs only with xnack on; its sramecc is any.
    let on = load("gfx90a_xnackon_v5.co");
    assert!(runs(&on, &gpu("gfx90a", Some(true), Some(false))));
    assert!(runs(&on, &gpu("gfx90a", Some(true), Some(true))));
    let d = refusal(&on, &gpu("gfx90a", Some(false), Some(true)));
    assert!(
        d.ends_with("the image needs xnack on, the device has xnack off"),
        "{d}"
    );
    // xnack off (e_flags 0x200) and sramecc on (0xc00), edited into the v4 object.
    let off_ecc = with_flags(any.clone(), |f| (f & !0xf00) | 0x200 | 0xc00);
    assert!(runs(&off_ecc, &gpu("gfx90a", Some(false), Some(true))));
    let d = refusal(&off_ecc, &gpu("gfx90a", Some(true), Some(true)));
    assert!(
        d.ends_with("needs xnack off, the device has xnack on"),
        "{d}"
    );
    let d = refusal(&off_ecc, &gpu("gfx90a", Some(false), Some(false)));
    assert!(
        d.ends_with("needs sramecc on, the device has sramecc off"),
        "{d}"
    );
    let d = refusal(&off_ecc, &gpu("gfx90a", Some(false), None));
    assert!(d.ends_with("the device has no sramecc mode"), "{d}");
    // gfx1030 has neither mode: the device's (absent) modes do not matter.
    assert!(runs(&load("gfx1030_v5.co"), &gpu("gfx1030", None, None)));
}

#[test]
fn generic_code_runs_on_its_family() {
    let families: &[(&str, &[&str], &[&str])] = &[
        (
            "gfx9-generic_v6.co",
            &["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"],
            &["gfx908", "gfx90a", "gfx942", "gfx1030"],
        ),
        (
            "gfx10-3-generic_v6.co",
            &[
                "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
            ],
            &["gfx1010", "gfx1100", "gfx90a"],
        ),
        (
            "gfx11-generic_v6.co",
            &[
                "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152",
            ],
            &["gfx1036", "gfx1200"],
        ),
        (
            "gfx12-generic_v6.co",
            &["gfx1200", "gfx1201"],
            &["gfx1100", "gfx1151"],
        ),
    ];
    for (file, members, others) in families {
        let image = load(file);
        for m in *members {
            // gfx9 parts have xnack (and gfx906 sramecc); the image's modes are any.
            assert!(runs(&image, &gpu(m, Some(false), None)), "{file} on {m}");
            assert!(
                runs(&image, &gpu(m, Some(true), Some(true))),
                "{file} on {m}"
            );
        }
        for o in *others {
            let d = refusal(&image, &gpu(o, None, None));
            assert!(
                d.contains(&format!("code runs only on {}", members.join(", ")))
                    && d.ends_with(&format!("not on {o}")),
                "{file} on {o}: {d}"
            );
        }
    }
}

#[test]
fn generic_version_rule() {
    let image = load("gfx10-3-generic_v6.co");
    let gfx1031 = gpu("gfx1031", None, None);
    // clang-19 writes generic version 1 in e_flags bits 24-31.
    assert_eq!(
        u32::from_le_bytes(image[E_FLAGS..E_FLAGS + 4].try_into().unwrap()) >> 24,
        1
    );
    // A later version still runs (versions only add processors to a family).
    assert!(runs(
        &with_flags(image.clone(), |f| f & 0x00ff_ffff | 7 << 24),
        &gfx1031
    ));
    // Version 0 is not a valid generic code object.
    let d = refusal(&with_flags(image.clone(), |f| f & 0x00ff_ffff), &gfx1031);
    assert!(
        d.contains("device 0 is an AMD GPU gfx1031: the gfx10-3-generic code object carries no generic version"),
        "{d}"
    );
    // Generic targets exist from code object v6 (ABI version 4) on.
    let mut v5 = image.clone();
    v5[EI_ABIVERSION] = 3;
    let d = refusal(&v5, &gfx1031);
    assert!(
        d.contains("needs code object v6 or newer, the image is v5"),
        "{d}"
    );
    // Generic xnack- (e_flags 0x200) on a gfx9 part with xnack on.
    let off = with_flags(load("gfx9-generic_v6.co"), |f| (f & !0x300) | 0x200);
    assert!(runs(&off, &gpu("gfx906", Some(false), Some(true))));
    let d = refusal(&off, &gpu("gfx906", Some(true), Some(true)));
    assert!(
        d.starts_with("image is an AMDGPU code object for gfx9-generic:xnack- (code object v6)")
            && d.ends_with("needs xnack off, the device has xnack on"),
        "{d}"
    );
}

#[test]
fn device_isa_names_give_the_device_target() {
    let (p, xnack, sramecc) = parse_target_id("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+");
    let device = DeviceTarget::amdgpu(p, xnack, sramecc);
    assert!(runs(&load("gfx90a_xnackon_v5.co"), &device));
    let (p, xnack, sramecc) = parse_target_id("amdgcn-amd-amdhsa--gfx1100");
    assert_eq!((p.as_str(), xnack, sramecc), ("gfx1100", None, None));
    assert!(runs(
        &load("gfx11-generic_v6.co"),
        &DeviceTarget::amdgpu(p, xnack, sramecc)
    ));
}
