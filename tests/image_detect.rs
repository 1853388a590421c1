//! Format detection and the refusals: bitcode (JIT-free library) and unknown bytes.

mod image_support;

use image_support::fixture;
use offload::image::{detect_format, identify, select_for, DeviceTarget, ImageFormat};
use offload::plugin::foundation::error::ErrorCode;

#[test]
fn fixtures_are_detected() {
    for (name, format) in [
        ("amdgpu_gfx1030.co", ImageFormat::Elf),
        ("host_x86_64.so", ImageFormat::Elf),
        ("cuda_sm_80.ptx", ImageFormat::CudaPtx),
        ("host_lib.bc", ImageFormat::LlvmBitcode),
        ("multi.offload", ImageFormat::OffloadBinary),
    ] {
        assert_eq!(detect_format(&fixture(name)), format, "{name}");
    }
    assert_eq!(
        detect_format(&image_support::crafted_fatbin()),
        ImageFormat::CudaFatbin
    );
}

#[test]
fn bitcode_is_refused_because_the_library_is_jit_free() {
    let raw = fixture("host_lib.bc");
    let mut wrapped = Vec::new();
    for v in [0x0B17_C0DEu32, 0, 20, raw.len() as u32, 0x0100_0007] {
        wrapped.extend_from_slice(&v.to_le_bytes());
    }
    wrapped.extend_from_slice(&raw);
    for image in [&raw, &wrapped] {
        for err in [
            identify(image).unwrap_err(),
            select_for(image, &DeviceTarget::host()).unwrap_err(),
        ] {
            assert_eq!(err.code, ErrorCode::InvalidBinary);
            assert!(
                err.details.contains("JIT-free") && err.details.contains("compile"),
                "{}",
                err.details
            );
        }
    }
}

#[test]
fn unknown_bytes_show_their_first_16_in_hex() {
    let junk: Vec<u8> = (0u8..40).collect();
    let err = identify(&junk).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidBinary);
    assert!(
        err.details.starts_with("unrecognised image"),
        "{}",
        err.details
    );
    assert!(
        err.details
            .contains("[00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f ...]"),
        "{}",
        err.details
    );
    let err = select_for(b"MZ", &DeviceTarget::cuda(80)).unwrap_err();
    assert!(err.details.contains("[4d 5a]"), "{}", err.details);
    assert!(identify(b"").unwrap_err().details.contains("empty"));
}
