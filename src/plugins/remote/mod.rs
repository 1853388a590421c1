//! Remote devices over MPI (issue 11, in progress): every device of a device-server
//! process (`offload-mpi-device`, one per MPI rank, the `remote-mpi` crate) appears in
//! the application as an ordinary device of the MPI platform.
//!
//! - [`wire`] — requests and replies as bytes; [`fragments`] — how transfers are cut.
//! - [`link`] — the MPI transport library, opened only under an MPI launcher.
//! - [`address`] — remote memory at addresses the application reserved for it.
//! - [`session`] — the server ranks and one whole exchange at a time with each.
//! - [`device`], [`plugin`] — the devices and the platform.
//! - [`program`], [`stream`] — programs and kernels on a server; queues and events.
//!
//! Served so far: discovery with every info value, memory of every kind, copies between
//! the application and a server and within a server's device, fills, programs (images
//! checked and loaded by the server's own backend), kernels and globals, queues (each
//! operation done when enqueued) and events. Copies between two servers answer
//! "not served yet" (`OL_ERRC_UNIMPLEMENTED`).

pub mod address;
pub mod device;
pub mod fragments;
pub mod link;
pub mod plugin;
pub mod program;
pub mod session;
pub mod stream;
pub mod wire;
