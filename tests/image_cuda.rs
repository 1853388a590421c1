//! CUDA images: PTX text, cubins (hand-crafted, as ptxas is not installed) and fatbins
//! (hand-crafted per the community-documented layout), and the CUDA compatibility rules.

mod image_support;

use image_support::{crafted_fatbin, fixture};
use offload::image::{
    identify, minimal_cubin, parse_cubin, parse_fatbin, parse_ptx, select_for, write_fatbin,
    FatbinEntryKind, ImageInfo, LoadableKind,
};
use offload::plugin::foundation::error::ErrorCode;

#[test]
fn ptx_fixture_lists_entries_and_params() {
    let ImageInfo::Ptx(ptx) = identify(&fixture("cuda_sm_80.ptx")).unwrap() else {
        panic!()
    };
    assert_eq!(ptx.version, (7, 0));
    assert_eq!(
        (ptx.target.as_str(), ptx.sm, ptx.arch_specific),
        ("sm_80", 80, false)
    );
    assert_eq!(ptx.address_size, Some(64));
    let names: Vec<_> = ptx.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["vector_add", "fill"]);
    let params: Vec<_> = ptx.entries[0]
        .params
        .iter()
        .map(|p| (p.ty.as_str(), p.name.as_str()))
        .collect();
    assert_eq!(
        params,
        [
            (".u64", "vector_add_param_0"),
            (".u64", "vector_add_param_1"),
            (".u64", "vector_add_param_2"),
            (".u32", "vector_add_param_3")
        ]
    );
    assert_eq!(ptx.entries[1].params.len(), 2);
}

#[test]
fn ptx_runs_on_its_sm_and_newer() {
    let ptx = fixture("cuda_sm_80.ptx");
    for sm in [80, 86, 90] {
        let chosen = select_for(&ptx, &offload::image::DeviceTarget::cuda(sm)).unwrap();
        assert_eq!(chosen.kind, LoadableKind::Ptx);
    }
    let err = select_for(
        &ptx,
        &offload::image::DeviceTarget::cuda(75).with_label("device 2"),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidBinary);
    assert_eq!(err.details, "image needs sm_80 or newer, device 2 is sm_75");
    let arch_specific = String::from_utf8(ptx).unwrap().replace("sm_80", "sm_90a");
    assert_eq!(parse_ptx(arch_specific.as_bytes()).unwrap().sm, 90);
    assert!(select_for(
        arch_specific.as_bytes(),
        &offload::image::DeviceTarget::cuda(90)
    )
    .is_ok());
    assert!(select_for(
        arch_specific.as_bytes(),
        &offload::image::DeviceTarget::cuda(100)
    )
    .is_err());
}

#[test]
fn crafted_cubin_reports_sm_and_functions() {
    let bytes = minimal_cubin(86, &["vector_add", "fill"]);
    let ImageInfo::Cubin(c) = identify(&bytes).unwrap() else {
        panic!()
    };
    assert_eq!((c.sm, c.virtual_sm, c.address_64bit), (86, Some(86), true));
    let mut f = c.functions.clone();
    f.sort();
    assert_eq!(f, ["fill", "vector_add"]);
    assert_eq!(parse_cubin(&bytes).unwrap(), c);

    let dev = |sm| offload::image::DeviceTarget::cuda(sm).with_label("device 1");
    assert_eq!(
        select_for(&bytes, &dev(86)).unwrap().kind,
        LoadableKind::Cubin
    );
    assert!(select_for(&bytes, &dev(89)).is_ok());
    let err = select_for(&bytes, &dev(80)).unwrap_err();
    assert!(
        err.details.starts_with("image needs sm_86") && err.details.ends_with("device 1 is sm_80"),
        "{}",
        err.details
    );
    let err = select_for(&bytes, &dev(90)).unwrap_err();
    assert!(err.details.contains("device 1 is sm_90"), "{}", err.details);
}

