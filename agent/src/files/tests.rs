//! The open helper against the files a hostile process can plant: symlinks, FIFOs, paths that
//! climb out of the root, big files. Each case runs through `openat2` and through the fallback
//! walk where both apply.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use super::open::OpenError;
use super::{regular, Links, Root};

/// A fresh directory standing for a container's root, with its own `/etc/passwd`.
struct Fake(PathBuf);

impl Fake {
    fn new(name: &str) -> Fake {
        let dir = std::env::temp_dir().join(format!("embers-open-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("etc")).expect("dir");
        std::fs::create_dir_all(dir.join("tmp")).expect("dir");
        std::fs::write(dir.join("etc/passwd"), "inside the root\n").expect("write");
        Fake(dir)
    }

    fn root(&self) -> Root {
        Root::at(&self.0).expect("root")
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(root: &Root, path: &str, links: Links) -> Result<String, OpenError> {
    let (mut file, _) = root.open(Path::new(path), links, 1 << 20)?;
    let mut s = String::new();
    file.read_to_string(&mut s).map_err(OpenError::Io)?;
    Ok(s)
}

fn walked(root: &Root, path: &str) -> std::io::Result<String> {
    let reference = std::fs::File::from(root.walk(Path::new(path))?);
    let mut s = String::new();
    std::fs::File::open(format!("/proc/self/fd/{}", reference.as_raw_fd()))?
        .read_to_string(&mut s)?;
    Ok(s)
}

#[test]
fn paths_climbing_out_of_the_root_stay_inside_it() {
    let fake = Fake::new("climb");
    let root = fake.root();
    for path in [
        "../../etc/passwd",
        "/../../etc/passwd",
        "tmp/../../../etc/passwd",
    ] {
        assert_eq!(
            text(&root, path, Links::Refused).expect(path),
            "inside the root\n"
        );
        assert_eq!(walked(&root, path).expect(path), "inside the root\n");
    }
}

#[test]
fn absolute_symlinks_resolve_inside_the_root_or_are_refused() {
    let fake = Fake::new("abs");
    symlink("/etc", fake.0.join("lib")).expect("symlink");
    let root = fake.root();
    // Followed where allowed, but inside the root: the container's /etc, not the host's.
    assert_eq!(
        text(&root, "/lib/passwd", Links::InRoot).expect("in root"),
        "inside the root\n"
    );
    assert!(text(&root, "/lib/passwd", Links::Refused).is_err());
    assert!(
        walked(&root, "/lib/passwd").is_err(),
        "the walk refuses every symlink"
    );
}

#[test]
fn a_symlink_in_last_place_is_never_followed() {
    let fake = Fake::new("last");
    let secret = fake.0.join("secret");
    std::fs::write(&secret, "secret\n").expect("write");
    symlink(&secret, fake.0.join("tmp/perf-1.map")).expect("symlink");
    symlink("/etc/hostname", fake.0.join("tmp/perf-2.map")).expect("symlink");
    let root = fake.root();
    for path in ["/tmp/perf-1.map", "/tmp/perf-2.map"] {
        for links in [Links::InRoot, Links::Refused] {
            assert!(text(&root, path, links).is_err(), "{path} {links:?}");
        }
        assert!(walked(&root, path).is_err(), "{path}");
    }
    let host = Root::at(Path::new("/")).expect("/");
    let own = fake.0.join("tmp/perf-1.map");
    assert!(text(&host, own.to_str().expect("utf-8"), Links::InRoot).is_err());
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let fake = Fake::new("fifo");
    let fifo = fake.0.join("tmp/perf-3.map");
    let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("c");
    // SAFETY: a valid path; the result is checked.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    let root = fake.root();
    let (done, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        let result = text(&root, "/tmp/perf-3.map", Links::Refused);
        let _ = done.send(matches!(result, Err(OpenError::NotRegular)));
    });
    // Blocking would mean waiting for a writer that never comes.
    let refused = outcome
        .recv_timeout(Duration::from_secs(5))
        .expect("returns at once");
    assert!(refused, "a FIFO is not a regular file");
}

#[test]
fn files_over_the_cap_are_refused_before_reading() {
    let fake = Fake::new("cap");
    std::fs::write(fake.0.join("tmp/big"), vec![b'x'; 4096]).expect("write");
    let root = fake.root();
    assert!(matches!(
        root.open(Path::new("tmp/big"), Links::Refused, 1024),
        Err(OpenError::TooLarge {
            size: 4096,
            cap: 1024
        })
    ));
    let (file, meta) = root
        .open(Path::new("tmp/big"), Links::Refused, 4096)
        .expect("open");
    assert_eq!(meta.len(), 4096);
    assert!(regular(&file, 4096).is_ok());
}
