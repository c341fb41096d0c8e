//! Frame kinds: what a function name says about where the frame runs. A wire fact (DeepFlow
//! decides the prefixes and letters), so it lives in the contract, where the kernel-depth rule
//! ([`super::kernel`]) reads it, and the tree and view only consume it.
//!
//! DeepFlow marks frames with a bracketed prefix (`[k] `, `[t] `, ...); shape B responses may also
//! carry an explicit one-letter `function_types` entry, which wins when present because it knows
//! things the name does not (e.g. `O`, the allocated-object leaf of a memory profile).

/// The kind of a frame, used for colour, legend and filtering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    /// The root of the graph (`app_service`, or `Total` for a per-host graph).
    Root,
    /// `[p] process` (per-host graphs).
    Process,
    /// `[t] thread`.
    Thread,
    /// `[k] kernel function` (or a CUDA library function).
    Kernel,
    /// `[c] ` CUDA frame.
    Cuda,
    /// `[l] library function`.
    Library,
    /// A plain application function.
    App,
    /// Symbol translation failed: `[/path]`, `[unknown] 0x...`, `[unknown start_thread?]`.
    Unresolved,
    /// Allocated object type: the leaf of a memory profile (`function_types` letter `O`).
    Object,
}

impl FrameKind {
    /// Every kind, in legend order.
    pub const ALL: [FrameKind; 9] = [
        FrameKind::Root,
        FrameKind::Process,
        FrameKind::Thread,
        FrameKind::App,
        FrameKind::Library,
        FrameKind::Kernel,
        FrameKind::Cuda,
        FrameKind::Unresolved,
        FrameKind::Object,
    ];

    /// Where the kind is in [`FrameKind::ALL`]: its one-byte code in a profile's columns.
    pub fn index(self) -> u8 {
        FrameKind::ALL.iter().position(|k| *k == self).unwrap_or(0) as u8
    }

    /// Classifies a frame by its name alone.
    pub fn from_name(name: &str) -> FrameKind {
        if let Some(rest) = name.strip_prefix('[') {
            return match rest.as_bytes() {
                [b'p', b']', b' ', ..] => FrameKind::Process,
                [b't', b']', b' ', ..] => FrameKind::Thread,
                [b'k', b']', b' ', ..] => FrameKind::Kernel,
                [b'c', b']', ..] => FrameKind::Cuda,
                [b'l', b']', b' ', ..] => FrameKind::Library,
                _ => FrameKind::Unresolved,
            };
        }
        FrameKind::App
    }

    /// Maps a shape-B `function_types` letter; `None` for a letter we do not know.
    pub fn from_type_letter(letter: &str) -> Option<FrameKind> {
        Some(match letter {
            "H" => FrameKind::Root,
            "P" => FrameKind::Process,
            "T" => FrameKind::Thread,
            "K" => FrameKind::Kernel,
            "C" => FrameKind::Cuda,
            "L" => FrameKind::Library,
            "A" => FrameKind::App,
            "?" => FrameKind::Unresolved,
            "O" => FrameKind::Object,
            _ => return None,
        })
    }

    /// The one-letter `function_types` code the querier uses for this kind.
    pub fn type_letter(self) -> &'static str {
        match self {
            FrameKind::Root => "H",
            FrameKind::Process => "P",
            FrameKind::Thread => "T",
            FrameKind::Kernel => "K",
            FrameKind::Cuda => "C",
            FrameKind::Library => "L",
            FrameKind::App => "A",
            FrameKind::Unresolved => "?",
            FrameKind::Object => "O",
        }
    }

    /// A short human label for legends and tooltips.
    pub fn label(self) -> &'static str {
        match self {
            FrameKind::Root => "root",
            FrameKind::Process => "process",
            FrameKind::Thread => "thread",
            FrameKind::Kernel => "kernel",
            FrameKind::Cuda => "CUDA",
            FrameKind::Library => "library",
            FrameKind::App => "application",
            FrameKind::Unresolved => "unresolved",
            FrameKind::Object => "allocated object",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FrameKind::{self, *};

    #[test]
    fn classifies_every_documented_name_form() {
        let cases = [
            ("[p] nginx", Process),
            ("[t] worker-1", Thread),
            ("[k] do_syscall_64", Kernel),
            ("[c] kernel_fn", Cuda),
            ("[l] malloc", Library),
            ("main", App),
            ("[/usr/lib/libfoo.so]", Unresolved),
            ("[unknown] 0x7f12", Unresolved),
            ("[unknown start_thread?]", Unresolved),
            ("", App),
        ];
        for (name, kind) in cases {
            assert_eq!(FrameKind::from_name(name), kind, "{name}");
        }
    }

    #[test]
    fn type_letters_round_trip() {
        for kind in FrameKind::ALL {
            assert_eq!(FrameKind::from_type_letter(kind.type_letter()), Some(kind));
        }
        assert_eq!(FrameKind::from_type_letter("Z"), None);
    }
}
