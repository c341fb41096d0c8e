//! `/proc/<pid>/maps` lines: which file (or which kind of anonymous memory) each address range
//! of a process holds. Only executable ranges matter to the collector.

/// One executable mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapLine {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Offset in the file of `start`.
    pub offset: u64,
    /// Device of the file (major, minor).
    pub dev: (u32, u32),
    /// Inode of the file, 0 for anonymous memory.
    pub inode: u64,
    /// What is mapped.
    pub what: Mapped,
}

/// What a mapping holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mapped {
    /// A file, by the path the process sees.
    File {
        /// The path, without the kernel's ` (deleted)` mark.
        path: String,
        /// The file was deleted (or replaced) after it was mapped.
        deleted: bool,
    },
    /// The vDSO.
    Vdso,
    /// Anonymous memory (JIT code), or a named kind like `[anon:...]`.
    Anon,
}

fn hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text, 16).ok()
}

/// The executable mappings of a maps file, in address order; lines that do not parse are
/// skipped (the kernel writes them, but a partial read at process exit can cut the last one).
pub fn parse_executable(text: &str) -> Vec<MapLine> {
    let mut lines: Vec<MapLine> = text.lines().filter_map(parse_line).collect();
    lines.sort_by_key(|l| l.start);
    lines
}

fn parse_line(line: &str) -> Option<MapLine> {
    let mut fields = line.splitn(6, ' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    if perms.as_bytes().get(2) != Some(&b'x') {
        return None;
    }
    let offset = hex(fields.next()?)?;
    let (major, minor) = fields.next()?.split_once(':')?;
    let inode = fields.next()?.parse::<u64>().ok()?;
    let path = fields.next().unwrap_or("").trim_start();
    let what = if path == "[vdso]" {
        Mapped::Vdso
    } else if inode == 0 || path.is_empty() || path.starts_with('[') {
        Mapped::Anon
    } else {
        let (path, deleted) = match path.strip_suffix(" (deleted)") {
            Some(p) => (p, true),
            None => (path, false),
        };
        Mapped::File {
            path: path.to_owned(),
            deleted,
        }
    };
    Some(MapLine {
        start: hex(start)?,
        end: hex(end)?,
        offset,
        dev: (
            u32::from_str_radix(major, 16).ok()?,
            u32::from_str_radix(minor, 16).ok()?,
        ),
        inode,
        what,
    })
}

/// The mapping holding `addr`, in lines sorted by start.
pub fn find(lines: &[MapLine], addr: u64) -> Option<&MapLine> {
    let i = lines.partition_point(|l| l.start <= addr);
    lines[..i].last().filter(|l| addr < l.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55f2496da000-55f2496dc000 r--p 00000000 fe:00 247282                     /usr/bin/head
55f2496dc000-55f2496e2000 r-xp 00002000 fe:00 247282                     /usr/bin/head
55f25a822000-55f25a843000 rw-p 00000000 00:00 0                          [heap]
7f997b6a5000-7f997b7fb000 r-xp 00026000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000000000-7f0000100000 rwxp 00000000 00:00 0 
7f0000200000-7f0000300000 r-xp 00001000 08:01 99                         /tmp/my lib.so (deleted)
7f997b874000-7f997b876000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
7f99-cut";

    #[test]
    fn keeps_executable_mappings_with_their_files() {
        let lines = parse_executable(MAPS);
        assert_eq!(lines.len(), 6);
        assert_eq!(
            lines[0],
            MapLine {
                start: 0x55f2496dc000,
                end: 0x55f2496e2000,
                offset: 0x2000,
                dev: (0xfe, 0),
                inode: 247282,
                what: Mapped::File {
                    path: "/usr/bin/head".into(),
                    deleted: false
                },
            }
        );
        assert_eq!(lines[1].what, Mapped::Anon);
        assert_eq!(
            lines[2].what,
            Mapped::File {
                path: "/tmp/my lib.so".into(),
                deleted: true
            }
        );
        assert_eq!(lines[4].what, Mapped::Vdso);
        assert_eq!(lines[5].what, Mapped::Anon, "[vsyscall]");
    }

    #[test]
    fn finds_the_mapping_of_an_address() {
        let lines = parse_executable(MAPS);
        assert_eq!(find(&lines, 0x55f2496dc000).map(|l| l.inode), Some(247282));
        assert_eq!(find(&lines, 0x55f2496e1fff).map(|l| l.inode), Some(247282));
        assert_eq!(find(&lines, 0x55f2496e2000), None);
        assert_eq!(find(&lines, 0x10), None);
        assert_eq!(
            find(&lines, 0x7f997b875000).map(|l| &l.what),
            Some(&Mapped::Vdso)
        );
    }
}
