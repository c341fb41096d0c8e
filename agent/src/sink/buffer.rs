//! The windows waiting to be sent, bounded in bytes: when a new one does not fit, the oldest are
//! dropped (and counted), so a service that stays away costs at most `--buffer` of memory.

use std::collections::VecDeque;

/// One request body ready to send, and what it holds (for the counters and log lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The JSON body.
    pub body: Vec<u8>,
    /// Unix seconds of the window it belongs to.
    pub time: i64,
    /// Batches in it.
    pub batches: usize,
}

/// What [`Buffer::push`] had to drop to make room.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Bodies dropped.
    pub bodies: usize,
    /// Their batches.
    pub batches: usize,
    /// The newest window time among them.
    pub newest_time: Option<i64>,
}

/// A FIFO of bodies holding at most `capacity` bytes.
#[derive(Debug)]
pub struct Buffer {
    queue: VecDeque<Pending>,
    bytes: usize,
    capacity: usize,
}

impl Buffer {
    /// An empty buffer of `capacity` bytes.
    pub fn new(capacity: usize) -> Buffer {
        Buffer {
            queue: VecDeque::new(),
            bytes: 0,
            capacity,
        }
    }

    /// Queue `body`, dropping the oldest bodies until it fits. A body bigger than the whole
    /// buffer is itself dropped.
    pub fn push(&mut self, body: Pending) -> Dropped {
        let mut dropped = Dropped::default();
        let drop_one = |p: &Pending, d: &mut Dropped| {
            d.bodies += 1;
            d.batches += p.batches;
            d.newest_time = Some(d.newest_time.map_or(p.time, |t| t.max(p.time)));
        };
        if body.body.len() > self.capacity {
            drop_one(&body, &mut dropped);
            return dropped;
        }
        while self.bytes + body.body.len() > self.capacity {
            match self.queue.pop_front() {
                Some(old) => {
                    self.bytes -= old.body.len();
                    drop_one(&old, &mut dropped);
                }
                None => break,
            }
        }
        self.bytes += body.body.len();
        self.queue.push_back(body);
        dropped
    }

    /// The oldest body, taken out to be sent.
    pub fn pop(&mut self) -> Option<Pending> {
        let p = self.queue.pop_front()?;
        self.bytes -= p.body.len();
        Some(p)
    }

    /// Put back a body whose send failed and will be retried, as the oldest; returns what had
    /// to be dropped for it (newer windows are kept before older ones).
    pub fn unpop(&mut self, body: Pending) -> Dropped {
        if self.bytes + body.body.len() > self.capacity {
            return Dropped {
                bodies: 1,
                batches: body.batches,
                newest_time: Some(body.time),
            };
        }
        self.bytes += body.body.len();
        self.queue.push_front(body);
        Dropped::default()
    }

    /// Bytes queued.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bodies queued.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(time: i64, len: usize) -> Pending {
        Pending {
            body: vec![b'x'; len],
            time,
            batches: 2,
        }
    }

    #[test]
    fn keeps_the_newest_within_its_capacity() {
        let mut b = Buffer::new(100);
        assert_eq!(b.push(body(1, 40)), Dropped::default());
        assert_eq!(b.push(body(2, 40)), Dropped::default());
        let d = b.push(body(3, 40));
        assert_eq!(
            d,
            Dropped {
                bodies: 1,
                batches: 2,
                newest_time: Some(1)
            }
        );
        assert_eq!((b.len(), b.bytes()), (2, 80));
        let d = b.push(body(4, 100));
        assert_eq!((d.bodies, d.newest_time), (2, Some(3)));
        assert_eq!(b.pop().map(|p| p.time), Some(4));
        assert!(b.is_empty() && b.bytes() == 0);
        let d = b.push(body(5, 101));
        assert_eq!((d.bodies, b.len()), (1, 0), "too big for the buffer at all");
    }

    #[test]
    fn a_failed_send_goes_back_first_unless_newer_windows_filled_the_room() {
        let mut b = Buffer::new(100);
        b.push(body(1, 50));
        let first = b.pop().expect("one");
        b.push(body(2, 30));
        assert_eq!(b.unpop(first.clone()), Dropped::default());
        assert_eq!(b.pop().map(|p| p.time), Some(1));
        b.push(body(3, 60));
        assert_eq!(b.unpop(first).bodies, 1);
        assert_eq!(b.len(), 2);
    }
}
