//! Whether a helper thread would find a core of its own right now, or would have to take
//! one from someone (and the caller wait for the scheduler's choice).
//!
//! Where this process may run on every core of the machine, the kernel's count of the
//! machine's runnable threads answers it (/proc/loadavg). A process confined to fewer
//! cores (a container's cpuset or CPU quota) learns nothing from that machine-wide count:
//! a busy host would keep its helpers paused while its own cores sit idle. It asks its
//! cgroup instead: how long its threads waited for a core lately (cgroup v2's
//! `cpu.pressure`, the "some" stall time). Where neither can be read, the answer is "a
//! core is free", and `helper_lag` learns otherwise from the helpers' own lateness.
//! `OFFLOAD_HOST_BUSY_CHECK=machine|cgroup|none` overrides the choice (`auto`: as above).

use super::flags::trace;
use super::worker_pool::WorkerPool;
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

/// How long one look is trusted (ns).
const LOOK_EVERY: u64 = 5_000_000;
/// The cgroup's threads waited for a core at least this part of the time since the last
/// look (in thousandths): its cores are taken.
const STALL_PER_MILLE: u64 = 100;

/// When the machine was last looked at (ns on the caller's clock, 0: never), and what
/// was seen.
static LOOKED: AtomicU64 = AtomicU64::new(0);
static NONE_IDLE: AtomicBool = AtomicBool::new(false);

/// Whether no core is idle for a helper at `now` (ns on any clock that only grows, as
/// long as it is the same one every time), looked at most every 5 ms.
pub fn none_idle(now: u64) -> bool {
    let looked = LOOKED.load(Relaxed);
    if looked != 0 && now.saturating_sub(looked) < LOOK_EVERY {
        return NONE_IDLE.load(Relaxed);
    }
    LOOKED.store(now.max(1), Relaxed);
    let busy = match signal() {
        Signal::MachineRunnable => machine_full(),
        Signal::CgroupPressure(pressure) => pressure.stalled(now),
        Signal::Nothing => false,
    };
    NONE_IDLE.store(busy, Relaxed);
    busy
}

/// What tells this process whether its cores are taken (chosen once).
enum Signal {
    /// /proc/loadavg: it may run on every core of the machine.
    MachineRunnable,
    /// Its cgroup's CPU pressure: it is confined to some of the machine's cores.
    CgroupPressure(Pressure),
    /// Helper lateness alone decides (confined, and its cgroup says nothing, as under
    /// cgroup v1; or so chosen).
    Nothing,
}

impl Signal {
    fn describe(&self) -> String {
        match self {
            Signal::MachineRunnable => "the machine's runnable threads (/proc/loadavg)".into(),
            Signal::CgroupPressure(p) => {
                format!("the cgroup's CPU pressure ({})", p.path.display())
            }
            Signal::Nothing => "not asked; helpers' lateness alone pauses them".into(),
        }
    }
}

/// `OFFLOAD_HOST_BUSY_CHECK`: which signal to use, where the automatic choice is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    Auto,
    Machine,
    Cgroup,
    Nothing,
}

fn choice(value: Option<&str>) -> Choice {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("" | "auto") => Choice::Auto,
        Some("machine" | "loadavg") => Choice::Machine,
        Some("cgroup" | "pressure") => Choice::Cgroup,
        Some("none" | "off") => Choice::Nothing,
        Some(other) => {
            trace(|| {
                format!("host: OFFLOAD_HOST_BUSY_CHECK={other} is not auto, machine, cgroup or none; auto used")
            });
            Choice::Auto
        }
    }
}

fn signal() -> &'static Signal {
    static SIGNAL: OnceLock<Signal> = OnceLock::new();
    SIGNAL.get_or_init(|| {
        let setting = choice(std::env::var("OFFLOAD_HOST_BUSY_CHECK").ok().as_deref());
        let signal = choose(
            setting,
            usable_cores(),
            online_cores(),
            cgroup_pressure_file,
        );
        trace(|| {
            format!(
                "host: whether a core is idle for a helper: {}",
                signal.describe()
            )
        });
        signal
    })
}

