//! Memory placed at an address a caller chooses (`olMemAllocAt`), on a GPU whose driver
//! maps memory in granules (virtual memory management: CUDA's cuMemAddressReserve/
//! cuMemMap, HSA's hsa_amd_vmem_*): the bookkeeping each such backend shares.
//!
//! A placement covers every granule its bytes touch. A mapping is unmapped whole, so the
//! granules are mapped in runs: a placement that touches a granule an earlier one mapped
//! shares that run (neighbouring allocations of a recording often share a granule), the
//! granules no run covers get new runs, and a run is unmapped when no placement uses it.

use super::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};

/// What a backend's virtual memory management does for placements.
pub trait RunMapper {
    /// The granule, a power of two.
    fn granule(&self) -> usize;
    /// Reserves exactly `[start, start + len)` (granule-aligned), or says the range is
    /// taken, and backs it with device memory the device may read and write.
    fn map_run(&self, start: usize, len: usize) -> Result<()>;
    /// Unmaps a run `map_run` made and gives its range back.
    fn unmap_run(&self, start: usize, len: usize) -> Result<()>;
}

/// The placements of one device.
#[derive(Default)]
pub struct PlacedRuns {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Mapped runs: start -> (length, placements using it).
    runs: BTreeMap<usize, (usize, usize)>,
    /// Each placement's address -> the starts of the runs it uses.
    placed: HashMap<usize, Vec<usize>>,
}

impl State {
    /// The run holding byte `at`.
    fn run_holding(&self, at: usize) -> Option<(usize, usize)> {
        let (&start, &(len, _)) = self.runs.range(..=at).next_back()?;
        (at - start < len).then_some((start, len))
    }
}

/// The granules `[at, at + size)` touches: (start, length).
fn span(granule: usize, at: usize, size: usize) -> Result<(usize, usize)> {
    let start = at & !(granule - 1);
    let end = at
        .checked_add(size)
        .and_then(|end| end.checked_next_multiple_of(granule))
        .ok_or_else(|| {
            Error::invalid_value(format!("{size} bytes at {at:#x} pass the end of memory"))
        })?;
    Ok((start, end - start))
}

impl PlacedRuns {
    /// Makes `[at, at + size)` device memory through `vmm`.
    pub fn place(&self, vmm: &impl RunMapper, at: usize, size: usize) -> Result<()> {
        let (start, len) = span(vmm.granule(), at, size)?;
        let end = start + len;
        let mut state = self.state.lock();
        if state.placed.contains_key(&at) {
            return Err(Error::invalid_value(format!(
                "{at:#x} is already placed memory on this device"
            )));
        }
        let mut used = Vec::new();
        let mut made = Vec::new();
        let mut granule = start;
        while granule < end {
            if let Some((run, run_len)) = state.run_holding(granule) {
                used.push(run);
                granule = run + run_len;
                continue;
            }
            // The granules up to the next run of ours (or the end) form a new run.
            let next = state
                .runs
                .range(granule..)
                .next()
                .map_or(end, |(&s, _)| s.min(end));
            if let Err(e) = vmm.map_run(granule, next - granule) {
                for (run, run_len) in made {
                    let _ = vmm.unmap_run(run, run_len);
                }
                return Err(e);
            }
            made.push((granule, next - granule));
            granule = next;
        }
        for &(run, run_len) in &made {
            state.runs.insert(run, (run_len, 0));
            used.push(run);
        }
        for run in &used {
            if let Some((_, users)) = state.runs.get_mut(run) {
                *users += 1;
            }
        }
        state.placed.insert(at, used);
        Ok(())
    }

    /// Whether `at` is a placement's address.
    #[cfg(test)]
    fn holds(&self, at: usize) -> bool {
        self.state.lock().placed.contains_key(&at)
    }

    /// Ends the placement at `at`: the runs no other placement uses are unmapped (the
    /// caller has made sure the device is done with them).
    pub fn remove(&self, vmm: &impl RunMapper, at: usize) -> Result<()> {
        let mut state = self.state.lock();
        let Some(used) = state.placed.remove(&at) else {
            return Err(Error::invalid_value(format!(
                "{at:#x} is not memory placed at an address on this device"
            )));
        };
        let mut outcome = Ok(());
        for run in used {
            let Some((len, users)) = state.runs.get_mut(&run) else {
                continue;
            };
            *users -= 1;
            if *users > 0 {
                continue;
            }
            let len = *len;
            state.runs.remove(&run);
            let unmapped = vmm.unmap_run(run, len);
            if outcome.is_ok() {
                outcome = unmapped;
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Records what it is asked; refuses runs starting at `taken`.
    #[derive(Default)]
    struct Log {
        calls: RefCell<Vec<String>>,
        taken: Option<usize>,
    }

    impl RunMapper for Log {
        fn granule(&self) -> usize {
            0x1000
        }
        fn map_run(&self, start: usize, len: usize) -> Result<()> {
            if Some(start) == self.taken {
                return Err(Error::invalid_value("taken"));
            }
            self.calls
                .borrow_mut()
                .push(format!("map {start:#x}+{len:#x}"));
            Ok(())
        }
        fn unmap_run(&self, start: usize, len: usize) -> Result<()> {
            self.calls
                .borrow_mut()
                .push(format!("unmap {start:#x}+{len:#x}"));
            Ok(())
        }
    }

    #[test]
    fn neighbours_share_runs_and_gaps_get_their_own() {
        let log = Log::default();
        let runs = PlacedRuns::default();
        runs.place(&log, 0x10_010, 0x20).unwrap(); // granule 0x10000
        runs.place(&log, 0x10_800, 0x2000).unwrap(); // shares 0x10000, adds 0x11000..0x13000
        runs.place(&log, 0x13_000, 0x1000).unwrap(); // its own run
        runs.place(&log, 0x0f_f00, 0x4100).unwrap(); // 0xf000 new, then the three runs
        assert_eq!(
            *log.calls.borrow(),
            [
                "map 0x10000+0x1000",
                "map 0x11000+0x2000",
                "map 0x13000+0x1000",
                "map 0xf000+0x1000",
            ]
        );
        log.calls.borrow_mut().clear();
        runs.remove(&log, 0x10_010).unwrap();
        runs.remove(&log, 0x13_000).unwrap();
        assert!(log.calls.borrow().is_empty(), "every run still in use");
        runs.remove(&log, 0x0f_f00).unwrap();
        assert_eq!(
            *log.calls.borrow(),
            ["unmap 0x13000+0x1000", "unmap 0xf000+0x1000"]
        );
        runs.remove(&log, 0x10_800).unwrap();
        assert!(!runs.holds(0x10_800));
        assert!(runs.remove(&log, 0x10_800).is_err(), "removed once");
    }

    #[test]
    fn a_refused_run_undoes_the_runs_of_its_placement() {
        let log = Log {
            taken: Some(0x22_000),
            ..Log::default()
        };
        let runs = PlacedRuns::default();
        runs.place(&log, 0x21_000, 0x1000).unwrap();
        // 0x20000 new, 0x21000 shared, 0x22000 refused: 0x20000 undone.
        assert!(runs.place(&log, 0x20_000, 0x3000).is_err());
        assert_eq!(
            *log.calls.borrow(),
            [
                "map 0x21000+0x1000",
                "map 0x20000+0x1000",
                "unmap 0x20000+0x1000"
            ]
        );
        assert!(!runs.holds(0x20_000));
        assert!(span(0x1000, usize::MAX - 10, 100).is_err());
    }
}
