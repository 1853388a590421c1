//! Errors the HSA runtime reports from its own threads: a failed packet (the queue's
//! error callback) and a GPU memory fault (the system event handler). Each is kept in an
//! `ErrorSlot` that streams check while they wait, so a fault is an error returned by
//! the next synchronize, with its reason, never an `exit()` inside the library.

use super::ffi::{
    fault_reason as r, AmdEvent, HsaStatus, MemoryFaultInfo, GPU_MEMORY_FAULT_EVENT, STATUS_SUCCESS,
};
use super::hsa::Hsa;
use crate::plugin::foundation::error::Error;
use crate::plugin::foundation::flags::trace;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The first asynchronous error of a queue or a device. Once set it stays: the queue or
/// device cannot run anything after it (the runtime stops a faulting queue).
#[derive(Default)]
pub struct ErrorSlot {
    set: AtomicBool,
    error: Mutex<Option<Error>>,
}

impl ErrorSlot {
    pub fn record(&self, error: Error) {
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some(error);
            self.set.store(true, Ordering::Release);
        }
    }

    /// The error, if one was recorded (cheap when none was).
    pub fn get(&self) -> Option<Error> {
        if !self.set.load(Ordering::Acquire) {
            return None;
        }
        self.error.lock().clone()
    }
}

/// The reasons of a fault's mask, in words.
pub fn fault_reasons(mask: u32) -> Vec<&'static str> {
    const NAMES: [(u32, &str); 8] = [
        (
            r::PAGE_NOT_PRESENT,
            "page not present or supervisor privilege",
        ),
        (r::READ_ONLY, "write access to a read-only page"),
        (r::NX, "execute access to a non-executable page"),
        (r::HOST_ONLY, "access to host-only memory"),
        (r::DRAMECC, "DRAM ECC failure"),
        (r::IMPRECISE, "imprecise fault (the address may be wrong)"),
        (r::SRAMECC, "SRAM ECC failure"),
        (r::HANG, "the GPU hung"),
    ];
    let reasons: Vec<&str> = NAMES
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|&(_, n)| n)
        .collect();
    if reasons.is_empty() {
        vec!["unknown reason"]
    } else {
        reasons
    }
}

pub fn fault_message(info: &MemoryFaultInfo) -> String {
    format!(
        "GPU memory access fault at address 0x{:x}: {}",
        info.virtual_address,
        fault_reasons(info.fault_reason_mask).join(", ")
    )
}

/// The devices' slots by agent handle, for the handler (faults are rare; a lookup
/// under a read lock there costs nothing on any other path).
fn devices() -> &'static RwLock<HashMap<u64, Arc<ErrorSlot>>> {
    static DEVICES: OnceLock<RwLock<HashMap<u64, Arc<ErrorSlot>>>> = OnceLock::new();
    DEVICES.get_or_init(Default::default)
}

unsafe extern "C" fn on_system_event(event: *const AmdEvent, _data: *mut c_void) -> HsaStatus {
    // SAFETY: the runtime passes a valid event for the duration of the call.
    let Some(event) = (unsafe { event.as_ref() }) else {
        return STATUS_SUCCESS;
    };
    if event.event_type == GPU_MEMORY_FAULT_EVENT {
        let info = event.memory_fault;
        let message = fault_message(&info);
        trace(|| format!("AMDGPU: {message}"));
        if let Some(slot) = devices().read().get(&info.agent.handle) {
            slot.record(Error::backend_failure(message));
        }
    }
    STATUS_SUCCESS
}

/// Sends `agent`'s memory faults to `slot`; registers the handler once per process.
pub fn watch_device(hsa: &Hsa, agent: u64, slot: Arc<ErrorSlot>) {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    devices().write().insert(agent, slot);
    REGISTERED.get_or_init(|| {
        // SAFETY: the handler is a plain function and takes no data.
        let s =
            unsafe { (hsa.f.register_system_event_handler)(on_system_event, std::ptr::null_mut()) };
        if let Err(e) = hsa.check(s, "hsa_amd_register_system_event_handler") {
            trace(|| format!("AMDGPU: memory faults will not be reported with their reason: {e}"));
        }
        s == STATUS_SUCCESS
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::amdgpu::ffi::Agent;

    #[test]
    fn fault_reasons_are_named() {
        assert_eq!(
            fault_reasons(r::PAGE_NOT_PRESENT),
            vec!["page not present or supervisor privilege"]
        );
        assert_eq!(fault_reasons(r::READ_ONLY | r::HANG).len(), 2);
        assert_eq!(fault_reasons(0), vec!["unknown reason"]);
        let info = MemoryFaultInfo {
            agent: Agent { handle: 7 },
            virtual_address: 0x7f00_dead_b000,
            fault_reason_mask: r::PAGE_NOT_PRESENT | r::IMPRECISE,
        };
        assert_eq!(
            fault_message(&info),
            "GPU memory access fault at address 0x7f00deadb000: page not present or supervisor \
             privilege, imprecise fault (the address may be wrong)"
        );
    }

    #[test]
    fn the_first_error_is_kept() {
        let slot = ErrorSlot::default();
        assert!(slot.get().is_none());
        slot.record(Error::backend_failure("first"));
        slot.record(Error::backend_failure("second"));
        assert_eq!(slot.get().unwrap().details, "first");
        assert_eq!(slot.get().unwrap().details, "first", "it stays");
    }

    #[test]
    fn the_handler_records_a_fault_for_its_device() {
        let slot = Arc::new(ErrorSlot::default());
        devices().write().insert(0xfeed, slot.clone());
        let event = AmdEvent {
            event_type: GPU_MEMORY_FAULT_EVENT,
            memory_fault: MemoryFaultInfo {
                agent: Agent { handle: 0xfeed },
                virtual_address: 0x1000,
                fault_reason_mask: r::NX,
            },
        };
        // SAFETY: a valid event, as the runtime would pass.
        assert_eq!(
            unsafe { on_system_event(&event, std::ptr::null_mut()) },
            STATUS_SUCCESS
        );
        let e = slot.get().expect("recorded");
        assert!(
            e.details.contains("0x1000") && e.details.contains("non-executable"),
            "{}",
            e.details
        );
        // SAFETY: NULL is tolerated.
        assert_eq!(
            unsafe { on_system_event(std::ptr::null(), std::ptr::null_mut()) },
            STATUS_SUCCESS
        );
        devices().write().remove(&0xfeed);
    }
}
