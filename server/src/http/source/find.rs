//! Finding a stored source path under the `--source-dir` roots, safely: the path's suffixes are
//! tried longest first, each opened inside each root with `openat2(2)`'s `RESOLVE_IN_ROOT |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (so no `..`, absolute path or symlink, inside or
//! out, leads anywhere else) as a bare reference (`O_PATH`: a FIFO or a device is never opened),
//! checked to be a regular file of at most [`MAX_SOURCE_BYTES`], and only then read, through
//! that reference, as UTF-8 text without NUL bytes.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use embers_model::contract::source::{SourceConfig, MAX_FILE_PARAM, MAX_SOURCE_BYTES};

/// The source roots (directory references held open for the service's life) and what the
/// viewer is told (`serve`'s `SourceArgs`).
#[derive(Debug, Default)]
pub struct Sources {
    pub(super) roots: Vec<OwnedFd>,
    pub(super) config: SourceConfig,
}

/// Most trailing segments of a stored path tried.
const MAX_SEGMENTS: usize = 64;

/// Why no text is answered.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SourceError {
    /// `file` is empty, too long, or has a NUL or a `..` segment.
    #[error("file {0}")]
    BadPath(&'static str),
    /// No root holds any suffix of the path (as a regular file reached without symlinks).
    #[error("no file under the --source-dir roots matches {file:?}{}", if *.refused { " (a symlink or special file on the way was refused)" } else { "" })]
    NotFound {
        /// The path asked for.
        file: String,
        /// A match was refused for a symlink or not being a regular file.
        refused: bool,
    },
    /// The matching file is bigger than the cap.
    #[error("{matched} is {size} bytes, more than the {MAX_SOURCE_BYTES} shown")]
    TooLarge {
        /// The suffix that matched.
        matched: String,
        /// Its size.
        size: u64,
    },
    /// The matching file is not UTF-8 text.
    #[error("{matched} is not text ({why})")]
    NotText {
        /// The suffix that matched.
        matched: String,
        /// NUL bytes or invalid UTF-8.
        why: &'static str,
    },
}

/// A file found: the suffix that matched and its text.
#[derive(Debug, PartialEq, Eq)]
pub struct Found {
    /// The suffix of the stored path that matched, relative to its root.
    pub matched: String,
    /// The text.
    pub text: String,
}

/// The segments of a stored path (empty and `.` ones dropped), or why it is refused.
fn segments(file: &str) -> Result<Vec<&str>, SourceError> {
    if file.is_empty() || file.len() > MAX_FILE_PARAM {
        return Err(SourceError::BadPath("must be 1 to 4096 bytes"));
    }
    if file.contains('\0') {
        return Err(SourceError::BadPath("must not contain NUL"));
    }
    let parts: Vec<&str> = file
        .split(['/', '\\'])
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if parts.contains(&"..") {
        return Err(SourceError::BadPath("must not contain '..' segments"));
    }
    if parts.is_empty() {
        return Err(SourceError::BadPath("names no file"));
    }
    Ok(parts)
}

/// Find `file` under `roots` by its longest suffix and read it.
pub fn find(roots: &[OwnedFd], file: &str) -> Result<Found, SourceError> {
    let parts = segments(file)?;
    let first = parts.len().saturating_sub(MAX_SEGMENTS);
    let mut refused = false;
    for start in first..parts.len() {
        let matched = parts[start..].join("/");
        for root in roots {
            match open_in(root, &matched) {
                Ok(file) => return read_text(file, matched),
                Err(Open::Refused) => refused = true,
                Err(Open::Missing) => {}
            }
        }
    }
    Err(SourceError::NotFound {
        file: file.to_owned(),
        refused,
    })
}

enum Open {
    Missing,
    Refused,
}

/// Open `rel` inside `root` as a regular file for reading, never through a symlink.
fn open_in(root: &OwnedFd, rel: &str) -> Result<(File, u64), Open> {
    let reference = openat2(root, rel).map_err(|e| match e.raw_os_error() {
        // A symlink on the way (ELOOP), a path leaving the root (EXDEV).
        Some(libc::ELOOP | libc::EXDEV) => Open::Refused,
        _ => Open::Missing,
    })?;
    let reference = File::from(reference);
    let meta = reference.metadata().map_err(|_| Open::Missing)?;
    if !meta.file_type().is_file() {
        return Err(if meta.is_dir() {
            Open::Missing
        } else {
            Open::Refused
        });
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{}", reference.as_raw_fd()))
        .map_err(|_| Open::Missing)?;
    Ok((file, meta.len()))
}

fn openat2(root: &OwnedFd, rel: &str) -> io::Result<OwnedFd> {
    let c = CString::new(Path::new(rel).as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: all-zero is a valid `open_how` (plain integers).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: a valid directory fd, a NUL-terminated path, `how` with its true size.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The text of `file`, refused when too large (read one byte past the cap: a file may grow
/// after it was checked), with NUL bytes, or not UTF-8.
fn read_text((file, size): (File, u64), matched: String) -> Result<Found, SourceError> {
    let too_large = |size| SourceError::TooLarge {
        matched: matched.clone(),
        size,
    };
    if size > MAX_SOURCE_BYTES {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| SourceError::NotFound {
            file: matched.clone(),
            refused: false,
        })?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    if bytes.contains(&0) {
        return Err(SourceError::NotText {
            matched,
            why: "it has NUL bytes",
        });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Found { matched, text }),
        Err(_) => Err(SourceError::NotText {
            matched,
            why: "it is not valid UTF-8",
        }),
    }
}

/// Open `dir` as a root (a reference to the directory, kept for the service's life).
pub fn open_root(dir: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a NUL-terminated path; the result is checked.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
