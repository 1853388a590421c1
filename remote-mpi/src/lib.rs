//! liboffload's MPI transport. The runtime (`src/plugins/remote/`) loads this library
//! only when the process was started by an MPI launcher, so liboffload itself never
//! links libmpi; the device server `offload-mpi-device` links it directly.
//!
//! - [`transport`] — MPI with `MPI_THREAD_MULTIPLE`, tagged byte messages; every send
//!   and receive polled under a liveness rule (a dead or silent peer is an error, never
//!   a hang); [`pending`] — the raw non-blocking requests it polls and abandons;
//!   [`in_flight`] — sends a server does not wait for (its replies).
//! - [`ffi`] — the same as C functions, for the runtime to call through libloading.

/// The C interface and tags, from liboffload's one definition of them (compiled here
/// too, so that this library does not link liboffload's code).
#[path = "../../src/plugins/remote/abi.rs"]
pub mod abi;
/// Message buffers on a 64-byte boundary, copies that avoid memcpy's slow case and a
/// caught panic's text: liboffload's own modules, compiled here too.
#[path = "../../src/plugin/foundation/aligned_bytes.rs"]
pub mod aligned_bytes;
#[path = "../../src/plugin/foundation/copy.rs"]
pub mod copy;
pub mod ffi;
pub mod in_flight;
#[path = "../../src/plugin/foundation/panic_text.rs"]
mod panic_text;
pub mod pending;
pub mod transport;
