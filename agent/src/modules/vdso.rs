//! The vDSO: the small shared library the kernel maps into every process (`clock_gettime`,
//! `gettimeofday`, ...). It is the same image in every process of one kernel, so the collector
//! copies its own into a sealed memfd once and unwinds and names every process's
//! vDSO frames from it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use crate::files::memfd;

use crate::maps::{parse_executable, Mapped};

/// The vDSO image of this process, in a sealed memfd.
pub fn extract() -> io::Result<File> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let vdso = parse_executable(&maps)
        .into_iter()
        .find(|l| l.what == Mapped::Vdso)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no [vdso] mapping"))?;
    let len = usize::try_from(vdso.end - vdso.start)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "vdso too large"))?;
    let mut image = vec![0u8; len];
    let mut mem = File::open("/proc/self/mem")?;
    mem.seek(SeekFrom::Start(vdso.start))?;
    mem.read_exact(&mut image)?;
    memfd::sealed("embers-vdso", image.len() as u64, |f| {
        f.write_all_at(&image, 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::elf::Elf;

    #[test]
    fn the_vdso_is_an_elf_with_unwind_info() {
        let file = extract().expect("every x86_64 Linux process has a vDSO");
        let elf = Elf::read(&file).expect("elf");
        assert!(elf.has_unwind_info());
    }
}
