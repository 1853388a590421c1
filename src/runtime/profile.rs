//! `OFFLOAD_PROFILE=out.json`: a timeline of every queue operation of every backend, in
//! the Chrome trace format (Perfetto and chrome://tracing open it).
//!
//! Backend-neutral by construction: a profiled operation is bracketed by two events of
//! its own stream, and its start and end are the completion times of those events, as
//! the device measures them (`StreamEvent::elapsed_ms` from a reference event of the
//! same device, recorded when profiling of that device began, whose host time is
//! known). Nothing is measured when the variable is unset; with it, each operation costs
//! two event records. The file is written at the last `olShutDown`.

use crate::plugin::foundation::error::Result;
use crate::plugin::{Stream, StreamEvent};
use crate::runtime::platform::Device;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

/// The file to write, from `OFFLOAD_PROFILE`.
static PATH: LazyLock<Option<String>> = LazyLock::new(|| {
    std::env::var("OFFLOAD_PROFILE")
        .ok()
        .filter(|p| !p.trim().is_empty())
});

pub fn enabled() -> bool {
    PATH.is_some()
}

/// What kind of operation a record is, the trace's category.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Copy,
    Fill,
    Kernel,
    HostFunction,
    Wait,
}

impl Category {
    fn name(self) -> &'static str {
        match self {
            Category::Copy => "copy",
            Category::Fill => "fill",
            Category::Kernel => "kernel",
            Category::HostFunction => "host function",
            Category::Wait => "wait",
        }
    }
}

/// What a record says about its operation, besides its times.
pub struct Description {
    pub category: Category,
    /// The trace's name, e.g. "saxpy" or "olMemcpy 4096 B".
    pub name: String,
    /// Extra arguments shown with the slice, as (key, value) pairs.
    pub args: Vec<(&'static str, String)>,
}

struct Record {
    device: usize,
    device_name: String,
    queue: usize,
    description: Description,
    start: Arc<dyn StreamEvent>,
    end: Arc<dyn StreamEvent>,
}

/// A device's time origin: an event and the host time at which it completed.
struct Reference {
    event: Arc<dyn StreamEvent>,
    host_time: Instant,
}

#[derive(Default)]
pub struct Profile {
    records: Mutex<Vec<Record>>,
    references: Mutex<HashMap<usize, Arc<Reference>>>,
}

/// When the process began profiling: the trace's time 0.
static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

impl Profile {
    /// Runs `enqueue` on `stream` between two events, when profiling is on.
    pub fn around(
        &self,
        device: &Arc<Device>,
        queue: usize,
        stream: &Arc<dyn Stream>,
        description: impl FnOnce() -> Description,
        enqueue: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        if !enabled() {
            return enqueue();
        }
        self.reference(device)?;
        let start = stream.record()?;
        enqueue()?;
        let end = stream.record()?;
        self.records.lock().push(Record {
            device: device.index,
            device_name: device.describe(),
            queue,
            description: description(),
            start,
            end,
        });
        Ok(())
    }

    fn reference(&self, device: &Arc<Device>) -> Result<Arc<Reference>> {
        if let Some(r) = self.references.lock().get(&device.index) {
            return Ok(r.clone());
        }
        LazyLock::force(&ORIGIN);
        let stream = device.imp.create_stream()?;
        let event = stream.record()?;
        event.synchronize()?;
        let reference = Arc::new(Reference {
            event,
            host_time: Instant::now(),
        });
        self.references
            .lock()
            .entry(device.index)
            .or_insert(reference.clone());
        Ok(reference)
    }

    /// Writes the trace (after every stream has finished) and forgets the records.
    pub fn write(&self) {
        let Some(path) = PATH.as_ref() else { return };
        let records = std::mem::take(&mut *self.records.lock());
        let references = std::mem::take(&mut *self.references.lock());
        let json = chrome_trace(&records, &references);
        if let Err(e) = std::fs::write(path, json) {
            crate::plugin::foundation::flags::trace(|| {
                format!("OFFLOAD_PROFILE: cannot write {path}: {e}")
            });
        }
    }
}

/// Microseconds from the trace's origin to `event`, on `reference`'s device clock.
fn at(reference: &Reference, event: &dyn StreamEvent) -> Option<f64> {
    let ms = reference.event.elapsed_ms(event).ok()? as f64;
    let origin = reference.host_time.duration_since(*ORIGIN).as_secs_f64() * 1e6;
    Some(origin + ms * 1e3)
}

fn chrome_trace(records: &[Record], references: &HashMap<usize, Arc<Reference>>) -> String {
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut named = std::collections::HashSet::new();
    for r in records {
        let Some(reference) = references.get(&r.device) else {
            continue;
        };
        let (Some(start), Some(end)) = (
            at(reference, r.start.as_ref()),
            at(reference, r.end.as_ref()),
        ) else {
            continue;
        };
        if !first {
            out.push_str(",\n");
        }
        first = false;
        if named.insert(r.device) {
            let _ = writeln!(
                out,
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}},",
                r.device,
                json_string(&r.device_name)
            );
        }
        let d = &r.description;
        let _ = write!(
            out,
            "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{:.3},\"dur\":{:.3},\"args\":{{",
            json_string(&d.name),
            d.category.name(),
            r.device,
            r.queue,
            start,
            (end - start).max(0.0)
        );
        for (i, (k, v)) in d.args.iter().enumerate() {
            let _ = write!(
                out,
                "{}{}:{}",
                if i > 0 { "," } else { "" },
                json_string(k),
                json_string(v)
            );
        }
        out.push_str("}}");
    }
    out.push_str("\n]}\n");
    out
}

/// `s` as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_for_json() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
