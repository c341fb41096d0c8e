//! Unwinding one sample's user stack in user space: framehop walks the copy of the top of the
//! stack the BPF program took, with the registers saved when the kernel was entered, using each
//! module's `.eh_frame` (DWARF CFI) and falling back to frame pointers where a module has none.
//! A walk that ends without reaching a root frame keeps what it found and is marked cut short.

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{Error, Unwinder};

use crate::bpf::events::Regs;
use crate::modules::elf::Bytes;

/// Most user frames kept per stack.
pub const MAX_USER_FRAMES: usize = 256;

/// A walk's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unwound {
    /// Addresses to look up (return addresses minus one), leaf first.
    pub addrs: Vec<u64>,
    /// The walk stopped before a root frame (stack copy too short, no unwind information).
    pub cut_short: bool,
}

/// Walk the stack copy `stack` (taken at user address `stack_start`) from `regs`.
pub fn unwind(
    unwinder: &UnwinderX86_64<Bytes>,
    cache: &mut CacheX86_64,
    regs: Regs,
    stack_start: u64,
    stack: &[u8],
) -> Unwound {
    let mut read = |addr: u64| -> Result<u64, ()> {
        let at = usize::try_from(addr.checked_sub(stack_start).ok_or(())?).map_err(|_| ())?;
        let word = stack.get(at..at.checked_add(8).ok_or(())?).ok_or(())?;
        Ok(u64::from_le_bytes(word.try_into().map_err(|_| ())?))
    };
    let mut out = Unwound::default();
    let pc = regs.ip;
    let regs = UnwindRegsX86_64::new(regs.ip, regs.sp, regs.bp);
    let mut frames = unwinder.iter_frames(pc, regs, cache, &mut read);
    loop {
        match frames.next() {
            Ok(Some(frame)) => {
                if out.addrs.len() == MAX_USER_FRAMES {
                    out.cut_short = true;
                    break;
                }
                out.addrs.push(frame.address_for_lookup());
            }
            // A root frame (CFI says there is no caller) or a zero return address (what
            // thread entry points push): the stack is whole.
            Ok(None) | Err(Error::ReturnAddressIsNull) => break,
            Err(e) => {
                tracing::trace!("unwinding stopped: {e:?}");
                out.cut_short = true;
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without modules framehop falls back to frame pointers: a chain of (saved bp, return
    /// address) pairs in the stack copy.
    #[test]
    fn walks_a_frame_pointer_chain_and_notices_where_it_breaks() {
        let unwinder = UnwinderX86_64::<Bytes>::new();
        let mut cache = CacheX86_64::new();
        let start = 0x7fff_0000u64;
        let mut stack = vec![0u8; 64];
        let mut put = |at: u64, v: u64| {
            let i = (at - start) as usize;
            stack[i..i + 8].copy_from_slice(&v.to_le_bytes());
        };
        // frame at bp=start+16: saved bp → start+32, return 0x2000; then bp 0 ends it.
        put(start + 16, start + 32);
        put(start + 24, 0x2000);
        put(start + 32, 0);
        put(start + 40, 0x3000);
        let regs = Regs {
            ip: 0x1000,
            sp: start,
            bp: start + 16,
        };
        let u = unwind(&unwinder, &mut cache, regs, start, &stack);
        assert_eq!(u.addrs[..3], [0x1000, 0x1fff, 0x2fff]);
        let short = unwind(&unwinder, &mut cache, regs, start, &stack[..20]);
        assert_eq!(short.addrs, vec![0x1000]);
        assert!(short.cut_short, "the saved bp lies beyond the copy");
    }
}
