//! Sealed anonymous files: the collector's own copies of what it needs from files other users
//! can change. A copy in a memfd sealed against shrinking, growing and writing can be handed to
//! code that memory-maps its input (blazesym) without the risk of the mapping's pages vanishing
//! under it (SIGBUS, which would kill the whole process) when the original is truncated.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;

/// A memfd of `len` bytes, zero except where `fill` writes (through the `File` it is given),
/// then sealed for good: no write, shrink or grow, and no more seals.
pub fn sealed(
    name: &str,
    len: u64,
    fill: impl FnOnce(&File) -> io::Result<()>,
) -> io::Result<File> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: NUL-terminated name; the result is checked.
    let fd = unsafe { libc::memfd_create(c.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    // Unwritten ranges stay holes: they cost no memory.
    file.set_len(len)?;
    fill(&file)?;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on an open descriptor with integer arguments.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// Copy `len` bytes at `offset` of `from` to the same offset of `to`, in bounded chunks.
pub fn copy_range(from: &File, to: &File, offset: u64, len: u64) -> io::Result<()> {
    const CHUNK: u64 = 1 << 20;
    let mut buf = vec![0u8; CHUNK.min(len) as usize];
    let mut done = 0;
    while done < len {
        let n = CHUNK.min(len - done) as usize;
        let part = &mut buf[..n];
        from.read_exact_at(part, offset + done)?;
        to.write_all_at(part, offset + done)?;
        done += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_copy_cannot_be_changed() {
        let file = sealed("embers-test", 8192, |f| f.write_all_at(b"ELF", 4096)).expect("memfd");
        let mut three = [0u8; 3];
        file.read_exact_at(&mut three, 4096).expect("read");
        assert_eq!(&three, b"ELF");
        assert_eq!(file.metadata().expect("stat").len(), 8192);
        let again = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .expect("reopen");
        assert!(again.set_len(0).is_err(), "shrinking is sealed");
        assert!(again.write_all_at(b"x", 0).is_err(), "writing is sealed");
    }
}