/// The signal for `setting`, for a process that may use `usable` of the machine's
/// `online` cores; `pressure_file` finds its cgroup's `cpu.pressure`.
fn choose(
    setting: Choice,
    usable: usize,
    online: usize,
    pressure_file: impl FnOnce() -> Option<PathBuf>,
) -> Signal {
    let pressure = || {
        pressure_file()
            .map(|path| Signal::CgroupPressure(Pressure::new(path)))
            .unwrap_or(Signal::Nothing)
    };
    match setting {
        Choice::Machine => Signal::MachineRunnable,
        Choice::Cgroup => pressure(),
        Choice::Nothing => Signal::Nothing,
        Choice::Auto if usable >= online => Signal::MachineRunnable,
        Choice::Auto => pressure(),
    }
}

/// Whether every core runs a thread already (other programs', or this one's caller and
/// spinning workers): the machine's runnable threads, less the caller and the workers
/// spinning for work (they will take helper tasks), fill the rest.
fn machine_full() -> bool {
    let pool = WorkerPool::global();
    runnable_threads(&read_small("/proc/loadavg").unwrap_or_default()).is_some_and(|running| {
        let others = running.saturating_sub(1 + pool.spinning());
        others + 1 >= online_cores().max(pool.threads())
    })
}

/// The machine's cores.
fn online_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *CORES.get_or_init(|| unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize)
}

/// The cores this process may use (its affinity mask and its cgroup's CPU quota): the
/// worker pool has a thread for each.
fn usable_cores() -> usize {
    WorkerPool::global().threads()
}

/// The count of runnable threads in /proc/loadavg's text
/// ("0.52 0.58 0.59 3/467 12345": the 3).
fn runnable_threads(loadavg: &str) -> Option<usize> {
    let field = loadavg.split_ascii_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

/// The first 256 bytes of a small kernel file, as text.
fn read_small(path: impl AsRef<Path>) -> Option<String> {
    use std::io::Read;
    let mut text = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut text))
        .ok()?;
    Some(String::from_utf8_lossy(&text[..n]).into_owned())
}

/// This process's cgroup v2 `cpu.pressure`: its cgroup's directory below a cgroup2
/// mount (from /proc/self/mountinfo: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
/// hybrid system), or the mount itself where a container sees its own cgroup there.
fn cgroup_pressure_file() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = unified_cgroup(&cgroups)?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    cgroup2_mounts(&mountinfo)
        .into_iter()
        .flat_map(|(root, mount)| pressure_candidates(own, root, mount))
        .find(|file| stall_total(&read_small(file).unwrap_or_default()).is_some())
}

/// The cgroup2 mounts in /proc/self/mountinfo's text: (the hierarchy's directory mounted,
/// where). A line reads "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS... - TYPE SOURCE ...".
fn cgroup2_mounts(mountinfo: &str) -> Vec<(&str, &str)> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            if fs.split_ascii_whitespace().next() != Some("cgroup2") {
                return None;
            }
            let mut fields = mount.split_ascii_whitespace().skip(3);
            Some((fields.next()?, fields.next()?))
        })
        .collect()
}

/// Where `own` (a path in the hierarchy) has its `cpu.pressure` under a mount of the
/// hierarchy's `root` at `mount`, then the mount's own.
fn pressure_candidates(own: &str, root: &str, mount: &str) -> Vec<PathBuf> {
    let mount = Path::new(mount);
    let below = own.strip_prefix(root).map(|rest| {
        mount
            .join(rest.trim_start_matches('/'))
            .join("cpu.pressure")
    });
    below
        .into_iter()
        .chain([mount.join("cpu.pressure")])
        .collect()
}

