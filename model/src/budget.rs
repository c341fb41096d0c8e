//! One request's memory budget: everything a request expands to while it is read (gunzipped
//! bytes, decoded messages and values, stack text, trees per sample type, per pushed profile,
//! per multipart part) is charged to one [`Budget`] *before* it is allocated, so a few
//! kilobytes that claim gigabytes are refused after costing about the budget, not the claim.
//!
//! A budget is sized from what the sender really sent ([`Budget::for_input`]): a floor that
//! any real request fits, plus a multiple of its bytes, capped by the operator. It is shared
//! by reference through every reader of one request (a `Cell`, as one request is read on one
//! thread), so eight sample types, eight pushed profiles or a gzip bomb inside a multipart part
//! all draw from the same total.

use std::cell::Cell;

/// What any request may expand to, whatever its size: a real small profile (a Go CPU profile
/// of a few KB, an agent's window) expands to far less.
pub const FLOOR_BYTES: usize = 32 << 20;

/// What each byte sent may expand to beyond the floor. Gzip gives a real profile 5–20×, and
/// naming its stacks (a 2-byte location id becoming a 40–80-byte frame name) a few times more;
/// 64× keeps every real profile we hold in its budget (the tests read them) while a 64 KB body
/// costs at most ~36 MB.
pub const PER_INPUT_BYTE: usize = 64;

/// Why a request was refused: it expands past its budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the request expands to more than {limit} bytes in memory while it is read ({what}); \
     its budget is 32 MiB + 64 × the {input} bytes sent, at most --max-request-memory: \
     send it in smaller parts"
)]
pub struct OverBudget {
    /// The budget, bytes.
    pub limit: usize,
    /// The bytes the budget was sized from.
    pub input: usize,
    /// What was being read when it ran out (e.g. `gzip`, `stack text`, `JFR values`).
    pub what: &'static str,
}

/// The bytes one request may still expand to.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    input: usize,
    used: Cell<usize>,
}

impl Budget {
    /// The budget of a request of `input_bytes` (as sent, before gunzipping):
    /// [`FLOOR_BYTES`] + [`PER_INPUT_BYTE`] × `input_bytes`, at most `cap`.
    pub fn for_input(input_bytes: usize, cap: usize) -> Budget {
        let limit = input_bytes
            .saturating_mul(PER_INPUT_BYTE)
            .saturating_add(FLOOR_BYTES)
            .min(cap);
        Budget {
            limit,
            input: input_bytes,
            used: Cell::new(0),
        }
    }

    /// A budget of exactly `limit` bytes.
    pub fn with_limit(limit: usize) -> Budget {
        Budget {
            limit,
            input: 0,
            used: Cell::new(0),
        }
    }

    /// No limit (a local file the user opened in their own browser).
    pub fn unlimited() -> Budget {
        Budget::with_limit(usize::MAX)
    }

    /// Spend `bytes` on `what`, or refuse the request.
    pub fn charge(&self, bytes: usize, what: &'static str) -> Result<(), OverBudget> {
        let used = self.used.get().saturating_add(bytes);
        if used > self.limit {
            return Err(OverBudget {
                limit: self.limit,
                input: self.input,
                what,
            });
        }
        self.used.set(used);
        Ok(())
    }

    /// Spend `count` items of `T` (what a `Vec<T>` of them holds at most, growth included),
    /// before they are made.
    pub fn charge_items<T>(&self, count: usize, what: &'static str) -> Result<(), OverBudget> {
        self.charge(count.saturating_mul(std::mem::size_of::<T>()), what)
    }

    /// Give back `bytes` spent on something already freed (a gunzipped body once decoded
    /// into what replaced it stays charged: this is for scratch space only).
    pub fn refund(&self, bytes: usize) {
        self.used.set(self.used.get().saturating_sub(bytes));
    }

    /// Bytes still to spend.
    pub fn remaining(&self) -> usize {
        self.limit - self.used.get()
    }

    /// Bytes spent so far.
    pub fn used(&self) -> usize {
        self.used.get()
    }

    /// The whole budget.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_from_the_input_with_a_floor_and_a_cap() {
        assert_eq!(Budget::for_input(0, usize::MAX).limit(), FLOOR_BYTES);
        assert_eq!(
            Budget::for_input(1000, usize::MAX).limit(),
            FLOOR_BYTES + 64_000
        );
        assert_eq!(Budget::for_input(1 << 40, 1 << 30).limit(), 1 << 30);
    }

    #[test]
    fn charges_add_up_and_the_first_over_is_refused_naming_what() {
        let b = Budget::with_limit(100);
        b.charge(60, "a").expect("fits");
        b.charge(40, "b").expect("fits exactly");
        let e = b.charge(1, "stack text").expect_err("over");
        assert_eq!(e.limit, 100);
        assert!(e.to_string().contains("stack text"), "{e}");
        assert!(e.to_string().contains("--max-request-memory"), "{e}");
        assert_eq!(b.remaining(), 0);
        b.refund(40);
        assert_eq!(b.used(), 60);
        assert!(b.charge_items::<u64>(5, "ids").is_ok());
        assert!(b.charge_items::<u64>(1, "ids").is_err());
        assert!(b.charge(usize::MAX, "huge").is_err());
        assert_eq!(b.used(), 100);
    }
}
