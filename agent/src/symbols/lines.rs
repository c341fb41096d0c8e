//! blazesym's answer for one user address turned into a [`Symbolized`]: the function, then the
//! functions inlined there (outermost first), each at its own line. blazesym already moves each
//! line up a level (the outer function's line is that of the inlined call, the innermost
//! function's the address's own), so the lines read as `addr2line -i` prints them, reversed.
//! File names are shared between addresses ([`Files`]): a window's stacks repeat a few files
//! many times.

use std::collections::HashSet;
use std::rc::Rc;

use blazesym::symbolize::{CodeInfo, Sym, Symbolized as Answer};

use crate::frame::{Function, Symbolized};

/// Most distinct file names kept before the set starts over.
const MAX_FILES: usize = 1 << 14;

/// File names met, each held once.
#[derive(Default)]
pub struct Files(HashSet<Rc<str>>);

impl Files {
    fn intern(&mut self, name: &str) -> Rc<str> {
        if let Some(known) = self.0.get(name) {
            return known.clone();
        }
        if self.0.len() >= MAX_FILES {
            self.0.clear();
        }
        let name: Rc<str> = Rc::from(name);
        self.0.insert(name.clone());
        name
    }

    /// The file and line of `info`: its directory joined to its file (DWARF keeps them apart),
    /// `None` without a line (0 is "no line" in DWARF) or with a name that is not UTF-8.
    fn line(&mut self, info: Option<&CodeInfo<'_>>) -> Option<(Rc<str>, u32)> {
        let info = info?;
        let line = info.line.filter(|&l| l > 0)?;
        let path = info.to_path();
        Some((self.intern(path.to_str()?), line))
    }
}

/// What blazesym found at one address; `None` when it found no function.
pub fn symbolized(answer: Answer<'_>, files: &mut Files) -> Option<Rc<Symbolized>> {
    let Answer::Sym(sym) = answer else {
        return None;
    };
    Some(Rc::new(from_sym(&sym, files)))
}

fn from_sym(sym: &Sym<'_>, files: &mut Files) -> Symbolized {
    let outer = Function {
        name: Rc::from(&*sym.name),
        line: files.line(sym.code_info.as_deref()),
    };
    let inlined = sym.inlined.iter().map(|f| Function {
        name: Rc::from(&*f.name),
        line: files.line(f.code_info.as_ref()),
    });
    Symbolized {
        functions: std::iter::once(outer).chain(inlined).collect(),
    }
}

/// The outermost function's name (what a frame was called before lines).
pub fn outer_name(s: &Symbolized) -> Option<&str> {
    s.functions.first().map(|f| &*f.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_shared_and_lines_need_a_number() {
        let mut files = Files::default();
        let a = files.intern("/src/a.c");
        let again = files.intern("/src/a.c");
        assert!(Rc::ptr_eq(&a, &again));
        assert_eq!(files.line(None), None);
    }
}
