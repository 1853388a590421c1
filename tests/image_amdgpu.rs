//! AMDGPU code objects: target from e_flags, kernels and arguments from the metadata note,
//! and the AMD GPU compatibility rules.

mod image_support;

use image_support::fixture;
use offload::image::{
    identify, parse_amdgpu_code_object, processor_name, select_for, AddressSpace, ArgValueKind,
    DeviceTarget, FeatureSetting, ImageInfo, LoadableKind,
};
use offload::plugin::foundation::error::ErrorCode;

#[test]
fn gfx90a_xnack_on_target_and_kernels() {
    let co = parse_amdgpu_code_object(&fixture("amdgpu_gfx90a_xnack_on.co")).unwrap();
    assert_eq!(co.target.processor, "gfx90a");
    assert_eq!(co.target.xnack, FeatureSetting::On);
    assert_eq!(co.target.sramecc, FeatureSetting::Any);
    assert_eq!(co.target.code_object_version, 5);
    assert_eq!(co.target.to_string(), "gfx90a:xnack+");
    assert_eq!(
        co.metadata_target.as_deref(),
        Some("amdgcn-amd-amdhsa--gfx90a:xnack+")
    );
    let names: Vec<_> = co.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["vector_add", "fill", "read_implicit"]);

    let k = &co.kernels[0];
    assert_eq!(k.symbol, "vector_add.kd");
    assert_eq!((k.kernarg_segment_size, k.kernarg_segment_align), (28, 8));
    assert_eq!(
        (k.group_segment_fixed_size, k.private_segment_fixed_size),
        (0, 0)
    );
    assert_eq!((k.sgpr_count, k.vgpr_count), (12, 3));
    assert_eq!((k.wavefront_size, k.max_flat_workgroup_size), (64, 256));
    let args: Vec<_> = k
        .args
        .iter()
        .map(|a| {
            (
                a.name.as_deref().unwrap(),
                a.type_name.as_deref().unwrap(),
                a.offset,
                a.size,
            )
        })
        .collect();
    assert_eq!(
        args,
        [
            ("a", "float*", 0, 8),
            ("b", "float*", 8, 8),
            ("c", "float*", 16, 8),
            ("n", "int", 24, 4)
        ]
    );
    assert_eq!(k.args[0].value_kind, ArgValueKind::GlobalBuffer);
    assert_eq!(k.args[0].address_space, Some(AddressSpace::Global));
    assert_eq!(k.args[3].value_kind, ArgValueKind::ByValue);
    assert_eq!(k.args[3].address_space, None);

    let fill = &co.kernels[1];
    assert_eq!(fill.args[2].value_kind, ArgValueKind::DynamicSharedPointer);
    assert_eq!(fill.args[2].address_space, Some(AddressSpace::Local));
    assert_eq!(fill.kernarg_segment_size, 16);
}

#[test]
fn hidden_arguments_follow_the_explicit_ones() {
    let co = parse_amdgpu_code_object(&fixture("amdgpu_gfx90a_xnack_on.co")).unwrap();
    let k = &co.kernels[2];
    assert_eq!(k.kernarg_segment_size, 264);
    assert_eq!(k.explicit_args().count(), 1);
    let hidden: Vec<_> = k
        .args
        .iter()
        .filter_map(|a| match &a.value_kind {
            ArgValueKind::Hidden(h) => Some((h.as_str(), a.offset)),
            _ => None,
        })
        .collect();
    assert_eq!(hidden[0], ("block_count_x", 8));
    assert!(hidden.contains(&("group_size_x", 20)));
    assert!(hidden.contains(&("global_offset_x", 48)));
    assert!(hidden.contains(&("grid_dims", 72)));
    assert!(k
        .args
        .iter()
        .all(|a| a.offset >= 8 || !a.value_kind.is_hidden()));
}

#[test]
fn gfx1030_is_wave32_without_xnack_or_sramecc() {
    let ImageInfo::Amdgpu(co) = identify(&fixture("amdgpu_gfx1030.co")).unwrap() else {
        panic!()
    };
    assert_eq!(co.target.processor, "gfx1030");
    assert_eq!(co.target.xnack, FeatureSetting::Unsupported);
    assert_eq!(co.target.sramecc, FeatureSetting::Unsupported);
    assert_eq!(co.target.to_string(), "gfx1030");
    assert!(co.kernels.iter().all(|k| k.wavefront_size == 32));
    assert_eq!(co.kernels.len(), 3);
}

#[test]
fn mach_names() {
    assert_eq!(processor_name(0x3f), Some("gfx90a"));
    assert_eq!(processor_name(0x4c), Some("gfx942"));
    assert_eq!(processor_name(0x53), Some("gfx10-3-generic"));
    assert_eq!(processor_name(0x01), None);
}

#[test]
fn compatibility_checks_processor_and_features() {
    let gfx90a = fixture("amdgpu_gfx90a_xnack_on.co");
    let gfx1030 = fixture("amdgpu_gfx1030.co");

    let xnack_on = DeviceTarget::amdgpu("gfx90a", Some(true), Some(true)).with_label("device 1");
    let chosen = select_for(&gfx90a, &xnack_on).unwrap();
    assert_eq!(
        (chosen.kind, chosen.range.clone()),
        (LoadableKind::AmdgpuCodeObject, 0..gfx90a.len())
    );

    let xnack_off = DeviceTarget::amdgpu("gfx90a", Some(false), Some(true)).with_label("device 1");
    let err = select_for(&gfx90a, &xnack_off).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidBinary);
    assert!(
        err.details.contains("xnack on") && err.details.contains("device 1"),
        "{}",
        err.details
    );

    let err = select_for(&gfx1030, &xnack_on).unwrap_err();
    assert!(
        err.details.contains("gfx1030") && err.details.contains("gfx90a"),
        "{}",
        err.details
    );
    assert!(select_for(&gfx1030, &DeviceTarget::amdgpu("gfx1030", None, None)).is_ok());

    let err = select_for(&gfx90a, &DeviceTarget::host().with_label("device 0")).unwrap_err();
    assert!(
        err.details
            .starts_with("image is an AMDGPU code object for gfx90a:xnack+")
            && err.details.contains("device 0 is the host CPU"),
        "{}",
        err.details
    );
    let err = select_for(&gfx90a, &DeviceTarget::cuda(80)).unwrap_err();
    assert!(err.details.contains("NVIDIA GPU sm_80"), "{}", err.details);
}
