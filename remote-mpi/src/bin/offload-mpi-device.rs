//! `offload-mpi-device`: serves every device of this process (the host, and GPUs when
//! present) to the application, the last rank of the MPI job:
//!
//! ```text
//! mpirun -np 2 offload-mpi-device : -np 1 ./app
//! ```
//!
//! It answers one request at a time until the application says `Exit` (liboffload does
//! at exit). Every failure goes back as an error reply naming this rank.

use offload::plugin::{AllocKind, Backend, Device, DeviceInfo};
use offload::plugins::remote::fragments::{self, DEFAULT_FRAGMENT};
use offload::plugins::remote::wire::{Reply, Request};
use offload::runtime::error::ErrorCode;
use offload_remote_mpi::transport::{Transport, TAG_DATA, TAG_REPLY, TAG_REQUEST};
use std::process::ExitCode;
use std::sync::Arc;

struct Server {
    transport: Transport,
    app: i32,
    devices: Vec<Arc<dyn Device>>,
}

/// A request's answer, and the bytes that follow it (a read's data).
type Served = Result<(Reply, Vec<u8>), (ErrorCode, String)>;

fn main() -> ExitCode {
    let transport = match Transport::open() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("offload-mpi-device: {e}");
            return ExitCode::from(1);
        }
    };
    let app = transport.size() - 1;
    if transport.rank() == app {
        eprintln!(
            "offload-mpi-device: this is the last rank, which belongs to the application; start it as: mpirun -np N offload-mpi-device : -np 1 ./app"
        );
        return ExitCode::from(2);
    }
    // Every local backend; never the remote one (this process serves, it is no client).
    let devices = offload::plugins::available()
        .into_iter()
        .filter(|p| p.backend() != Backend::Mpi)
        .flat_map(|p| p.devices())
        .collect();
    let server = Server {
        transport,
        app,
        devices,
    };
    server.run()
}

impl Server {
    fn run(&self) -> ExitCode {
        loop {
            let bytes = match self.transport.receive(self.app, TAG_REQUEST, None) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("offload-mpi-device: {e}");
                    return ExitCode::from(1);
                }
            };
            let (reply, exit) = match Request::decode(&bytes) {
                Ok(request) => {
                    let exit = request == Request::Exit;
                    (self.serve(request), exit)
                }
                Err(e) => (
                    Err((
                        ErrorCode::InvalidArgument,
                        format!("a request it cannot read: {}", e.0),
                    )),
                    false,
                ),
            };
            let (reply, data) = reply.unwrap_or_else(|(code, details)| {
                let details = format!("rank {}: {details}", self.transport.rank());
                let code = code as u32;
                (Reply::Error { code, details }, Vec::new())
            });
            let sent = self
                .transport
                .send(self.app, TAG_REPLY, &reply.encode())
                .and_then(|()| self.send_data(&data));
            if let Err(e) = sent {
                eprintln!("offload-mpi-device: {e}");
                return ExitCode::from(1);
            }
            if exit {
                return ExitCode::SUCCESS;
            }
        }
    }

    fn device(&self, index: u32) -> Result<&Arc<dyn Device>, (ErrorCode, String)> {
        self.devices.get(index as usize).ok_or((
            ErrorCode::InvalidDevice,
            format!("no device {index} (this server has {})", self.devices.len()),
        ))
    }

    fn serve(&self, request: Request) -> Served {
        let failed = |e: offload::runtime::error::Error| (e.code, e.details.clone());
        match request {
            Request::Hello => Ok((Reply::Devices(self.describe()), Vec::new())),
            Request::Exit => Ok((Reply::Done, Vec::new())),
            Request::Alloc { device, kind, size } => {
                let kind = AllocKind::try_from(kind).map_err(|k| {
                    (
                        ErrorCode::InvalidEnumeration,
                        format!("allocation kind {k}"),
                    )
                })?;
                let address = self
                    .device(device)?
                    .allocate(size as usize, kind)
                    .map_err(failed)?;
                Ok((Reply::Value(address as u64), Vec::new()))
            }
            Request::Free {
                device,
                kind,
                address,
                size,
            } => {
                let kind = AllocKind::try_from(kind).map_err(|k| {
                    (
                        ErrorCode::InvalidEnumeration,
                        format!("allocation kind {k}"),
                    )
                })?;
                self.device(device)?
                    .free(address as usize, size as usize, kind)
                    .map_err(failed)?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::Write {
                device,
                address,
                size,
            } => {
                // The data follows whether or not the device exists: read it first.
                let data = self.receive_data(size)?;
                self.device(device)?
                    .copy_to_device(address as usize, data.as_ptr() as usize, data.len())
                    .map_err(failed)?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::Read {
                device,
                address,
                size,
            } => {
                let mut data = vec![0u8; size as usize];
                self.device(device)?
                    .copy_from_device(data.as_mut_ptr() as usize, address as usize, data.len())
                    .map_err(failed)?;
                // The data follows the reply, so a failed read sends none.
                Ok((Reply::Done, data))
            }
            other => Err((
                ErrorCode::Unimplemented,
                format!("{other:?} is not served yet"),
            )),
        }
    }

    /// Every device's info, with the name saying which rank serves it.
    fn describe(&self) -> Vec<Vec<(u32, offload::plugin::InfoValue)>> {
        let rank = self.transport.rank();
        self.devices
            .iter()
            .map(|d| {
                DeviceInfo::all()
                    .filter_map(|key| {
                        let value = d.info(key).ok()?;
                        let value = match (key, value) {
                            (DeviceInfo::Name, offload::plugin::InfoValue::Str(s)) => {
                                offload::plugin::InfoValue::Str(format!("rank {rank}: {s}"))
                            }
                            (_, v) => v,
                        };
                        Some((key as u32, value))
                    })
                    .collect()
            })
            .collect()
    }

    fn receive_data(&self, size: u64) -> Result<Vec<u8>, (ErrorCode, String)> {
        let mut data = Vec::with_capacity(size as usize);
        for (_, len) in fragments::pieces(size, DEFAULT_FRAGMENT) {
            let piece = self
                .transport
                .receive(self.app, TAG_DATA, None)
                .map_err(|e| (ErrorCode::BackendFailure, e))?;
            if piece.len() as u64 != len {
                return Err((
                    ErrorCode::InvalidSize,
                    format!("a data fragment of {} bytes, expected {len}", piece.len()),
                ));
            }
            data.extend_from_slice(&piece);
        }
        Ok(data)
    }

    fn send_data(&self, data: &[u8]) -> Result<(), String> {
        for (offset, len) in fragments::pieces(data.len() as u64, DEFAULT_FRAGMENT) {
            let piece = &data[offset as usize..(offset + len) as usize];
            self.transport.send(self.app, TAG_DATA, piece)?;
        }
        Ok(())
    }
}
