//! What the collector reads from an ELF file: its build id, its loadable segments (to turn a
//! mapping into a load bias) and the sections framehop unwinds with (`.eh_frame`,
//! `.eh_frame_hdr`, `.text`, `.got`, `.debug_frame`). The file is memory-mapped and the section
//! data handed out as views of that one mapping, so a library shared by every process is read
//! once and only the pages an unwind touches are loaded.

use std::fs::File;
use std::ops::{Deref, Range};
use std::rc::Rc;

use framehop::ExplicitModuleSectionInfo;
use memmap2::Mmap;
use object::elf::PF_X;
use object::{Object, ObjectSection, ObjectSegment, SegmentFlags};

/// A view of part of a mapped file (framehop's section data type).
#[derive(Clone)]
pub struct Bytes {
    map: Rc<Mmap>,
    range: Range<usize>,
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.map.get(self.range.clone()).unwrap_or(&[])
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
    sections: [Option<Section>; 5],
}

const SECTIONS: [&str; 5] = [
    ".eh_frame",
    ".eh_frame_hdr",
    ".text",
    ".got",
    ".debug_frame",
];

impl Elf {
    /// Map and read `file`; `None` when it is not an ELF file this collector can use.
    pub fn read(file: &File) -> Result<Elf, String> {
        // SAFETY: the mapping is read-only and private. A file truncated while mapped would
        // fault on access; binaries are replaced by rename, not rewritten in place.
        let map = Rc::new(unsafe { Mmap::map(file) }.map_err(|e| format!("cannot map: {e}"))?);
        let obj = object::File::parse(&**map).map_err(|e| format!("not an ELF file: {e}"))?;
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
        let sections = SECTIONS.map(|name| {
            let s = obj.section_by_name(name)?;
            let data = s.file_range().and_then(|(off, len)| {
                let start = usize::try_from(off).ok()?;
                let end = start.checked_add(usize::try_from(len).ok()?)?;
                (end <= map.len()).then(|| Bytes {
                    map: map.clone(),
                    range: start..end,
                })
            });
            Some(Section {
                svma: s.address()..s.address() + s.size(),
                data,
            })
        });
        Ok(Elf {
            build_id,
            segments,
            sections,
        })
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

    fn tempfile_with(bytes: &[u8]) -> File {
        use std::io::{Seek, Write};
        let path = std::env::temp_dir().join(format!("embers-agent-elf-{}", std::process::id()));
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
