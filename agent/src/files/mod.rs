//! Reading files that other, possibly hostile, processes control: their binaries and perf maps.
//! The collector runs as root and follows paths those processes choose, so every such file is
//! opened inside the process's own root without following links out of it ([`open`]), checked
//! to be a regular file under a size cap before a byte is read, read with `pread` rather than
//! memory-mapped (a file truncated under a mapping raises SIGBUS in the reader), and, where a
//! library insists on mapping its input, copied into a sealed memfd first ([`memfd`]).

pub mod memfd;
pub mod open;

pub use open::{open_regular, regular, Links, OpenError, Root};

#[cfg(test)]
mod tests;
