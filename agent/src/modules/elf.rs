//! What the collector reads from an ELF file: its build id, its loadable segments (to turn a
//! mapping into a load bias), the sections framehop unwinds with (`.eh_frame`, `.eh_frame_hdr`,
//! `.debug_frame`; `.text` and `.got` only by address) and where its symbol tables are. The file
//! belongs to whoever can write it, so nothing of it is memory-mapped (a file truncated under a
//! mapping raises SIGBUS in the reader, and that kills the collector): headers are read through
//! a cache of `pread`s, the unwind sections copied into memory, each at most
//! [`MAX_SECTION_BYTES`]. A file cut short while being read is an error like any other.

use std::fs::File;
use std::ops::{Deref, Range};
use std::os::unix::fs::FileExt;
use std::rc::Rc;

use super::debug::{dwarf_of, Dwarf};
use framehop::ExplicitModuleSectionInfo;
use object::elf::PF_X;
use object::read::elf::{ElfFile64, FileHeader};
use object::{LittleEndian, Object, ObjectSection, ObjectSegment, ReadCache, SegmentFlags};

/// Largest unwind section copied (librustc_driver's `.eh_frame`, among the biggest met, is
/// ~12 MiB); a module with a bigger one is named but not unwound through.
pub const MAX_SECTION_BYTES: u64 = 64 << 20;
/// Largest symbol tables (with their strings) kept for naming. Past it only the dynamic ones
/// (`.dynsym`, exported functions) are, which are a fraction of that.
pub const MAX_SYMBOL_BYTES: u64 = 128 << 20;

/// Why a file is not an ELF file this collector can use.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// Not a 64-bit little-endian ELF file, or a malformed or truncated one.
    #[error("not an ELF file this collector reads: {0}")]
    Parse(#[from] object::Error),
}

/// A section's bytes, copied out of its file (framehop's section data type).
#[derive(Clone)]
pub struct Bytes(Rc<[u8]>);

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// A section's address range (as linked) and its bytes.
#[derive(Clone)]
struct Section {
    svma: Range<u64>,
    data: Option<Bytes>,
}

/// A loadable segment: where its bytes are in the file and where they are linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// File offset.
    pub offset: u64,
    /// Bytes in the file.
    pub file_size: u64,
    /// Linked address.
    pub vaddr: u64,
    /// Holds code (`PF_X`).
    pub executable: bool,
}

/// One ELF file, read.
pub struct Elf {
    /// The GNU build id, when the file has one.
    pub build_id: Option<Vec<u8>>,
    /// Loadable segments.
    pub segments: Vec<Segment>,
    /// The file's length when read.
    pub file_len: u64,
    /// File ranges a symbolizer needs: headers and symbol tables with their strings.
    pub symbol_ranges: Vec<Range<u64>>,
    /// Its own DWARF (built with `-g`), when it has line tables.
    pub dwarf: Option<Dwarf>,
    sections: [Option<Section>; 5],
}

const SECTIONS: [&str; 5] = [
    ".eh_frame",
    ".eh_frame_hdr",
    ".text",
    ".got",
    ".debug_frame",
];
/// Sections whose bytes are copied (the others are only needed by address).
const COPIED: [bool; 5] = [true, true, false, false, true];

impl Elf {
    /// Read `file`: its headers, then the unwind sections.
    pub fn read(file: &File) -> Result<Elf, ElfError> {
        let file_len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let cache = ReadCache::new(file);
        let obj = ElfFile64::<LittleEndian, _>::parse(&cache)?;
        let build_id = obj.build_id().ok().flatten().map(<[u8]>::to_vec);
        let segments = obj
            .segments()
            .map(|s| {
                let (offset, file_size) = s.file_range();
                let executable =
                    matches!(s.flags(), SegmentFlags::Elf { p_flags } if p_flags & PF_X != 0);
                Segment {
                    offset,
                    file_size,
                    vaddr: s.address(),
                    executable,
                }
            })
            .collect();
        let has_eh_frame = obj.section_by_name(".eh_frame").is_some();
        let mut i = 0;
        let sections = SECTIONS.map(|name| {
            let copy = COPIED[i] && !(name == ".debug_frame" && has_eh_frame);
            i += 1;
            let s = obj.section_by_name(name)?;
            let data = s
                .file_range()
                .filter(|_| copy)
                .and_then(|(off, len)| read_at(file, file_len, off, len));
            Some(Section {
                svma: s.address()..s.address().saturating_add(s.size()),
                data,
            })
        });
        let symbol_ranges = symbol_ranges(&obj);
        let dwarf = dwarf_of(&obj);
        Ok(Elf {
            build_id,
            segments,
            file_len,
            symbol_ranges,
            dwarf,
            sections,
        })
    }

