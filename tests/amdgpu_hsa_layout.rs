//! The HSA types and constants the AMDGPU backend declares by hand (`plugins::amdgpu::ffi`
//! and the packet structs of `packet.rs`) against the HSA headers (Debian's
//! `libhsa-runtime-dev`, `/usr/include/hsa`): a C probe compiled against them prints
//! every enum value, size and field offset, and each must equal the Rust one.
//!
//! Without the headers the test says so and passes, unless `OFFLOAD_REQUIRE_HSA_HEADERS=1`
//! (set by scripts/test.sh, which installs the package) makes that a failure.

use offload::plugins::amdgpu::ffi::*;
use offload::plugins::amdgpu::packet::{BarrierAndPacket, KernelDispatchPacket};
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_INCLUDE: &str = "/usr/include";

fn include_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("HSA_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_INCLUDE));
    if dir.join("hsa/hsa_ext_amd.h").exists() {
        return Some(dir);
    }
    let required = std::env::var("OFFLOAD_REQUIRE_HSA_HEADERS").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "{}/hsa/hsa_ext_amd.h is missing (install libhsa-runtime-dev) and \
         OFFLOAD_REQUIRE_HSA_HEADERS=1",
        dir.display()
    );
    eprintln!(
        "skipped: {}/hsa/hsa_ext_amd.h not found (install libhsa-runtime-dev)",
        dir.display()
    );
    None
}

