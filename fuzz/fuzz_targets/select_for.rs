//! Fuzz target: the compatibility check, which recurses into containers.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for device in [
        offload::image::DeviceTarget::host(),
        offload::image::DeviceTarget::amdgpu("gfx90a", Some(true), Some(false)),
        offload::image::DeviceTarget::cuda(86),
    ] {
        if let Ok(chosen) = offload::image::select_for(data, &device) {
            assert!(chosen.range.end <= data.len());
        }
    }
});
