//! Host ELF images: identification, exported symbols, OpenMP offload entries, and the
//! host device's compatibility rules.

mod image_support;

use image_support::fixture;
use offload::image::{
    host_symbols, identify, offload_entries, select_for, DeviceArch, DeviceTarget, ElfClass,
    ElfFileType, ElfMachine, Endian, HostSymbolKind, ImageInfo, LoadableKind, OffloadEntryKind,
};
use offload::plugin::foundation::error::ErrorCode;

fn x86_64_host() -> DeviceTarget {
    DeviceTarget {
        arch: DeviceArch::Host {
            machine: ElfMachine::X86_64,
            pointer_width: 64,
            endian: Endian::Little,
        },
        label: "device 0".into(),
    }
}

#[test]
fn x86_64_shared_object_is_identified_with_its_symbols() {
    let bytes = fixture("host_x86_64.so");
    let ImageInfo::HostElf(info) = identify(&bytes).unwrap() else {
        panic!("not a host ELF")
    };
    assert_eq!(info.header.machine, ElfMachine::X86_64);
    assert_eq!(info.header.class, ElfClass::Elf64);
    assert_eq!(info.header.endian, Endian::Little);
    assert_eq!(info.header.file_type, ElfFileType::SharedObject);
    assert!(info.offload_entries.is_empty());
    assert!(!info.embeds_offload_binary);

    let symbols = host_symbols(&bytes).unwrap();
    assert_eq!(symbols, info.symbols);
    let find = |n: &str| {
        symbols
            .iter()
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("{n} missing: {symbols:?}"))
    };
    assert_eq!(find("vector_add").kind, HostSymbolKind::Function);
    assert_eq!(find("scale").kind, HostSymbolKind::Function);
    assert_eq!(find("use_hidden").kind, HostSymbolKind::Function);
    assert_eq!(
        (find("counter").kind, find("counter").size),
        (HostSymbolKind::Object, 4)
    );
    assert_eq!(
        (find("table").kind, find("table").size),
        (HostSymbolKind::Object, 16 * 8)
    );
    assert!(find("vector_add").size > 0 && find("vector_add").address > 0);
    // `static` functions are not exported.
    assert!(symbols.iter().all(|s| s.name != "hidden_helper"));
    assert_eq!(symbols.len(), 5, "{symbols:?}");
}

#[test]
fn aarch64_shared_object_lists_the_same_symbols() {
    let bytes = fixture("host_aarch64.so");
    let ImageInfo::HostElf(info) = identify(&bytes).unwrap() else {
        panic!("not a host ELF")
    };
    assert_eq!(info.header.machine, ElfMachine::Aarch64);
    let mut names: Vec<_> = info.symbols.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        ["counter", "scale", "table", "use_hidden", "vector_add"]
    );
}

#[test]
fn host_device_takes_only_its_own_shared_objects() {
    let host = x86_64_host();
    let so = fixture("host_x86_64.so");
    let chosen = select_for(&so, &host).unwrap();
    assert_eq!(chosen.kind, LoadableKind::HostSharedObject);
    assert_eq!(chosen.range, 0..so.len());
    assert_eq!(chosen.bytes(&so), &so[..]);

    let err = select_for(&fixture("host_aarch64.so"), &host).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidBinary);
    assert!(
        err.details.contains("aarch64")
            && err.details.contains("device 0 is the host CPU (x86_64)"),
        "{}",
        err.details
    );

    let err = select_for(&fixture("host_x86_64.o"), &host).unwrap_err();
    assert!(
        err.details.contains("ET_REL") && err.details.contains("-shared"),
        "{}",
        err.details
    );

    // Same machine, wrong class: a 32-bit host would refuse a 64-bit object.
    let mut host32 = host.clone();
    host32.arch = DeviceArch::Host {
        machine: ElfMachine::X86_64,
        pointer_width: 32,
        endian: Endian::Little,
    };
    assert!(select_for(&so, &host32).is_err());
}

#[test]
fn this_machine_is_described() {
    let host = DeviceTarget::host();
    let DeviceArch::Host { pointer_width, .. } = host.arch else {
        panic!()
    };
    assert_eq!(pointer_width, usize::BITS);
    if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        assert!(select_for(&fixture("host_x86_64.so"), &host).is_ok());
        assert_eq!(host.arch.to_string(), "the host CPU (x86_64)");
    }
}

#[test]
fn openmp_entries_of_a_linked_shared_object() {
    let bytes = fixture("omp_x86_64_host.so");
    let entries = offload_entries(&bytes).unwrap();
    assert_eq!(entries.len(), 2, "{entries:?}");
    let global = entries
        .iter()
        .find(|e| e.name == "device_counter")
        .expect("device_counter");
    assert_eq!(global.kind, OffloadEntryKind::GlobalVariable);
    assert_eq!(global.size, 4);
    assert_eq!(global.address_symbol.as_deref(), Some("device_counter"));
    let symbols = host_symbols(&bytes).unwrap();
    let counter = symbols.iter().find(|s| s.name == "device_counter").unwrap();
    assert_eq!(global.address, counter.address);

    let region = entries
        .iter()
        .find(|e| e.kind == OffloadEntryKind::Kernel)
        .expect("a target region");
    assert!(
        region.name.starts_with("__omp_offloading_") && region.name.ends_with("_saxpy_l7"),
        "{}",
        region.name
    );
    assert_eq!(region.size, 0);
    let id = region.address_symbol.as_deref().unwrap();
    assert_eq!(id, format!(".{}.region_id", region.name));

    let ImageInfo::HostElf(info) = identify(&bytes).unwrap() else {
        panic!()
    };
    assert!(info.embeds_offload_binary);
    assert_eq!(info.offload_entries, entries);
}

#[test]
fn openmp_entries_of_a_relocatable_object_resolve_through_relocations() {
    let entries = offload_entries(&fixture("omp_x86_64_host.o")).unwrap();
    let mut names: Vec<_> = entries.iter().map(|e| (e.name.clone(), e.kind)).collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(names.len(), 2);
    assert_eq!(
        names[1],
        (
            "device_counter".to_owned(),
            OffloadEntryKind::GlobalVariable
        )
    );
    assert!(names[0].0.ends_with("_saxpy_l7") && names[0].1 == OffloadEntryKind::Kernel);
    assert!(entries.iter().all(|e| e.address_symbol.is_some()));
}

#[test]
fn objects_without_entries_have_none() {
    assert!(offload_entries(&fixture("host_x86_64.so"))
        .unwrap()
        .is_empty());
    assert!(offload_entries(&fixture("amdgpu_gfx1030.co"))
        .unwrap()
        .is_empty());
}
