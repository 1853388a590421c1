//! LLVM OffloadBinary containers: clang-19's version 1 (single and concatenated), a crafted
//! version 2 with several entries, and the binaries embedded in host objects.

mod image_support;

use image_support::{crafted_offload_binary_v2, fixture};
use offload::image::{
    embedded_offload_binaries, identify, parse_offload_binaries, select_for, DeviceTarget,
    ElfFileType, ImageInfo, LoadableKind, OffloadImageKind, OffloadKind,
};

#[test]
fn openmp_offload_section_holds_one_x86_64_object() {
    let bytes = fixture("omp_x86_64.offload");
    let ImageInfo::OffloadBinary(entries) = identify(&bytes).unwrap() else {
        panic!()
    };
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(e.version, 1);
    assert_eq!(e.image_kind, OffloadImageKind::Object);
    assert_eq!(e.offload_kind, OffloadKind(OffloadKind::OPENMP));
    assert_eq!(e.triple(), "x86_64-pc-linux-gnu");
    let ImageInfo::HostElf(inner) = identify(&bytes[e.image_range.clone()]).unwrap() else {
        panic!()
    };
    assert_eq!(inner.header.file_type, ElfFileType::Relocatable);
    // A relocatable device image is not loadable: the error explains the entry and why.
    let err = select_for(&bytes, &DeviceTarget::host()).unwrap_err();
    assert!(
        err.details.contains("entry 0") && err.details.contains("ET_REL"),
        "{}",
        err.details
    );
}

#[test]
fn concatenated_binaries_pick_the_image_the_device_runs() {
    let bytes = fixture("multi.offload");
    let entries = parse_offload_binaries(&bytes).unwrap();
    let arches: Vec<_> = entries.iter().map(|e| (e.triple(), e.arch())).collect();
    assert_eq!(
        arches,
        [
            ("amdgcn-amd-amdhsa", "gfx90a:xnack+"),
            ("amdgcn-amd-amdhsa", "gfx1030"),
            ("x86_64-pc-linux-gnu", "generic")
        ]
    );
    assert!(entries
        .iter()
        .all(|e| e.image_kind == OffloadImageKind::Object && e.version == 1));

    let gfx1030 = select_for(&bytes, &DeviceTarget::amdgpu("gfx1030", None, None)).unwrap();
    assert_eq!(gfx1030.kind, LoadableKind::AmdgpuCodeObject);
    assert_eq!(gfx1030.range, entries[1].image_range);
    assert_eq!(gfx1030.bytes(&bytes), &fixture("amdgpu_gfx1030.co")[..]);

    let gfx90a = select_for(
        &bytes,
        &DeviceTarget::amdgpu("gfx90a", Some(true), Some(false)),
    )
    .unwrap();
    assert_eq!(
        gfx90a.bytes(&bytes),
        &fixture("amdgpu_gfx90a_xnack_on.co")[..]
    );

    if cfg!(target_arch = "x86_64") {
        let host = select_for(&bytes, &DeviceTarget::host()).unwrap();
        assert_eq!(host.kind, LoadableKind::HostSharedObject);
        assert_eq!(host.bytes(&bytes), &fixture("host_x86_64.so")[..]);
    }

    let err = select_for(
        &bytes,
        &DeviceTarget::amdgpu("gfx90a", Some(false), None).with_label("device 3"),
    )
    .unwrap_err();
    assert!(
        err.details.contains("none of which runs on device 3"),
        "{}",
        err.details
    );
    assert!(err.details.contains("xnack"), "{}", err.details);
}

#[test]
fn version_2_with_several_entries() {
    let bytes = crafted_offload_binary_v2();
    let entries = parse_offload_binaries(&bytes).unwrap();
    assert_eq!(entries.len(), 3);
    assert!(entries.iter().all(|e| e.version == 2));
    assert_eq!(entries[0].arch(), "gfx1030");
    assert_eq!(entries[1].image_kind, OffloadImageKind::Cubin);
    assert_eq!(entries[2].image_kind, OffloadImageKind::Ptx);

    let sm90 = select_for(&bytes, &DeviceTarget::cuda(90)).unwrap();
    assert_eq!(
        (sm90.kind, sm90.range.clone()),
        (LoadableKind::Cubin, entries[1].image_range.clone())
    );
    let sm86 = select_for(&bytes, &DeviceTarget::cuda(86)).unwrap();
    assert_eq!(
        (sm86.kind, sm86.range.clone()),
        (LoadableKind::Ptx, entries[2].image_range.clone())
    );
    assert!(select_for(&bytes, &DeviceTarget::amdgpu("gfx1030", None, None)).is_ok());
}

#[test]
fn embedded_in_a_linked_openmp_program() {
    let so = fixture("omp_x86_64_host.so");
    let sections = embedded_offload_binaries(&so).unwrap();
    assert_eq!(sections.len(), 1);
    let (range, entries) = &sections[0];
    assert!(range.end <= so.len());
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].triple(), "x86_64-pc-linux-gnu");
    // The linker wrapper leaves a linked device image: the host device can load it.
    if cfg!(target_arch = "x86_64") {
        let chosen = select_for(&so[range.clone()], &DeviceTarget::host()).unwrap();
        assert_eq!(chosen.kind, LoadableKind::HostSharedObject);
    }
    // A relocatable host object embeds the same kind of section.
    let obj = embedded_offload_binaries(&fixture("omp_x86_64_host.o")).unwrap();
    assert_eq!(obj.len(), 1);
    assert_eq!(
        &fixture("omp_x86_64_host.o")[obj[0].0.clone()],
        &fixture("omp_x86_64.offload")[..]
    );
}

#[test]
fn bad_headers_are_errors() {
    let mut bytes = fixture("omp_x86_64.offload");
    bytes[4] = 9; // version 9
    let err = parse_offload_binaries(&bytes).unwrap_err();
    assert!(err.details.contains("version 9"), "{}", err.details);
    let mut bytes = fixture("omp_x86_64.offload");
    bytes[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(parse_offload_binaries(&bytes).is_err());
}
