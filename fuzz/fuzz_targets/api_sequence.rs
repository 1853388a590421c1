//! The `ol*` API fuzzer under libFuzzer: each input is a sequence of calls decoded and
//! checked by `tests/api_fuzz` (the same generator and model the test command runs,
//! bounded). liboffload is initialised once per process; each input cleans up after
//! itself. `OFFLOAD_FUZZ_DEVICE=remote` (under mpirun, beside a device server) fuzzes a
//! remote device. Long runs: `fuzz/run-api-fuzz.sh`.
#![no_main]

#[path = "../../tests/api_fuzz/mod.rs"]
mod api_fuzz;

use std::sync::OnceLock;

static SESSION: OnceLock<api_fuzz::Session> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    SESSION.get_or_init(api_fuzz::Session::open).run(data);
});
