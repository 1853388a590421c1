//! Fuzz target: format detection and `identify` (every reader behind it).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = offload::image::identify(data);
    let _ = offload::image::detect_format(data);
});