/// The unified (v2) hierarchy's path in /proc/self/cgroup's text: the "0::" line.
fn unified_cgroup(cgroups: &str) -> Option<&str> {
    cgroups.lines().find_map(|line| line.strip_prefix("0::"))
}

/// The "some" line's cumulative stall time in µs from `cpu.pressure`'s text
/// ("some avg10=0.00 avg60=0.00 avg300=0.00 total=12345").
fn stall_total(pressure: &str) -> Option<u64> {
    let some = pressure.lines().find(|l| l.starts_with("some "))?;
    some.split_ascii_whitespace()
        .find_map(|field| field.strip_prefix("total="))?
        .parse()
        .ok()
}

/// A cgroup's `cpu.pressure` file and what it said last.
struct Pressure {
    path: PathBuf,
    /// (when, in ns; the stall total then, in µs) at the last look.
    last: Mutex<Option<(u64, u64)>>,
}

impl Pressure {
    fn new(path: PathBuf) -> Self {
        Pressure {
            path,
            last: Mutex::new(None),
        }
    }

    /// Whether the cgroup's threads waited for a core for a tenth or more of the time
    /// since the last look (false at the first look, or where the file cannot be read).
    fn stalled(&self, now: u64) -> bool {
        let Some(total) = read_small(&self.path).and_then(|t| stall_total(&t)) else {
            return false;
        };
        let previous = self.last.lock().replace((now, total));
        previous.is_some_and(|(then, before)| stalled_between(then, before, now, total))
    }
}

