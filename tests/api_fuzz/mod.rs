//! A stateful fuzzer of the `ol*` API (issue 35): an input's bytes decode to a sequence of
//! calls over a small pool of queues, events, programs, kernels, allocations and host
//! buffers, with valid, stale, NULL and made-up handles, sizes 0 / 1 / huge / overflowing,
//! ranges inside and past allocations, overlapping copies, fills of odd patterns, waits
//! on events of other queues, destroys while in use, and a second thread working beside
//! the first. Each call is checked against a model:
//!
//! - a call the model finds valid must succeed, and what it does is checked: the bytes of
//!   every allocation and host buffer are modelled and compared when read back;
//! - a call the model finds wrong must fail with the documented code and a `Details` text;
//! - every call returns within `CALL_BOUND` (a watchdog aborts the process otherwise);
//! - no code is `OL_ERRC_UNKNOWN` (a panic caught at the boundary) or out of range.
//!
//! A finding panics with the call, what was expected and what came back. Driven by
//! `tests/api_fuzz.rs` (a bounded run in the test command) and by
//! `fuzz/fuzz_targets/api_sequence.rs` (libFuzzer, with sanitizers, for long runs).
#![allow(dead_code)]

mod harness;
mod model;
mod reader;

pub use harness::Session;
