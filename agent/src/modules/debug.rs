//! Where a module's source lines come from: the DWARF sections of the file itself (`-g`), or a
//! separate debug file found by build id under `/usr/lib/debug/.build-id/`, opened inside the
//! mapping process's root like the module ([`crate::files`]) and used only when its build id
//! is the module's. The sections blazesym reads are copied into the module's sealed symbol copy
//! ([`super::Module`]), bounded by [`MAX_DWARF_BYTES`]. Debug links (`.gnu_debuglink`,
//! `.gnu_debugaltlink`, `.debug_sup`) are hidden in the copy: blazesym would otherwise open the
//! file a link names, as root and by a path the binary's author chose.

use std::fs::File;
use std::ops::Range;
use std::path::Path;

use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
use object::{LittleEndian, Object, ObjectSection, ReadCache};

use crate::files::{Links, Root};

/// Most bytes of DWARF sections copied per module (a C program's are kilobytes, libc's
/// separate debug file a few MiB compressed; a big C++ or Rust binary's hundreds of MiB, whose
/// frames then get names without lines).
pub const MAX_DWARF_BYTES: u64 = 64 << 20;
/// Largest separate debug file opened.
const MAX_DEBUG_FILE_BYTES: u64 = 2 << 30;
/// Where distributions install separate debug files, named by build id.
const BUILD_ID_DIR: &str = "/usr/lib/debug/.build-id";
/// Sections whose name blazesym looks up to follow a link to another file.
const LINKS: [&str; 3] = [".gnu_debuglink", ".gnu_debugaltlink", ".debug_sup"];

/// The parts of a file that carry its lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dwarf {
    /// File ranges of its `.debug_*` sections.
    pub ranges: Vec<Range<u64>>,
    /// File offsets of the `sh_name` fields of its link sections, zeroed in the copy (the name
    /// at offset 0 of the section names is empty, so the section is no longer found).
    pub hidden_names: Vec<u64>,
}

impl Dwarf {
    /// Bytes its ranges hold.
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.end - r.start).sum()
    }
}

/// The DWARF of `obj`, when it has line tables and debug information in the file (not
/// `NOBITS`, as in a stripped binary) within [`MAX_DWARF_BYTES`].
pub fn dwarf_of<'a, R: object::ReadRef<'a>>(obj: &ElfFile64<'a, LittleEndian, R>) -> Option<Dwarf> {
    let in_file = |name: &str| {
        obj.section_by_name(name)
            .and_then(|s| s.file_range())
            .is_some_and(|(_, len)| len > 0)
    };
    if !(in_file(".debug_info") || in_file(".zdebug_info"))
        || !(in_file(".debug_line") || in_file(".zdebug_line"))
    {
        return None;
    }
    let ranges: Vec<Range<u64>> = obj
        .sections()
        .filter(|s| {
            s.name()
                .is_ok_and(|n| n.starts_with(".debug_") || n.starts_with(".zdebug_"))
        })
        .filter_map(|s| s.file_range())
        .map(|(off, len)| off..off.saturating_add(len))
        .collect();
    let dwarf = Dwarf {
        ranges,
        hidden_names: hidden_names(obj),
    };
    if dwarf.bytes() > MAX_DWARF_BYTES {
        tracing::debug!(
            bytes = dwarf.bytes(),
            "DWARF too big to copy: names without lines"
        );
        return None;
    }
    Some(dwarf)
}

/// Offsets of the `sh_name` fields of the sections that link to other files.
fn hidden_names<'a, R: object::ReadRef<'a>>(obj: &ElfFile64<'a, LittleEndian, R>) -> Vec<u64> {
    let e = obj.endian();
    let h = obj.elf_header();
    let table = obj.elf_section_table();
    let (shoff, entsize) = (h.e_shoff(e), u64::from(h.e_shentsize(e)));
    table
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            table
                .section_name(e, s)
                .is_ok_and(|n| LINKS.iter().any(|l| l.as_bytes() == n))
        })
        .filter(|(_, s)| s.sh_name(e) != 0)
        .map(|(i, _)| shoff + i as u64 * entsize)
        .collect()
}

/// A separate debug file, opened and checked, until its copy is made.
pub struct Separate {
    /// The file.
    pub file: File,
    /// Its length.
    pub len: u64,
    /// Its DWARF.
    pub dwarf: Dwarf,
    /// Its headers and symbol tables.
    pub symbols: Vec<Range<u64>>,
}

/// A separate debug file for `build_id`, opened inside `root` (symlinks, as the `.build-id`
/// entries are, resolved inside it), with its DWARF and symbol ranges; `None` when there is
/// none, it is unreadable, or its build id is another's.
pub fn separate(root: &Root, build_id: &[u8]) -> Option<Separate> {
    let path = build_id_path(build_id)?;
    let (file, meta) = root
        .open(Path::new(&path), Links::InRootLastToo, MAX_DEBUG_FILE_BYTES)
        .ok()?;
    let (dwarf, symbols) = {
        let cache = ReadCache::new(&file);
        let obj = ElfFile64::<LittleEndian, _>::parse(&cache).ok()?;
        if obj.build_id().ok().flatten() != Some(build_id) {
            tracing::debug!(path, "separate debug file of another build: not used");
            return None;
        }
        (dwarf_of(&obj)?, super::elf::symbol_ranges(&obj))
    };
    Some(Separate {
        file,
        len: meta.len(),
        dwarf,
        symbols,
    })
}

/// `/usr/lib/debug/.build-id/ab/cdef….debug` for build id `abcdef…`.
fn build_id_path(build_id: &[u8]) -> Option<String> {
    // Shorter ids are no real build ids (GNU ld writes 20 bytes, lld 8 or more).
    let (first, rest) = build_id.split_first().filter(|_| build_id.len() >= 8)?;
    let rest: String = rest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("{BUILD_ID_DIR}/{first:02x}/{rest}.debug"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_paths_are_as_distributions_lay_them_out() {
        let id = [0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6];
        assert_eq!(
            build_id_path(&id).as_deref(),
            Some("/usr/lib/debug/.build-id/ab/cdef010203040506.debug")
        );
        assert_eq!(build_id_path(&[1, 2, 3]), None);
    }

    #[test]
    fn this_test_binary_has_line_tables_and_no_links_followed() {
        let exe = std::env::current_exe().expect("exe");
        let file = File::open(exe).expect("open");
        let cache = ReadCache::new(&file);
        let obj = ElfFile64::<LittleEndian, _>::parse(&cache).expect("elf");
        // Tests build with line tables (CARGO_PROFILE_TEST_DEBUG=line-tables-only or more).
        if let Some(d) = dwarf_of(&obj) {
            assert!(d.bytes() > 0 && d.ranges.iter().all(|r| r.start < r.end));
        }
    }
}