/// (C expression, the Rust value it must equal).
fn expectations() -> Vec<(&'static str, u64)> {
    let u = |v: u32| u64::from(v);
    let h = |v: u16| u64::from(v);
    let z = |v: usize| v as u64;
    vec![
        // Statuses.
        ("HSA_STATUS_SUCCESS", u(STATUS_SUCCESS)),
        ("HSA_STATUS_INFO_BREAK", u(STATUS_INFO_BREAK)),
        (
            "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
            u(STATUS_ERROR_OUT_OF_RESOURCES),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_CODE_OBJECT",
            u(STATUS_ERROR_INVALID_CODE_OBJECT),
        ),
        ("HSA_STATUS_ERROR_INVALID_ISA", u(STATUS_ERROR_INVALID_ISA)),
        ("sizeof(hsa_status_t)", z(size_of::<HsaStatus>())),
        // Handles and signal values.
        ("sizeof(hsa_agent_t)", z(size_of::<Agent>())),
        ("sizeof(hsa_signal_t)", z(size_of::<Signal>())),
        ("sizeof(hsa_amd_memory_pool_t)", z(size_of::<MemoryPool>())),
        ("sizeof(hsa_isa_t)", z(size_of::<Isa>())),
        ("sizeof(hsa_executable_t)", z(size_of::<Executable>())),
        (
            "sizeof(hsa_executable_symbol_t)",
            z(size_of::<ExecutableSymbol>()),
        ),
        (
            "sizeof(hsa_code_object_reader_t)",
            z(size_of::<CodeObjectReader>()),
        ),
        (
            "sizeof(hsa_loaded_code_object_t)",
            z(size_of::<LoadedCodeObject>()),
        ),
        ("sizeof(hsa_signal_value_t)", z(size_of::<SignalValue>())),
        // hsa_queue_t.
        ("sizeof(hsa_queue_t)", z(size_of::<Queue>())),
        (
            "offsetof(hsa_queue_t, type)",
            z(offset_of!(Queue, queue_type)),
        ),
        (
            "offsetof(hsa_queue_t, features)",
            z(offset_of!(Queue, features)),
        ),
        (
            "offsetof(hsa_queue_t, base_address)",
            z(offset_of!(Queue, base_address)),
        ),
        (
            "offsetof(hsa_queue_t, doorbell_signal)",
            z(offset_of!(Queue, doorbell_signal)),
        ),
        ("offsetof(hsa_queue_t, size)", z(offset_of!(Queue, size))),
        ("offsetof(hsa_queue_t, id)", z(offset_of!(Queue, id))),
        // Small structs.
        ("sizeof(hsa_dim3_t)", z(size_of::<Dim3>())),
        (
            "sizeof(hsa_amd_profiling_dispatch_time_t)",
            z(size_of::<DispatchTime>()),
        ),
        (
            "offsetof(hsa_amd_profiling_dispatch_time_t, end)",
            z(offset_of!(DispatchTime, end)),
        ),
        (
            "sizeof(hsa_amd_gpu_memory_fault_info_t)",
            z(size_of::<MemoryFaultInfo>()),
        ),
        (
            "offsetof(hsa_amd_gpu_memory_fault_info_t, virtual_address)",
            z(offset_of!(MemoryFaultInfo, virtual_address)),
        ),
        (
            "offsetof(hsa_amd_gpu_memory_fault_info_t, fault_reason_mask)",
            z(offset_of!(MemoryFaultInfo, fault_reason_mask)),
        ),
        ("sizeof(hsa_amd_event_t)", z(size_of::<AmdEvent>())),
        (
            "offsetof(hsa_amd_event_t, memory_fault)",
            z(offset_of!(AmdEvent, memory_fault)),
        ),
        (
            "sizeof(hsa_amd_pointer_info_t)",
            z(size_of::<PointerInfo>()),
        ),
        (
            "offsetof(hsa_amd_pointer_info_t, type)",
            z(offset_of!(PointerInfo, pointer_type)),
        ),
        (
            "offsetof(hsa_amd_pointer_info_t, agentBaseAddress)",
            z(offset_of!(PointerInfo, agent_base_address)),
        ),
        (
            "offsetof(hsa_amd_pointer_info_t, hostBaseAddress)",
            z(offset_of!(PointerInfo, host_base_address)),
        ),
        (
            "offsetof(hsa_amd_pointer_info_t, sizeInBytes)",
            z(offset_of!(PointerInfo, size_in_bytes)),
        ),
        (
            "offsetof(hsa_amd_pointer_info_t, userData)",
            z(offset_of!(PointerInfo, user_data)),
        ),
        (
            "offsetof(hsa_amd_pointer_info_t, agentOwner)",
            z(offset_of!(PointerInfo, agent_owner)),
        ),
        (
            "offsetof(hsa_amd_pointer_info_t, global_flags)",
            z(offset_of!(PointerInfo, global_flags)),
        ),
        ("HSA_EXT_POINTER_TYPE_UNKNOWN", u(POINTER_TYPE_UNKNOWN)),
        // System, agent, ISA info.
        (
            "HSA_SYSTEM_INFO_VERSION_MAJOR",
            u(system_info::VERSION_MAJOR),
        ),
        (
            "HSA_SYSTEM_INFO_VERSION_MINOR",
            u(system_info::VERSION_MINOR),
        ),
        (
            "HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY",
            u(system_info::TIMESTAMP_FREQUENCY),
        ),
        ("HSA_AGENT_INFO_NAME", u(agent_info::NAME)),
        ("HSA_AGENT_INFO_VENDOR_NAME", u(agent_info::VENDOR_NAME)),
        ("HSA_AGENT_INFO_FEATURE", u(agent_info::FEATURE)),
        (
            "HSA_AGENT_INFO_WAVEFRONT_SIZE",
            u(agent_info::WAVEFRONT_SIZE),
        ),
        (
            "HSA_AGENT_INFO_WORKGROUP_MAX_DIM",
            u(agent_info::WORKGROUP_MAX_DIM),
        ),
        (
            "HSA_AGENT_INFO_WORKGROUP_MAX_SIZE",
            u(agent_info::WORKGROUP_MAX_SIZE),
        ),
        ("HSA_AGENT_INFO_GRID_MAX_DIM", u(agent_info::GRID_MAX_DIM)),
        ("HSA_AGENT_INFO_GRID_MAX_SIZE", u(agent_info::GRID_MAX_SIZE)),
        ("HSA_AGENT_INFO_QUEUES_MAX", u(agent_info::QUEUES_MAX)),
        (
            "HSA_AGENT_INFO_QUEUE_MAX_SIZE",
            u(agent_info::QUEUE_MAX_SIZE),
        ),
        ("HSA_AGENT_INFO_DEVICE", u(agent_info::DEVICE)),
        ("HSA_AGENT_INFO_CACHE_SIZE", u(agent_info::CACHE_SIZE)),
        ("HSA_AMD_AGENT_INFO_CHIP_ID", u(agent_info::AMD_CHIP_ID)),
        (
            "HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT",
            u(agent_info::AMD_COMPUTE_UNIT_COUNT),
        ),
        (
            "HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY",
            u(agent_info::AMD_MAX_CLOCK_FREQUENCY),
        ),
        ("HSA_AMD_AGENT_INFO_BDFID", u(agent_info::AMD_BDFID)),
        (
            "HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY",
            u(agent_info::AMD_MEMORY_MAX_FREQUENCY),
        ),
        (
            "HSA_AMD_AGENT_INFO_PRODUCT_NAME",
            u(agent_info::AMD_PRODUCT_NAME),
        ),
        (
            "HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU",
            u(agent_info::AMD_MAX_WAVES_PER_CU),
        ),
        ("HSA_AMD_AGENT_INFO_UUID", u(agent_info::AMD_UUID)),
        (
            "HSA_AGENT_FEATURE_KERNEL_DISPATCH",
            u(AGENT_FEATURE_KERNEL_DISPATCH),
        ),
        ("HSA_DEVICE_TYPE_CPU", u(DEVICE_TYPE_CPU)),
        ("HSA_DEVICE_TYPE_GPU", u(DEVICE_TYPE_GPU)),
        ("HSA_ISA_INFO_NAME_LENGTH", u(ISA_INFO_NAME_LENGTH)),
        ("HSA_ISA_INFO_NAME", u(ISA_INFO_NAME)),
        // Pools.
        ("HSA_AMD_MEMORY_POOL_INFO_SEGMENT", u(pool_info::SEGMENT)),
        (
            "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS",
            u(pool_info::GLOBAL_FLAGS),
        ),
        ("HSA_AMD_MEMORY_POOL_INFO_SIZE", u(pool_info::SIZE)),
        (
            "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED",
            u(pool_info::RUNTIME_ALLOC_ALLOWED),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE",
            u(pool_info::RUNTIME_ALLOC_GRANULE),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE",
            u(pool_info::ALLOC_MAX_SIZE),
        ),
        (
            "HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS",
            u(AGENT_POOL_INFO_ACCESS),
        ),
        (
            "HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED",
            u(POOL_ACCESS_NEVER_ALLOWED),
        ),
        ("HSA_AMD_SEGMENT_GLOBAL", u(SEGMENT_GLOBAL)),
        ("HSA_AMD_SEGMENT_GROUP", u(SEGMENT_GROUP)),
        (
            "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT",
            u(GLOBAL_FLAG_KERNARG_INIT),
        ),
        (
            "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED",
            u(GLOBAL_FLAG_FINE_GRAINED),
        ),
        (
            "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED",
            u(GLOBAL_FLAG_COARSE_GRAINED),
        ),
        // Queues, signals, executables.
        ("HSA_QUEUE_TYPE_MULTI", u(QUEUE_TYPE_MULTI)),
        ("HSA_SIGNAL_CONDITION_EQ", u(SIGNAL_CONDITION_EQ)),
        ("HSA_SIGNAL_CONDITION_LT", u(SIGNAL_CONDITION_LT)),
        ("HSA_WAIT_STATE_BLOCKED", u(WAIT_STATE_BLOCKED)),
        ("HSA_PROFILE_FULL", u(PROFILE_FULL)),
        (
            "HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT",
            u(ROUNDING_MODE_DEFAULT),
        ),
        ("HSA_SYMBOL_KIND_VARIABLE", u(SYMBOL_KIND_VARIABLE)),
        ("HSA_SYMBOL_KIND_KERNEL", u(SYMBOL_KIND_KERNEL)),
        ("HSA_EXECUTABLE_SYMBOL_INFO_TYPE", u(symbol_info::TYPE)),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE",
            u(symbol_info::VARIABLE_SIZE),
        ),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE",
            u(symbol_info::KERNEL_KERNARG_SEGMENT_SIZE),
        ),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE",
            u(symbol_info::KERNEL_GROUP_SEGMENT_SIZE),
        ),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE",
            u(symbol_info::KERNEL_PRIVATE_SEGMENT_SIZE),
        ),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK",
            u(symbol_info::KERNEL_DYNAMIC_CALLSTACK),
        ),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS",
            u(symbol_info::VARIABLE_ADDRESS),
        ),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT",
            u(symbol_info::KERNEL_OBJECT),
        ),
        // Faults.
        ("HSA_AMD_GPU_MEMORY_FAULT_EVENT", u(GPU_MEMORY_FAULT_EVENT)),
        (
            "HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT",
            u(fault_reason::PAGE_NOT_PRESENT),
        ),
        ("HSA_AMD_MEMORY_FAULT_READ_ONLY", u(fault_reason::READ_ONLY)),
        ("HSA_AMD_MEMORY_FAULT_NX", u(fault_reason::NX)),
        ("HSA_AMD_MEMORY_FAULT_HOST_ONLY", u(fault_reason::HOST_ONLY)),
        ("HSA_AMD_MEMORY_FAULT_DRAMECC", u(fault_reason::DRAMECC)),
        ("HSA_AMD_MEMORY_FAULT_IMPRECISE", u(fault_reason::IMPRECISE)),
        ("HSA_AMD_MEMORY_FAULT_SRAMECC", u(fault_reason::SRAMECC)),
        ("(uint32_t)HSA_AMD_MEMORY_FAULT_HANG", u(fault_reason::HANG)),
        // Packet header constants (packet.rs encodes with them).
        ("HSA_PACKET_TYPE_INVALID", h(packet_header::TYPE_INVALID)),
        (
            "HSA_PACKET_TYPE_KERNEL_DISPATCH",
            h(packet_header::TYPE_KERNEL_DISPATCH),
        ),
        (
            "HSA_PACKET_TYPE_BARRIER_AND",
            h(packet_header::TYPE_BARRIER_AND),
        ),
        ("HSA_FENCE_SCOPE_NONE", h(packet_header::FENCE_SCOPE_NONE)),
        ("HSA_FENCE_SCOPE_AGENT", h(packet_header::FENCE_SCOPE_AGENT)),
        (
            "HSA_FENCE_SCOPE_SYSTEM",
            h(packet_header::FENCE_SCOPE_SYSTEM),
        ),
        ("HSA_PACKET_HEADER_TYPE", h(packet_header::SHIFT_TYPE)),
        ("HSA_PACKET_HEADER_BARRIER", h(packet_header::SHIFT_BARRIER)),
        (
            "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
            h(packet_header::SHIFT_ACQUIRE_FENCE_SCOPE),
        ),
        (
            "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE",
            h(packet_header::SHIFT_RELEASE_FENCE_SCOPE),
        ),
        (
            "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS",
            h(packet_header::SHIFT_SETUP_DIMENSIONS),
        ),
        // The two packets.
        (
            "sizeof(hsa_kernel_dispatch_packet_t)",
            z(size_of::<KernelDispatchPacket>()),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, setup)",
            z(offset_of!(KernelDispatchPacket, setup)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, workgroup_size_x)",
            z(offset_of!(KernelDispatchPacket, workgroup_size)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, reserved0)",
            z(offset_of!(KernelDispatchPacket, reserved0)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, grid_size_x)",
            z(offset_of!(KernelDispatchPacket, grid_size)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, private_segment_size)",
            z(offset_of!(KernelDispatchPacket, private_segment_size)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, group_segment_size)",
            z(offset_of!(KernelDispatchPacket, group_segment_size)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, kernel_object)",
            z(offset_of!(KernelDispatchPacket, kernel_object)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, kernarg_address)",
            z(offset_of!(KernelDispatchPacket, kernarg_address)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, reserved2)",
            z(offset_of!(KernelDispatchPacket, reserved2)),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, completion_signal)",
            z(offset_of!(KernelDispatchPacket, completion_signal)),
        ),
        (
            "sizeof(hsa_barrier_and_packet_t)",
            z(size_of::<BarrierAndPacket>()),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, reserved0)",
            z(offset_of!(BarrierAndPacket, reserved0)),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, reserved1)",
            z(offset_of!(BarrierAndPacket, reserved1)),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, dep_signal)",
            z(offset_of!(BarrierAndPacket, dep_signal)),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, reserved2)",
            z(offset_of!(BarrierAndPacket, reserved2)),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, completion_signal)",
            z(offset_of!(BarrierAndPacket, completion_signal)),
        ),
    ]
}

fn probe(include: &Path, checks: &[(&str, u64)]) -> Vec<u64> {
    let dir = std::env::temp_dir().join(format!("offload-hsa-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut source = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n\
         #include <hsa/hsa.h>\n#include <hsa/hsa_ext_amd.h>\nint main(void) {\n",
    );
    for (expr, _) in checks {
        source.push_str(&format!(
            "  printf(\"%llu\\n\", (unsigned long long)({expr}));\n"
        ));
    }
    source.push_str("  return 0;\n}\n");
    let c_file = dir.join("hsa_layout.c");
    let exe = dir.join("hsa_layout");
    std::fs::write(&c_file, source).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .arg("-I")
        .arg(include)
        .arg(&c_file)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("a C compiler (set CC)");
    assert!(
        out.status.success(),
        "the HSA layout probe compiles: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn rust_declarations_match_the_hsa_headers() {
    let Some(include) = include_dir() else {
        return;
    };
    let checks = expectations();
    let values = probe(&include, &checks);
    assert_eq!(values.len(), checks.len());
    let wrong: Vec<String> = checks
        .iter()
        .zip(values)
        .filter(|((_, rust), c)| rust != c)
        .map(|((expr, rust), c)| format!("{expr}: Rust says {rust}, the header {c}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
