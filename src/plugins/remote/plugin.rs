//! The remote platform (`OL_PLATFORM_BACKEND_MPI`): every device of every server rank.

use super::device::RemoteDevice;
use super::session::session;
use super::wire::{Reply, Request};
use crate::plugin::foundation::flags::trace;
use crate::plugin::{self, Backend};
use std::sync::Arc;

pub struct RemotePlugin;

impl plugin::Plugin for RemotePlugin {
    fn backend(&self) -> Backend {
        Backend::Mpi
    }

    fn name(&self) -> String {
        String::from("MPI")
    }

    fn vendor(&self) -> String {
        String::from("liboffload")
    }

    fn version(&self) -> String {
        String::from(env!("CARGO_PKG_VERSION"))
    }

    fn devices(&self) -> Vec<Arc<dyn plugin::Device>> {
        let session = match session() {
            Ok(s) => s,
            Err(reason) => {
                trace(|| format!("MPI: no devices: {reason}"));
                return Vec::new();
            }
        };
        let mut devices: Vec<Arc<dyn plugin::Device>> = Vec::new();
        for rank in session.server_ranks() {
            let hello = Request::Hello {
                pid: std::process::id(),
                host: super::wire::this_host(),
            };
            match session.exchange(rank, &hello, &[], &mut []) {
                Ok(Reply::Devices(list)) => {
                    for (index, info) in list.into_iter().enumerate() {
                        devices.push(Arc::new_cyclic(|this| RemoteDevice {
                            this: this.clone(),
                            session: session.clone(),
                            rank,
                            index: index as u32,
                            info,
                            mirrored: Default::default(),
                        }));
                    }
                }
                Ok(other) => trace(|| format!("MPI: rank {rank} answered {other:?}")),
                Err(e) => trace(|| format!("MPI: rank {rank}: {}", e.details)),
            }
        }
        trace(|| format!("MPI: {} device(s)", devices.len()));
        devices
    }
}
