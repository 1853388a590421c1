//! The `ol*` API fuzzer (`tests/api_fuzz/`), bounded for the test command: the seed corpus
//! (`tests/api_fuzz_corpus/`, inputs that reached new code in long runs and each finding's
//! input), then `OFFLOAD_FUZZ_INPUTS` (default 3,000) inputs from a fixed pseudo-random
//! sequence, on the host device (or `OFFLOAD_FUZZ_DEVICE=remote` under mpirun). Long runs:
//! `OFFLOAD_FUZZ_FIRST=K` starts at the sequence's K-th input (so that runs can share it
//! out), `OFFLOAD_FUZZ_PROGRESS=N` prints a line every N inputs; under libFuzzer with
//! sanitizers: `fuzz/run-api-fuzz.sh`.

#[path = "api_fuzz/mod.rs"]
mod api_fuzz;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api_fuzz_corpus");
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, std::fs::read(e.path()).unwrap())
                })
                .collect()
        })
        .unwrap_or_default();
    inputs.sort();
    inputs
}

/// xorshift64*: the same inputs on every run.
fn inputs(count: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    (0..count).map(move |_| {
        let len = 8 + (next() % 400) as usize;
        (0..len).map(|_| next() as u8).collect()
    })
}

#[test]
fn random_api_use_is_answered_as_documented() {
    let session = api_fuzz::Session::open();
    for (name, input) in corpus() {
        let outcome = std::panic::catch_unwind(|| session.run(&input));
        if let Err(e) = outcome {
            eprintln!("corpus input {name} failed");
            std::panic::resume_unwind(e);
        }
    }
    let number =
        |name: &str| -> Option<usize> { std::env::var(name).ok().and_then(|v| v.parse().ok()) };
    let count = number("OFFLOAD_FUZZ_INPUTS").unwrap_or(3000);
    let verbose = std::env::var_os("OFFLOAD_FUZZ_VERBOSE").is_some();
    let only = number("OFFLOAD_FUZZ_ONLY");
    let first = number("OFFLOAD_FUZZ_FIRST").unwrap_or(0);
    let progress = number("OFFLOAD_FUZZ_PROGRESS").filter(|&p| p > 0);
    let started = std::time::Instant::now();
    for (k, input) in inputs(first + count).enumerate().skip(first) {
        if only.is_some_and(|o| o != k) {
            continue;
        }
        if progress.is_some_and(|p| (k - first) % p == 0 && k > first) {
            let c = session.counts();
            eprintln!(
                "api fuzz: {} inputs from input {first}, {} calls, {:.0} s",
                k - first,
                c.calls,
                started.elapsed().as_secs_f64()
            );
        }
        if verbose {
            let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
            eprintln!("input {k}: {hex}");
        }
        let outcome = std::panic::catch_unwind(|| session.run(&input));
        if let Err(e) = outcome {
            let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
            eprintln!("input {k} failed; its bytes: {hex}");
            std::panic::resume_unwind(e);
        }
    }
    let c = session.counts();
    eprintln!(
        "api fuzz: {} inputs, {} calls, {} of them answered with an error",
        c.inputs, c.calls, c.errors
    );
    assert!(c.calls > c.inputs, "the inputs made calls");
    assert!(offload::capi::olShutDown().is_null());
}
