//! `offload-replay [--verify] [--device N] [--repeat K] [--groups X,Y,Z]
//! [--group-size X,Y,Z] [--json] RECORD...`: runs kernel launches that `OFFLOAD_RECORD`
//! recorded again, alone, through liboffload's C API. RECORD is a record file or a
//! folder of them (each `*.offrec`, in name order).
//!
//! Each replay puts the recorded device memory back at its recorded addresses (so that
//! pointers inside it and in the arguments stay valid), loads the recorded image, and
//! launches the kernel with the recorded arguments and shape (or the grid given), K
//! times, the memory put back before each; it prints the device, the shape, the median
//! time per launch and, with `--verify`, whether the first launch left every allocation
//! as the recording did ("verified", or "differs at byte N"). Exit status: 0 when every
//! record replayed (and verified), 1 otherwise, with the reason on stderr.

mod device;
mod options;
mod placement;
mod run;

use offload::record::format::Record;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match options::parse(&args) {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("offload-replay: {e}\n{}", options::USAGE);
            return ExitCode::from(1);
        }
    };
    let files = match record_files(&opts.records) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("offload-replay: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = device::init() {
        eprintln!("offload-replay: {e}");
        return ExitCode::from(1);
    }
    let mut ok = true;
    for file in &files {
        let outcome = read(file).and_then(|record| run::replay(file, &record, &opts));
        match outcome {
            Ok(report) => {
                println!("{}", report.line(opts.json));
                ok &= report.verified != Some(false);
            }
            Err(e) => {
                eprintln!("offload-replay: {}: {e}", file.display());
                ok = false;
            }
        }
    }
    device::shut_down();
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The record files the arguments name: files as given, folders' `*.offrec` files.
fn record_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "offrec"))
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "{}: a folder with no .offrec record",
                    path.display()
                ));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn read(file: &Path) -> Result<Record, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read it: {e}"))?;
    Record::decode(&bytes)
}
