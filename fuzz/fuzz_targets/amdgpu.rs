//! Fuzz target: AMDGPU code objects (header, notes, metadata).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = offload::image::parse_amdgpu_code_object(data);
});