    /// Bytes of unwind sections held in memory.
    pub fn unwind_bytes(&self) -> u64 {
        self.sections
            .iter()
            .flatten()
            .filter_map(|s| s.data.as_ref())
            .map(|d| d.len() as u64)
            .sum()
    }

    /// The load bias of an executable mapping of this file at `start` from file offset
    /// `offset` (page-aligned): what to add to a linked address to get the address in the
    /// process. The segment is the code segment whose pages the mapping starts in — not the one
    /// before it that ends in the same page, as lld lays files out.
    pub fn bias(&self, start: u64, offset: u64) -> u64 {
        let holds =
            |s: &&Segment| s.offset & !0xfff <= offset && offset < s.offset + s.file_size.max(1);
        let seg = self
            .segments
            .iter()
            .filter(|s| s.executable)
            .find(holds)
            .or_else(|| self.segments.iter().find(holds))
            .or_else(|| self.segments.first());
        match seg {
            Some(s) => start.wrapping_sub(s.vaddr.wrapping_add(offset.wrapping_sub(s.offset))),
            None => start.wrapping_sub(offset),
        }
    }

    /// The linked address of file offset `offset` (in a loadable segment's bytes): what a
    /// separate debug file, laid out apart, is looked up by.
    pub fn virt_of(&self, offset: u64) -> Option<u64> {
        let s = self
            .segments
            .iter()
            .find(|s| s.offset <= offset && offset - s.offset < s.file_size)?;
        s.vaddr.checked_add(offset - s.offset)
    }

    /// Whether there is anything to unwind with.
    pub fn has_unwind_info(&self) -> bool {
        self.sections[0].is_some() || self.sections[4].is_some()
    }

    /// framehop's description of the sections (linked addresses, base 0 as for every ELF).
    pub fn section_info(&self) -> ExplicitModuleSectionInfo<Bytes> {
        let svma = |i: usize| self.sections[i].as_ref().map(|s| s.svma.clone());
        let data = |i: usize| self.sections[i].as_ref().and_then(|s| s.data.clone());
        ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: svma(2),
            text: data(2),
            got_svma: svma(3),
            eh_frame_svma: svma(0),
            eh_frame: data(0),
            eh_frame_hdr_svma: svma(1),
            eh_frame_hdr: data(1),
            debug_frame: data(4),
            stubs_svma: None,
            stub_helper_svma: None,
            unwind_info: None,
            text_segment_svma: None,
            text_segment: None,
        }
    }
}

/// `len` bytes at `offset` of `file` (`file_len` long), or `None` past [`MAX_SECTION_BYTES`]
/// or the file's end (checked first: a header may claim anything).
fn read_at(file: &File, file_len: u64, offset: u64, len: u64) -> Option<Bytes> {
    if len > MAX_SECTION_BYTES || offset.checked_add(len)? > file_len {
        return None;
    }
    let mut buf = vec![0u8; usize::try_from(len).ok()?];
    file.read_exact_at(&mut buf, offset).ok()?;
    Some(Bytes(Rc::from(buf)))
}

