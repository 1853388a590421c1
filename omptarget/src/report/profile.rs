//! `LIBOMPTARGET_PROFILE=out.json`: LLVM's construct-level timeline (its `TIMESCOPE`s:
//! "Runtime: target exe", "Runtime: Data Copy", "Kernel Target", "HostToDev",
//! "DevToHost") in the Chrome trace format, written when the program unregisters, so
//! Perfetto and chrome://tracing open it as they open LLVM's. As in LLVM, scopes shorter
//! than `LIBOMPTARGET_PROFILE_GRANULARITY` microseconds (default 500) are left out.
//! liboffload's own `OFFLOAD_PROFILE` shows the queue operations underneath.

use offload::runtime::profile::json_string;
use parking_lot::Mutex;
use std::fmt::Write as _;
use std::sync::LazyLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

static PATH: LazyLock<Option<String>> = LazyLock::new(|| {
    std::env::var("LIBOMPTARGET_PROFILE")
        .ok()
        .filter(|p| !p.trim().is_empty())
});

static GRANULARITY_US: LazyLock<f64> = LazyLock::new(|| {
    std::env::var("LIBOMPTARGET_PROFILE_GRANULARITY")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(500.0)
});

/// The trace's time origin, and the wall-clock time it stands for.
static ORIGIN: LazyLock<(Instant, SystemTime)> =
    LazyLock::new(|| (Instant::now(), SystemTime::now()));

/// One finished scope.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub name: &'static str,
    pub detail: String,
    pub thread: u64,
    pub start_us: f64,
    pub duration_us: f64,
}

static EVENTS: Mutex<Vec<Event>> = Mutex::new(Vec::new());

pub fn enabled() -> bool {
    PATH.is_some()
}

/// A construct being timed; recorded when dropped.
pub struct Scope {
    name: &'static str,
    detail: String,
    start: Instant,
}

/// Starts timing `name` (the detail is built only when profiling).
pub fn scope(name: &'static str, detail: impl FnOnce() -> String) -> Option<Scope> {
    enabled().then(|| {
        LazyLock::force(&ORIGIN);
        Scope {
            name,
            detail: detail(),
            start: Instant::now(),
        }
    })
}

fn thread_id() -> u64 {
    // SAFETY: gettid has no preconditions.
    u64::try_from(unsafe { libc::gettid() }).unwrap_or(0)
}

impl Drop for Scope {
    fn drop(&mut self) {
        let duration_us = self.start.elapsed().as_secs_f64() * 1e6;
        if duration_us < *GRANULARITY_US {
            return;
        }
        let start_us = self.start.duration_since(ORIGIN.0).as_secs_f64() * 1e6;
        EVENTS.lock().push(Event {
            name: self.name,
            detail: std::mem::take(&mut self.detail),
            thread: thread_id(),
            start_us,
            duration_us,
        });
    }
}

/// The Chrome trace of `events`: one complete ("X") event per scope, then one "Total"
/// event per name (their summed time, as LLVM's profiler adds), `beginningOfTime` in
/// microseconds since the epoch.
pub fn trace_json(events: &[Event], process: u32, beginning_us: u128) -> String {
    let mut out = String::from("{\"traceEvents\":[");
    let mut totals: Vec<(&'static str, f64, usize)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"pid\":{process},\"tid\":{},\"ph\":\"X\",\"ts\":{:.3},\"dur\":{:.3},\"name\":{},\"args\":{{\"detail\":{}}}}}",
            e.thread,
            e.start_us,
            e.duration_us,
            json_string(e.name),
            json_string(&e.detail)
        );
        match totals.iter_mut().find(|t| t.0 == e.name) {
            Some(t) => {
                t.1 += e.duration_us;
                t.2 += 1;
            }
            None => totals.push((e.name, e.duration_us, 1)),
        }
    }
    for (name, total, count) in totals {
        if out.ends_with('}') {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"pid\":{process},\"tid\":0,\"ph\":\"X\",\"ts\":0,\"dur\":{total:.3},\"name\":{},\"args\":{{\"count\":{count},\"avg us\":{:.3}}}}}",
            json_string(&format!("Total {name}")),
            total / count as f64
        );
    }
    let _ = write!(out, "],\"beginningOfTime\":{beginning_us}}}");
    out
}

/// Writes the trace (at the last unregistration); a file that cannot be written is
/// said on stderr, never fatal.
pub fn write() {
    let Some(path) = PATH.as_deref() else {
        return;
    };
    let events = std::mem::take(&mut *EVENTS.lock());
    let beginning = ORIGIN
        .1
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    let json = trace_json(&events, std::process::id(), beginning);
    if let Err(e) = std::fs::write(path, json) {
        crate::report::policy::message(&format!(
            "error: LIBOMPTARGET_PROFILE: cannot write {path}: {e}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_has_one_event_per_scope_and_a_total_per_name() {
        let events = vec![
            Event {
                name: "Kernel Target",
                detail: "NumArguments=2;NumTeams=1;TripCount=0".into(),
                thread: 7,
                start_us: 10.0,
                duration_us: 2.5,
            },
            Event {
                name: "Kernel Target",
                detail: "quote\"here".into(),
                thread: 7,
                start_us: 20.0,
                duration_us: 1.5,
            },
        ];
        let json = trace_json(&events, 42, 1000);
        assert!(json.starts_with("{\"traceEvents\":[{\"pid\":42,\"tid\":7,\"ph\":\"X\",\"ts\":10.000,\"dur\":2.500,\"name\":\"Kernel Target\""));
        assert!(json.contains("quote\\\"here"));
        assert!(json
            .contains("\"name\":\"Total Kernel Target\",\"args\":{\"count\":2,\"avg us\":2.000}"));
        assert!(json.ends_with("],\"beginningOfTime\":1000}"));
        assert_eq!(
            trace_json(&[], 1, 5),
            "{\"traceEvents\":[],\"beginningOfTime\":5}"
        );
    }
}
