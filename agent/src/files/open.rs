//! Opening a file another process names, as that process sees it: the path is resolved inside
//! the process's root (`/proc/<pid>/root`), never above it, with `openat2(2)`'s
//! `RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS` (and `RESOLVE_NO_SYMLINKS` where a symlink has no
//! business being) and the last component never followed (`O_NOFOLLOW`). Kernels without
//! `openat2` (before 5.6, or a seccomp filter that hides it) get a component-by-component
//! `O_NOFOLLOW` walk that refuses every symlink and keeps `..` inside the root. The file is first
//! opened as a bare reference (`O_PATH`: nothing of a FIFO's or a device's own open runs) and
//! checked with `fstat`: a regular file, under a size cap, not on FUSE (whose reads can block
//! for good); only then is it opened for reading, through that reference, with `O_NONBLOCK`.

use std::ffi::CString;
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a file was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The system said no (missing, a symlink where none is allowed, a path leaving the root…).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A FIFO, socket, device or directory: reading it could block or never end.
    #[error("not a regular file")]
    NotRegular,
    /// Bigger than what is read of such files.
    #[error("{size} bytes, more than the {cap} read of such files")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// On a FUSE filesystem: its owner's process answers reads, and may never answer.
    #[error("on a FUSE filesystem, whose reads can block")]
    Fuse,
}

/// Whether symlinks inside the path may be followed (always inside the root).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Followed, resolved inside the root (binaries: `/lib64` → `/usr/lib64`).
    InRoot,
    /// Followed inside the root, the last component too (`/usr/lib/debug/.build-id/` entries
    /// are symlinks to the debug files); the fallback walk refuses them.
    InRootLastToo,
    /// Refused anywhere in the path (perf maps: the runtime writes them itself).
    Refused,
}

/// A directory paths are resolved inside of: a process's root, or any directory.
pub struct Root(OwnedFd);

/// Set once `openat2` answered ENOSYS (or EPERM from a seccomp filter): walk from then on.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

impl Root {
    /// The root directory of process `pid` (its container's filesystem).
    pub fn of_process(pid: u32) -> io::Result<Root> {
        Root::at(Path::new(&format!("/proc/{pid}/root")))
    }

    /// The directory at `dir` (followed: `/proc/<pid>/root` is a magic link).
    pub fn at(dir: &Path) -> io::Result<Root> {
        let path = c_path(dir)?;
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
        // SAFETY: `path` is a valid NUL-terminated string; the result is checked.
        let fd = unsafe { libc::open(path.as_ptr(), flags) };
        owned(fd).map(Root)
    }

    /// Open `path` for reading inside this root (`/a/b` and `a/b` alike; `..` stops at the
    /// root), never following its last component: a regular file of at most `cap` bytes.
    pub fn open(&self, path: &Path, links: Links, cap: u64) -> Result<(File, Metadata), OpenError> {
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            match self.openat2(path, links) {
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                }
                other => return reopen(other?, cap),
            }
        }
        reopen(self.walk(path)?, cap)
    }

    fn openat2(&self, path: &Path, links: Links) -> io::Result<OwnedFd> {
        let c = c_path(path)?;
        let mut resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;
        if links == Links::Refused {
            resolve |= libc::RESOLVE_NO_SYMLINKS;
        }
        // libc marks `open_how` non-exhaustive (the kernel may grow it): fill a zeroed one.
        // SAFETY: all-zero is a valid `open_how` (plain integers).
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = if links == Links::InRootLastToo {
            (PATH_FLAGS & !libc::O_NOFOLLOW) as u64
        } else {
            PATH_FLAGS as u64
        };
        how.resolve = resolve;
        // SAFETY: valid directory fd, NUL-terminated path, `how` with its true size.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                self.0.as_raw_fd(),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        owned(i32::try_from(fd).unwrap_or(-1))
    }

    /// The fallback: one `openat` per component, each refusing symlinks (`O_NOFOLLOW`), `..`
    /// taken back up a stack of the directories walked (so never above the root). Returns an
    /// `O_PATH` reference.
    pub fn walk(&self, path: &Path) -> io::Result<OwnedFd> {
        let parts: Vec<Component<'_>> = path.components().collect();
        let Some((last, dirs)) = parts.split_last() else {
            return Err(io::ErrorKind::InvalidInput.into());
        };
        let mut stack: Vec<OwnedFd> = Vec::new();
        for part in dirs {
            match part {
                Component::Normal(name) => {
                    let at = stack.last().unwrap_or(&self.0);
                    let dir = openat(at, Path::new(name), DIR_FLAGS)?;
                    stack.push(dir);
                }
                Component::ParentDir => {
                    stack.pop();
                }
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            }
        }
        let Component::Normal(name) = last else {
            return Err(io::ErrorKind::InvalidInput.into());
        };
        openat(stack.last().unwrap_or(&self.0), Path::new(name), PATH_FLAGS)
    }
}

/// Open the file at `path` (a magic link such as `/proc/<pid>/map_files/…` is followed: it is
/// the kernel's own reference) if it is a regular file of at most `cap` bytes.
pub fn open_regular(path: &Path, cap: u64) -> Result<(File, Metadata), OpenError> {
    let c = c_path(path)?;
    // SAFETY: NUL-terminated path; the result is checked.
    let fd = owned(unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) })?;
    reopen(fd, cap)
}

/// Check the file an `O_PATH` reference names, then open it for reading through the
/// reference: the same inode, whatever has happened to its path since.
fn reopen(reference: OwnedFd, cap: u64) -> Result<(File, Metadata), OpenError> {
    let reference = File::from(reference);
    let meta = regular(&reference, cap)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{}", reference.as_raw_fd()))?;
    Ok((file, meta))
}

/// How a file is first opened: a reference only (no open of the file itself runs, so a FIFO or
/// a device is never opened), never following the last component.
const PATH_FLAGS: i32 = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
/// How the fallback walk opens each directory: a symlink in its place fails (`ENOTDIR`).
const DIR_FLAGS: i32 = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

fn openat(dir: &OwnedFd, name: &Path, flags: i32) -> io::Result<OwnedFd> {
    let c = c_path(name)?;
    // SAFETY: valid directory fd and NUL-terminated name; the result is checked.
    owned(unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags) })
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

fn owned(fd: i32) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Check that `file` is a regular file of at most `cap` bytes, not on FUSE; returns its
/// metadata.
pub fn regular(file: &File, cap: u64) -> Result<Metadata, OpenError> {
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(OpenError::NotRegular);
    }
    if meta.len() > cap {
        return Err(OpenError::TooLarge {
            size: meta.len(),
            cap,
        });
    }
    // SAFETY: a zeroed statfs is a valid out-parameter; the fd is open.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut fs) } == 0
        && fs.f_type == libc::FUSE_SUPER_MAGIC
    {
        return Err(OpenError::Fuse);
    }
    Ok(meta)
}