/// The ranges blazesym reads to name an offset: the ELF header, program headers (file offsets
/// to addresses), section headers, their names, and the symbol tables with their strings.
pub(crate) fn symbol_ranges<'a, R: object::ReadRef<'a>>(
    obj: &ElfFile64<'a, LittleEndian, R>,
) -> Vec<Range<u64>> {
    let e = obj.endian();
    let h = obj.elf_header();
    let table = |off: u64, n: u64, size: u16| off..off.saturating_add(n * u64::from(size));
    let mut ranges = vec![
        0..std::mem::size_of::<object::elf::FileHeader64<LittleEndian>>() as u64,
        table(h.e_phoff(e), u64::from(h.e_phnum(e)), h.e_phentsize(e)),
        table(
            h.e_shoff(e),
            obj.elf_section_table().len() as u64,
            h.e_shentsize(e),
        ),
    ];
    let of = |names: &[&str]| -> Vec<Range<u64>> {
        names
            .iter()
            .filter_map(|n| obj.section_by_name(n)?.file_range())
            .map(|(off, len)| off..off.saturating_add(len))
            .collect()
    };
    ranges.extend(of(&[".shstrtab", ".dynsym", ".dynstr"]));
    let full = of(&[".symtab", ".strtab"]);
    let total: u64 = ranges.iter().chain(&full).map(|r| r.end - r.start).sum();
    if total <= MAX_SYMBOL_BYTES {
        ranges.extend(full);
    } else {
        ranges.retain(|r| r.end - r.start <= MAX_SYMBOL_BYTES);
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_segment_decides_the_bias_where_segments_share_a_page() {
        // lld: the read-only segment ends in the page the code segment starts in, and the
        // code's linked address is a page above its offset.
        let elf = Elf {
            build_id: None,
            segments: vec![
                Segment {
                    offset: 0,
                    file_size: 0x19188,
                    vaddr: 0,
                    executable: false,
                },
                Segment {
                    offset: 0x19190,
                    file_size: 0x43cd0,
                    vaddr: 0x1a190,
                    executable: true,
                },
            ],
            file_len: 0,
            symbol_ranges: Vec::new(),
            dwarf: None,
            sections: [None, None, None, None, None],
        };
        assert_eq!(
            elf.bias(0x5581_abbf_9000, 0x19000),
            0x5581_abbf_9000 - 0x1a000
        );
    }

    #[test]
    fn reads_this_test_binary() {
        let exe = std::env::current_exe().expect("exe");
        let elf = Elf::read(&File::open(&exe).expect("open")).expect("elf");
        assert!(elf.has_unwind_info());
        assert!(!elf.segments.is_empty());
        let info = elf.section_info();
        assert!(info.eh_frame.as_deref().is_some_and(|d| !d.is_empty()));
        assert!(info.text_svma.is_some());
        let text = elf.segments.iter().find(|s| s.executable).expect("code");
        // A PIE loaded at 0x5555_0000_0000 maps its code from the page holding the segment's
        // start, at that page's linked address.
        let page = text.offset & !0xfff;
        let bias = elf.bias(0x5555_0000_0000 + text.vaddr - (text.offset - page), page);
        assert_eq!(bias, 0x5555_0000_0000);
        let not_elf = tempfile_with(b"#!/bin/sh\n");
        assert!(Elf::read(&not_elf).is_err());
    }

    #[test]
    fn a_file_cut_short_is_an_error_not_a_crash() {
        let exe = std::fs::read(std::env::current_exe().expect("exe")).expect("read");
        assert!(Elf::read(&tempfile_with(&[])).is_err());
        // Headers without the section table (at the file's end) or the sections.
        assert!(Elf::read(&tempfile_with(&exe[..4096])).is_err());
        // A file whose sections lie past its end reads without their bytes.
        let mut cut = exe.clone();
        cut.truncate(exe.len() / 2);
        if let Ok(elf) = Elf::read(&tempfile_with(&cut)) {
            assert!(elf.unwind_bytes() <= cut.len() as u64);
        }
    }

    fn tempfile_with(bytes: &[u8]) -> File {
        use std::io::{Seek, Write};
        // One name per call: tests run at once.
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("embers-agent-elf-{}-{n}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .expect("temp");
        let _ = std::fs::remove_file(&path);
        f.write_all(bytes).expect("write");
        f.rewind().expect("rewind");
        f
    }
}
