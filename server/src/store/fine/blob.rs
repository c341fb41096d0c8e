//! The events blob of one stored sample row (`profile.sample_times.events`): the millisecond,
//! thread and weight of every event folded into the row, packed as varints.
//!
//! Layout (format 1): `1`, the row's distinct thread ids (`n`, then each), the weight mode
//! (`0` = a weight per event follows each event, `w + 1` = every event weighs `w`), the event
//! count, then per event in time order: the offset's delta from the previous event, the index
//! of its thread in the row's list, and its weight when weights differ. Threads are listed per
//! row rather than in a shared dictionary: ids carry no names, a row has one or a few threads,
//! and a self-contained blob can be dropped by retention without touching anything else. On-CPU
//! events all weigh the same (1e6/frequency µs), so an event is usually two bytes.

use embers_model::contract::detail::TimedEvent;

use crate::store::StoreError;

const FORMAT: u8 = 1;

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Packs `events` (any order; stored in time order).
pub fn encode(events: &[TimedEvent]) -> Vec<u8> {
    let mut sorted = events.to_vec();
    sorted.sort_by_key(|e| e.offset_ms);
    let mut threads: Vec<u32> = Vec::new();
    for e in &sorted {
        if !threads.contains(&e.tid) {
            threads.push(e.tid);
        }
    }
    let uniform = sorted
        .first()
        .map(|f| f.weight)
        .filter(|w| *w < u64::MAX && sorted.iter().all(|e| e.weight == *w));
    let mut out = Vec::with_capacity(4 + threads.len() * 3 + sorted.len() * 2);
    out.push(FORMAT);
    put(&mut out, threads.len() as u64);
    for t in &threads {
        put(&mut out, u64::from(*t));
    }
    put(&mut out, uniform.map_or(0, |w| w + 1));
    put(&mut out, sorted.len() as u64);
    let mut last = 0u16;
    for e in &sorted {
        put(&mut out, u64::from(e.offset_ms - last));
        last = e.offset_ms;
        let index = threads.iter().position(|t| *t == e.tid).unwrap_or(0);
        put(&mut out, index as u64);
        if uniform.is_none() {
            put(&mut out, e.weight);
        }
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> Result<u64, StoreError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or_else(corrupt)?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(corrupt())
    }
}

fn corrupt() -> StoreError {
    StoreError::Schema("a stored events blob is cut short or malformed".to_owned())
}

/// Unpacks a blob written by [`encode`], in time order.
pub fn decode(bytes: &[u8]) -> Result<Vec<TimedEvent>, StoreError> {
    if bytes.first() != Some(&FORMAT) {
        return Err(StoreError::Schema(format!(
            "a stored events blob has format {:?}, this build reads {FORMAT}",
            bytes.first()
        )));
    }
    let mut r = Reader { bytes, at: 1 };
    let n_threads = r.next()? as usize;
    let mut threads = Vec::with_capacity(n_threads.min(bytes.len()));
    for _ in 0..n_threads {
        threads.push(u32::try_from(r.next()?).map_err(|_| corrupt())?);
    }
    let mode = r.next()?;
    let n = r.next()? as usize;
    let mut events = Vec::with_capacity(n.min(bytes.len()));
    let mut offset = 0u64;
    for _ in 0..n {
        offset += r.next()?;
        let tid = *threads.get(r.next()? as usize).ok_or_else(corrupt)?;
        let weight = if mode == 0 { r.next()? } else { mode - 1 };
        let offset_ms = u16::try_from(offset)
            .ok()
            .filter(|o| *o < 1000)
            .ok_or_else(corrupt)?;
        events.push(TimedEvent {
            offset_ms,
            tid,
            weight,
        });
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(offset_ms: u16, tid: u32, weight: u64) -> TimedEvent {
        TimedEvent {
            offset_ms,
            tid,
            weight,
        }
    }

    #[test]
    fn events_round_trip_in_time_order() {
        let events = vec![
            ev(500, 77_001, 10101),
            ev(3, 77_001, 10101),
            ev(990, 9, 10101),
        ];
        let blob = encode(&events);
        // 1 + threads (1 + 3 + 1) + weight (2) + count (1) + events (1 + 1, 2 + 1, 2 + 1).
        assert_eq!(blob.len(), 17, "{blob:?}");
        let back = decode(&blob).expect("decodes");
        assert_eq!(
            back,
            vec![
                ev(3, 77_001, 10101),
                ev(500, 77_001, 10101),
                ev(990, 9, 10101)
            ]
        );
        let mixed = vec![ev(1, 1, 5), ev(1, 2, 0), ev(999, 1, u64::MAX)];
        assert_eq!(decode(&encode(&mixed)).expect("decodes"), mixed);
        assert_eq!(decode(&encode(&[])).expect("empty"), vec![]);
    }

    #[test]
    fn a_bad_blob_is_an_error_not_a_panic() {
        let blob = encode(&[ev(5, 1, 1), ev(6, 1, 2)]);
        for cut in 0..blob.len() {
            assert!(decode(&blob[..cut]).is_err(), "cut at {cut}");
        }
        assert!(decode(&[2, 0]).is_err());
        assert!(
            decode(&[1, 0, 1, 1, 0, 0]).is_err(),
            "thread index past the list"
        );
        assert!(
            decode(&[1, 1, 1, 1, 1, 0xe8, 0x07, 0]).is_err(),
            "offset 1000"
        );
    }
}
