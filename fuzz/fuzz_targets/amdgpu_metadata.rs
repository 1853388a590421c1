//! Fuzz target: the bounded MessagePack reader used for AMDGPU metadata.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = offload::image::decode_msgpack(data);
});
