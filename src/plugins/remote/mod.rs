//! Remote devices over MPI: every device of a device-server process
//! (`offload-mpi-device`, one per MPI rank, the `remote-mpi` crate) appears in the
//! application as an ordinary device of the MPI platform.
//!
//! - [`wire`] — requests and replies as bytes; [`fragments`] — how transfers are cut.
//! - [`link`] — the MPI transport library, opened only under an MPI launcher.
//! - [`address`] — remote memory at one address on both sides, never another device's;
//!   HOST and MANAGED memory shared with a server on this node.
//! - [`session`] — the server ranks and the exchanges with them, each with its own tag;
//!   [`engine`] — the thread that waits for replies of long exchanges.
//! - [`device`], [`plugin`] — the devices and the platform.
//! - [`program`], [`stream`] — programs and kernels on a server; queues (kernels queued
//!   on a server stream without an answer each) and events.

pub mod address;
pub mod device;
pub mod engine;
pub mod fragments;
pub mod link;
pub mod plugin;
pub mod program;
pub mod session;
pub mod stream;
pub mod wire;
