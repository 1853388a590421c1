//! Fuzz target: the cubin (EM_CUDA ELF) reader.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = offload::image::parse_cubin(data);
});