/// Whether `total - before` µs of stall within `then..now` ns is a tenth or more of it.
fn stalled_between(then: u64, before: u64, now: u64, total: u64) -> bool {
    let window_us = now.saturating_sub(then) / 1_000;
    window_us > 0 && total.saturating_sub(before) * 1_000 >= window_us * STALL_PER_MILLE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_threads_are_read_from_loadavg() {
        assert_eq!(runnable_threads("0.52 0.58 0.59 3/467 12345\n"), Some(3));
        assert_eq!(runnable_threads("0.52 0.58"), None);
        assert_eq!(runnable_threads("a b c x/4 5"), None);
        // At least this test's thread runs (where /proc is mounted).
        if let Some(text) = read_small("/proc/loadavg") {
            assert!(runnable_threads(&text).unwrap() >= 1);
        }
    }

    #[test]
    fn the_unified_cgroup_line_is_found() {
        let v2 = "0::/user.slice/user-0.slice/session-1.scope\n";
        assert_eq!(
            unified_cgroup(v2),
            Some("/user.slice/user-0.slice/session-1.scope")
        );
        let hybrid = "4:memory:/a\n1:cpu:/\n0::/\n";
        assert_eq!(unified_cgroup(hybrid), Some("/"));
        assert_eq!(unified_cgroup("4:memory:/a\n1:cpu:/\n"), None);
    }

    #[test]
    fn cgroup2_mounts_are_found_in_mountinfo() {
        let text = "30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n\
                    41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n\
                    50 41 0:38 /docker/abc /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_mounts(text),
            vec![
                ("/", "/sys/fs/cgroup/unified"),
                ("/docker/abc", "/sys/fs/cgroup")
            ]
        );
    }

    #[test]
    fn the_pressure_file_is_below_the_mount() {
        let at = |s: &str| PathBuf::from(s);
        assert_eq!(
            pressure_candidates("/user.slice/a", "/", "/sys/fs/cgroup"),
            [
                at("/sys/fs/cgroup/user.slice/a/cpu.pressure"),
                at("/sys/fs/cgroup/cpu.pressure")
            ]
        );
        // A container's own cgroup mounted as the root of its view.
        assert_eq!(
            pressure_candidates("/docker/abc", "/docker/abc", "/sys/fs/cgroup"),
            [
                at("/sys/fs/cgroup/cpu.pressure"),
                at("/sys/fs/cgroup/cpu.pressure")
            ]
        );
        // A path outside the mounted part: only the mount's own file.
        assert_eq!(
            pressure_candidates("/other", "/docker/abc", "/sys/fs/cgroup"),
            [at("/sys/fs/cgroup/cpu.pressure")]
        );
    }

    #[test]
    fn this_machines_cgroup_pressure_is_read_where_there_is_one() {
        // Where the kernel has PSI and a cgroup2 mount (this project's machines have
        // one at /sys/fs/cgroup/unified), the file is found and says a total.
        let Some(file) = cgroup_pressure_file() else {
            return;
        };
        let total = stall_total(&read_small(&file).unwrap()).unwrap();
        let pressure = Pressure::new(file);
        assert!(!pressure.stalled(1));
        let later = read_small(&pressure.path)
            .and_then(|t| stall_total(&t))
            .unwrap();
        assert!(later >= total, "the total only grows");
    }

    #[test]
    fn the_signal_follows_the_setting_and_the_confinement() {
        let file = || Some(PathBuf::from("/x/cpu.pressure"));
        let none = || None;
        let is_machine = |s: Signal| matches!(s, Signal::MachineRunnable);
        let is_pressure = |s: Signal| matches!(s, Signal::CgroupPressure(_));
        let is_nothing = |s: Signal| matches!(s, Signal::Nothing);
        assert!(is_machine(choose(Choice::Auto, 8, 8, file)));
        assert!(is_pressure(choose(Choice::Auto, 2, 8, file)));
        assert!(is_nothing(choose(Choice::Auto, 2, 8, none)));
        assert!(is_machine(choose(Choice::Machine, 2, 8, file)));
        assert!(is_pressure(choose(Choice::Cgroup, 8, 8, file)));
        assert!(is_nothing(choose(Choice::Nothing, 8, 8, file)));
        assert_eq!(choice(None), Choice::Auto);
        assert_eq!(choice(Some(" Cgroup ")), Choice::Cgroup);
        assert_eq!(choice(Some("none")), Choice::Nothing);
        assert_eq!(choice(Some("machine")), Choice::Machine);
        assert_eq!(choice(Some("sometimes")), Choice::Auto);
    }

    #[test]
    fn the_stall_total_is_the_some_lines() {
        let text = "some avg10=1.49 avg60=3.13 avg300=7.07 total=9781445417\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(stall_total(text), Some(9_781_445_417));
        assert_eq!(stall_total("full avg10=0.00 total=5\n"), None);
        assert_eq!(stall_total("some avg10=0.00\n"), None);
    }

    #[test]
    fn a_tenth_of_the_time_stalled_means_no_idle_core() {
        // 10 ms apart: 1 ms of stall is a tenth, 0.5 ms is not.
        assert!(stalled_between(0, 100, 10_000_000, 1_100));
        assert!(!stalled_between(0, 100, 10_000_000, 600));
        // No time passed, or the total went back (a new cgroup): not stalled.
        assert!(!stalled_between(5, 0, 5, 1_000));
        assert!(!stalled_between(0, 900, 10_000_000, 100));
    }

    #[test]
    fn a_pressure_file_is_judged_between_two_looks() {
        let dir = std::env::temp_dir().join(format!("idle_core_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cpu.pressure");
        let write = |total: u64| {
            std::fs::write(
                &file,
                format!(
                    "some avg10=0.00 avg60=0.00 avg300=0.00 total={total}\n\
                     full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                ),
            )
            .unwrap()
        };
        let pressure = Pressure::new(file.clone());
        write(1_000);
        assert!(
            !pressure.stalled(1_000_000),
            "the first look has nothing to compare"
        );
        write(1_100);
        assert!(!pressure.stalled(21_000_000), "0.1 ms of 20 ms");
        write(9_100);
        assert!(pressure.stalled(41_000_000), "8 ms of 20 ms");
        std::fs::remove_file(&file).unwrap();
        assert!(
            !pressure.stalled(61_000_000),
            "an unreadable file says nothing"
        );
        std::fs::remove_dir(&dir).unwrap();
    }
}
