//! Fuzz target: the CUDA fatbin reader.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = offload::image::parse_fatbin(data);
});
