//! Kernel record and replay below OpenMP: the record format that `OFFLOAD_RECORD` writes
//! (`runtime::recording`) and `offload-replay` reads.

pub mod format;
