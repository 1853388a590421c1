//! Host steps: work a stream runs on the host in order (host functions, waits on other
//! backends' events, the staging halves of copies, fills the runtime does
//! synchronously). A step waits for its dependency through
//! `hsa_amd_signal_async_handler`, whose handler only hands the step to the stream's
//! host-step thread: the runtime's handler thread never runs user code, so a slow host
//! function delays neither other signals' handlers nor other streams. The step's own
//! signal completes after it ran, which the stream's next operations wait for. The
//! thread ends when its stream is gone and its last step has run.

use super::hsa::Hsa;
use super::signal::PooledSignal;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::flags::trace;
use crate::plugin::{keep_first_failure, run_host_work, HostWork};
use crossbeam_channel::Sender;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;

pub struct Job {
    pub name: &'static str,
    pub work: HostWork,
    /// Completed after `work` ran (failed or not: later steps run, as on other backends).
    pub done: Arc<PooledSignal>,
    pub errors: Arc<Mutex<Option<Error>>>,
    /// Held until the step runs, so the signal is not reused while the handler waits.
    pub after: Option<Arc<PooledSignal>>,
}

impl Job {
    fn run(self) {
        let Job {
            name,
            work,
            done,
            errors,
            after,
        } = self;
        drop(after);
        keep_first_failure(&errors, name, run_host_work(work));
        done.complete();
    }
}

/// A stream's host-step thread.
pub struct HostSteps {
    tx: Sender<Job>,
}

impl HostSteps {
    pub fn start(label: &str) -> Result<HostSteps> {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        std::thread::Builder::new()
            .name(format!("offload-amdgpu-host {label}"))
            .spawn(move || rx.into_iter().for_each(Job::run))
            .map_err(|e| {
                Error::out_of_resources(format!("cannot start a host-step thread: {e}"))
            })?;
        Ok(HostSteps { tx })
    }

    /// Runs `job` once its dependency (`job.after`) is done.
    pub fn schedule(&self, hsa: &Hsa, job: Job) -> Result<()> {
        let dep = match &job.after {
            Some(dep) if !dep.is_done() => dep.handle(),
            _ => return self.send(job),
        };
        let boxed = Box::new((job, self.tx.clone()));
        let data = Box::into_raw(boxed) as *mut c_void;
        // SAFETY: `forward` takes the box back exactly once and returns false (called
        // once); on an error the runtime never calls it and the box is reclaimed here.
        let queued = unsafe { hsa.signal_when_below(dep, 1, forward, data) };
        if let Err(e) = queued {
            // SAFETY: the runtime refused the handler, so `data` is still ours.
            drop(unsafe { Box::from_raw(data as *mut (Job, Sender<Job>)) });
            return Err(e);
        }
        Ok(())
    }

    fn send(&self, job: Job) -> Result<()> {
        self.tx
            .send(job)
            .map_err(|_| Error::backend_failure("the device's host-step thread has stopped"))
    }
}

unsafe extern "C" fn forward(_value: i64, data: *mut c_void) -> bool {
    // SAFETY: `data` is the box leaked by `schedule`, given to us once.
    let (job, tx) = *unsafe { Box::from_raw(data as *mut (Job, Sender<Job>)) };
    if let Err(e) = tx.send(job) {
        // The device is gone; the step cannot run. Complete it so no waiter hangs.
        trace(|| "AMDGPU: a host step arrived after its device was closed".to_string());
        e.into_inner().done.complete();
    }
    false
}
