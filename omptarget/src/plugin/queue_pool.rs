//! The queues `nowait` regions run on, kept per device between regions (making a
//! queue per region would cost more than many regions), up to a cap per device.

use crate::plugin::ol::{self, Device, Queue};
use parking_lot::Mutex;

/// The queues of a device regions may hold at once; past them a `nowait` region runs to
/// completion in its task (a thousand regions in flight would otherwise make a thousand
/// queues).
const QUEUES_PER_DEVICE: usize = 32;

/// The queues made, with their devices: those not in use, and how many exist.
struct Queues {
    idle: Vec<(Device, Queue)>,
    made: Vec<(Device, usize)>,
}

static QUEUES: Mutex<Queues> = Mutex::new(Queues {
    idle: Vec::new(),
    made: Vec::new(),
});

/// An idle queue of `device`, or a new one while it has fewer than the cap; `Ok(None)`
/// at the cap.
pub fn take_queue(device: Device) -> ol::Result<Option<Queue>> {
    let mut queues = QUEUES.lock();
    if let Some(i) = queues.idle.iter().position(|(d, _)| *d == device) {
        return Ok(Some(queues.idle.swap_remove(i).1));
    }
    let made = match queues.made.iter().position(|(d, _)| *d == device) {
        Some(i) => &mut queues.made[i].1,
        None => {
            queues.made.push((device, 0));
            &mut queues.made.last_mut().expect("just pushed").1
        }
    };
    if *made >= QUEUES_PER_DEVICE {
        return Ok(None);
    }
    let queue = ol::create_queue(device)?;
    *made += 1;
    Ok(Some(queue))
}

pub fn give_back(device: Device, queue: Queue) {
    QUEUES.lock().idle.push((device, queue));
}

/// Ends the idle queues (before liboffload shuts down).
pub fn drain() {
    let mut queues = QUEUES.lock();
    for (_, queue) in queues.idle.drain(..) {
        let _ = ol::destroy_queue(queue);
    }
    queues.made.clear();
}
