//! The C ABI: what clang-compiled programs and libomp hand this library, and the few
//! libomp functions it calls back. Names nothing else of the crate.

pub mod deps;
pub mod entries;
pub mod types;
