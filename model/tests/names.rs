//! Golden test of the name shortening (`view::names::shorten`) on real Go, C++, Rust and Java
//! names (`tests/data/names/real-names.txt`): each name at the widths a table cell and a bar
//! label have, in `tests/data/names/shortened.txt`. `BLESS=1` regenerates it; review the diff.

use embers_model::testkit::{check_snapshot, data_dir};
use embers_model::view::names::shorten;

/// Widths in characters: a wide table cell, a narrow one, a bar label, a small bar.
const WIDTHS: [usize; 5] = [72, 48, 32, 20, 12];

#[test]
fn real_names_shorten_to_their_own_name_last() {
    let dir = data_dir().join("names");
    let names = std::fs::read_to_string(dir.join("real-names.txt")).expect("names file");
    let mut out = String::new();
    for name in names
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        out.push_str(name);
        out.push('\n');
        for width in WIDTHS {
            let short = shorten(name, width).map(|s| s.into_owned());
            if let Some(s) = &short {
                assert!(s.chars().count() <= width, "{name} at {width}: {s}");
            }
            out.push_str(&format!(
                "  {width:>3} {}\n",
                short.as_deref().unwrap_or("(nothing)")
            ));
        }
    }
    check_snapshot(&dir.join("shortened.txt"), &out);
}
