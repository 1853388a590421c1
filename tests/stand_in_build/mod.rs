//! Builds a test's stand-in vendor library (a C file under `tests/`) into a temporary
//! folder, so the backend opens it as it would the vendor's. Each test binary uses part.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// Builds `tests/<source>` as `<temp>/liboffload-<tag>-<pid>/<library>`; `None` without a
/// C compiler (a compiler that fails on it fails the test). A distinct `tag` per test
/// gives each its own file, so its own loaded copy with its own state (tests run in
/// parallel threads of one process).
pub fn build_stand_in(source: &str, library: &str, tag: &str) -> Option<PathBuf> {
    build_stand_in_with(source, library, tag, &[])
}

/// `build_stand_in` with `defines` (`-D` options: a variant of the stand-in).
pub fn build_stand_in_with(
    source: &str,
    library: &str,
    tag: &str,
    defines: &[&str],
) -> Option<PathBuf> {
    // The crate's own tests/, or the workspace's (a member crate's tests build it too).
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest
        .ancestors()
        .find(|dir| dir.join("tests").join(source).is_file())
        .unwrap_or(manifest)
        .display();
    let dir = std::env::temp_dir().join(format!("liboffload-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let built = dir.join(library);
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = Command::new(&compiler)
        .args([
            "-shared",
            "-fPIC",
            "-O1",
            "-std=gnu11",
            "-Wall",
            "-Werror",
            "-pthread",
            "-o",
        ])
        .arg(&built)
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg(format!("{root}/tests/{source}"))
        .output()
        .ok()?;
    assert!(
        output.status.success(),
        "{compiler} could not build tests/{source}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(built)
}
