//! The application's process, where it runs on this server's host: a server whose
//! application ended without saying `Exit` (it crashed or was killed) ends too, instead
//! of waiting for a request that never comes. (mpirun ends the whole job itself when a
//! rank fails, unless it runs with `--enable-recovery`, as a job that survives a lost
//! server must.) On another host only the application's `Exit` ends a server.

/// One process, known by its id and its start time (an id is reused, a start time is
/// not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppProcess {
    pid: i32,
    started: u64,
}

/// A process's state letter and start time (in clock ticks after boot) from
/// `/proc/<pid>/stat`; `None` where there is no such process.
fn state_and_start(pid: i32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything: fields after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Field 22 of the whole line is the 20th after the state.
    let started = fields.nth(18)?.parse().ok()?;
    Some((state, started))
}

impl AppProcess {
    /// The application, when `host` is this host and `pid` a live process here.
    pub fn on_this_host(pid: u32, host: &str) -> Option<AppProcess> {
        let pid = i32::try_from(pid).ok().filter(|&p| p > 0)?;
        if host.is_empty() || host != offload::plugins::remote::wire::this_host() {
            return None;
        }
        let (_, started) = state_and_start(pid)?;
        Some(AppProcess { pid, started })
    }

    /// Whether the process ended (gone, a zombie, or its id now another process's).
    pub fn is_gone(&self) -> bool {
        match state_and_start(self.pid) {
            Some((state, started)) => matches!(state, 'Z' | 'X') || started != self.started,
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_found_and_a_finished_child_is_gone() {
        let host = offload::plugins::remote::wire::this_host();
        let me = AppProcess::on_this_host(std::process::id(), &host).expect("this process");
        assert!(!me.is_gone());
        assert!(AppProcess::on_this_host(std::process::id(), "another-host.invalid").is_none());
        assert!(AppProcess::on_this_host(0, &host).is_none());
        let mut child = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let watched = AppProcess::on_this_host(child.id(), &host).expect("the child");
        assert!(!watched.is_gone());
        // Ended but not reaped yet: a zombie is gone too.
        std::thread::sleep(std::time::Duration::from_millis(600));
        assert!(watched.is_gone(), "a zombie");
        child.wait().unwrap();
        assert!(watched.is_gone(), "reaped");
    }
}
