//! Fuzz target: host ELF symbols, OpenMP offload entries, embedded OffloadBinaries.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = offload::image::host_symbols(data);
    let _ = offload::image::offload_entries(data);
    let _ = offload::image::embedded_offload_binaries(data);
});