#[test]
fn fatbin_lists_entries() {
    let fb = crafted_fatbin();
    let ImageInfo::Fatbin(entries) = identify(&fb).unwrap() else {
        panic!()
    };
    let summary: Vec<_> = entries
        .iter()
        .map(|e| (e.kind, e.sm, e.compressed))
        .collect();
    assert_eq!(
        summary,
        [
            (FatbinEntryKind::Ptx, 70, false),
            (FatbinEntryKind::Cubin, 80, false),
            (FatbinEntryKind::Cubin, 86, false),
            (FatbinEntryKind::Cubin, 90, true)
        ]
    );
    assert_eq!(parse_fatbin(&fb).unwrap(), entries);
    // Each uncompressed payload is itself a readable image.
    assert!(matches!(
        identify(&fb[entries[0].payload_range.clone()]),
        Ok(ImageInfo::Ptx(_))
    ));
    assert!(matches!(
        identify(&fb[entries[2].payload_range.clone()]),
        Ok(ImageInfo::Cubin(_))
    ));
}

#[test]
fn fatbin_selection_prefers_the_best_cubin_then_ptx() {
    let fb = crafted_fatbin();
    let entries = parse_fatbin(&fb).unwrap();
    let pick = |sm| select_for(&fb, &offload::image::DeviceTarget::cuda(sm));

    let c = pick(86).unwrap();
    assert_eq!(
        (c.kind, c.range.clone()),
        (LoadableKind::Cubin, entries[2].payload_range.clone())
    );
    let c = pick(89).unwrap();
    assert_eq!(c.range, entries[2].payload_range);
    let c = pick(80).unwrap();
    assert_eq!(c.range, entries[1].payload_range);
    // No sm_7x cubin: fall back on the PTX.
    let c = pick(75).unwrap();
    assert_eq!(
        (c.kind, c.range.clone()),
        (LoadableKind::Ptx, entries[0].payload_range.clone())
    );
    assert_eq!(parse_ptx(c.bytes(&fb)).unwrap().sm, 70);
    // sm_90: only the compressed cubin and the sm_70 PTX fit; PTX wins and is loadable.
    assert_eq!(pick(90).unwrap().kind, LoadableKind::Ptx);
    // Too old for anything.
    let err = pick(60).unwrap_err();
    assert!(
        err.details.contains("no entry is for this architecture"),
        "{}",
        err.details
    );
}

#[test]
fn a_fatbin_whose_fitting_entries_are_compressed_goes_whole_to_the_driver() {
    let fb = write_fatbin(&[(
        FatbinEntryKind::Cubin,
        90,
        &[0x28, 0xb5, 0x2f, 0xfd, 9, 9],
        true,
    )]);
    // The driver picks and decompresses the entry itself.
    let chosen = select_for(&fb, &offload::image::DeviceTarget::cuda(90)).unwrap();
    assert_eq!(
        (chosen.kind, chosen.range.clone()),
        (LoadableKind::CudaFatbin, 0..fb.len())
    );
    assert!(
        chosen.description.contains("cubin for sm_90, compressed"),
        "{}",
        chosen.description
    );
    // Nothing fits: refused, every entry listed.
    let err = select_for(&fb, &offload::image::DeviceTarget::host()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidBinary);
    assert!(
        err.details
            .starts_with("image is a CUDA fatbin with 1 entries (cubin for sm_90, compressed)"),
        "{}",
        err.details
    );
    let err = select_for(&fb, &offload::image::DeviceTarget::cuda(80)).unwrap_err();
    assert!(
        err.details.contains("no entry is for this architecture"),
        "{}",
        err.details
    );

    // What fatbinary makes by default: an sm_80 cubin and compressed compute_80 PTX. On
    // sm_80 the cubin is taken; on sm_90 only the PTX fits, so the driver gets the whole.
    let cubin = offload::image::minimal_cubin(80, &["k"]);
    let fb = write_fatbin(&[
        (FatbinEntryKind::Cubin, 80, &cubin, false),
        (
            FatbinEntryKind::Ptx,
            80,
            &[0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3],
            true,
        ),
    ]);
    let on_80 = select_for(&fb, &offload::image::DeviceTarget::cuda(80)).unwrap();
    assert_eq!(on_80.kind, LoadableKind::Cubin);
    let on_90 = select_for(&fb, &offload::image::DeviceTarget::cuda(90)).unwrap();
    assert_eq!(
        (on_90.kind, on_90.range),
        (LoadableKind::CudaFatbin, 0..fb.len())
    );
}
