//! One reversible step that changes the tree (a transform), as plain data: its chip's text, its
//! URL form and how it applies. Steps on a function name it exactly, so they apply by name to
//! both sides of a comparison or a wall-clock view, and to the table and sandwich built from
//! the result. Pure Rust (no web-sys): unit-tested natively.

use embers_model::tree::search::{parse_terms, substring_matcher};
use embers_model::tree::transform::idle::{drop_idle, IdleClass};
use embers_model::tree::transform::stacks::UNSCOPED_LIBRARY;
use embers_model::tree::transform::{
    cap_kernel_depth, collapse_library, collapse_recursion, collapse_unresolved,
    drop_stacks_through, focus_function, fold_threads, func_set, hide_functions,
    keep_stacks_through, Libraries,
};
use embers_model::Profile;

/// One reversible noise-control step, shown as a removable chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transform {
    /// Merge the `[t]` thread layer.
    FoldThreads,
    /// Keep at most N kernel frames per stack (0 hides them).
    KernelDepth(u32),
    /// Collapse runs of unresolved frames.
    CollapseUnresolved,
    /// Hide (merge) frames whose name contains one of these comma-separated terms.
    Hide(String),
    /// Keep only the stacks through this function.
    Focus(String),
    /// This function as the root, merged over every place it is called from.
    Root(String),
    /// Drop every sample whose stack has this function (totals shrink).
    Drop(String),
    /// Merge this function's frames into their callers (its callees move up).
    Merge(String),
    /// Collapse this function's recursion (`None`: every function's) into its outermost call.
    Recursion(Option<String>),
    /// Collapse runs of this library's `[l]` frames (`None`: every library's) into one.
    Library(Option<String>),
    /// Drop the samples of threads waiting for work (off-CPU) or spinning (on-CPU).
    Idle(IdleClass),
}

/// The heads of the URL forms, for splitting a list whose names may hold commas.
pub const HEADS: [&str; 14] = [
    "threads",
    "unresolved",
    "idle",
    "spin",
    "rec",
    "libs",
    "kernel:",
    "hide:",
    "focus:",
    "root:",
    "drop:",
    "merge:",
    "rec:",
    "lib:",
];

impl Transform {
    /// The chip's text.
    pub fn label(&self) -> String {
        match self {
            Transform::FoldThreads => "Threads folded".into(),
            Transform::KernelDepth(0) => "Kernel hidden".into(),
            Transform::KernelDepth(n) => format!("Kernel ≤ {n}"),
            Transform::CollapseUnresolved => "Unresolved collapsed".into(),
            Transform::Hide(p) => format!("Hidden: {p}"),
            Transform::Focus(f) => format!("Only through: {f}"),
            Transform::Root(f) => format!("Focus: {f}"),
            Transform::Drop(f) => format!("Dropped: {f}"),
            Transform::Merge(f) => format!("Merged: {f}"),
            Transform::Recursion(None) => "Recursion collapsed".into(),
            Transform::Recursion(Some(f)) => format!("Recursion collapsed: {f}"),
            Transform::Library(None) => "Libraries collapsed".into(),
            Transform::Library(Some(l)) => format!("Library collapsed: {}", library_label(l)),
            Transform::Idle(IdleClass::Wait) => "Idle waits dropped".into(),
            Transform::Idle(IdleClass::Spin) => "Idle spinning dropped".into(),
        }
    }

    /// Applies the step.
    pub fn apply(&self, p: &Profile) -> Profile {
        let named = |name: &str| func_set(p, |n| n == name);
        match self {
            Transform::FoldThreads => fold_threads(p),
            Transform::KernelDepth(n) => cap_kernel_depth(p, *n),
            Transform::CollapseUnresolved => collapse_unresolved(p),
            Transform::Hide(pattern) => {
                let terms = parse_terms(pattern);
                hide_functions(p, &func_set(p, substring_matcher(&terms)))
            }
            Transform::Focus(name) => keep_stacks_through(p, &named(name)),
            Transform::Root(name) => focus_function(p, &named(name), name),
            Transform::Drop(name) => drop_stacks_through(p, &named(name)),
            Transform::Merge(name) => hide_functions(p, &named(name)),
            Transform::Recursion(name) => {
                collapse_recursion(p, name.as_deref().map(named).as_ref())
            }
            Transform::Library(key) => {
                collapse_library(p, key.as_deref().map_or(Libraries::All, Libraries::Named))
            }
            Transform::Idle(class) => drop_idle(p, *class),
        }
    }

    /// Whether the step drops samples (the status line says how much).
    pub fn drops_samples(&self) -> bool {
        matches!(self, Transform::Drop(_) | Transform::Idle(_))
    }

    /// The URL form: `threads`, `kernel:2`, `unresolved`, `hide:<terms>`, `focus:<name>`,
    /// `root:<name>`, `drop:<name>`, `merge:<name>`, `rec` / `rec:<name>`, `libs` /
    /// `lib:<library>`, `idle`, `spin`.
    pub fn to_param(&self) -> String {
        match self {
            Transform::FoldThreads => "threads".into(),
            Transform::KernelDepth(n) => format!("kernel:{n}"),
            Transform::CollapseUnresolved => "unresolved".into(),
            Transform::Hide(p) => format!("hide:{p}"),
            Transform::Focus(f) => format!("focus:{f}"),
            Transform::Root(f) => format!("root:{f}"),
            Transform::Drop(f) => format!("drop:{f}"),
            Transform::Merge(f) => format!("merge:{f}"),
            Transform::Recursion(None) => "rec".into(),
            Transform::Recursion(Some(f)) => format!("rec:{f}"),
            Transform::Library(None) => "libs".into(),
            Transform::Library(Some(l)) => format!("lib:{l}"),
            Transform::Idle(IdleClass::Wait) => "idle".into(),
            Transform::Idle(IdleClass::Spin) => "spin".into(),
        }
    }

    /// Parses [`Transform::to_param`]'s form.
    pub fn from_param(s: &str) -> Option<Transform> {
        let (head, tail) = s.split_once(':').map_or((s, None), |(h, t)| (h, Some(t)));
        let name = |t: &str| (!t.is_empty()).then(|| t.to_string());
        Some(match (head, tail) {
            ("threads", None) => Transform::FoldThreads,
            ("unresolved", None) => Transform::CollapseUnresolved,
            ("idle", None) => Transform::Idle(IdleClass::Wait),
            ("spin", None) => Transform::Idle(IdleClass::Spin),
            ("rec", None) => Transform::Recursion(None),
            ("libs", None) => Transform::Library(None),
            ("kernel", Some(n)) => Transform::KernelDepth(n.parse().ok()?),
            ("hide", Some(p)) => Transform::Hide(name(p)?),
            ("focus", Some(f)) => Transform::Focus(name(f)?),
            ("root", Some(f)) => Transform::Root(name(f)?),
            ("drop", Some(f)) => Transform::Drop(name(f)?),
            ("merge", Some(f)) => Transform::Merge(name(f)?),
            ("rec", Some(f)) => Transform::Recursion(Some(name(f)?)),
            ("lib", Some(l)) => Transform::Library(Some(name(l)?)),
            _ => return None,
        })
    }
}

/// How a library key reads on a chip.
fn library_label(key: &str) -> String {
    if key == UNSCOPED_LIBRARY {
        "C symbols".into()
    } else {
        key.into()
    }
}

/// Splits `threads,hide:a,b,kernel:2` into transforms: a comma starts a new transform only when
/// what follows is a known transform head (names and hide terms may contain commas).
pub fn split_transforms(s: &str) -> Vec<Transform> {
    let mut parts: Vec<String> = Vec::new();
    for piece in s.split(',') {
        let starts_new = HEADS.iter().any(|h| {
            piece == h.trim_end_matches(':') || (h.ends_with(':') && piece.starts_with(h))
        });
        match parts.last_mut() {
            Some(last) if !starts_new => {
                last.push(',');
                last.push_str(piece);
            }
            _ => parts.push(piece.to_string()),
        }
    }
    parts
        .iter()
        .filter_map(|p| Transform::from_param(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::export::folded::to_folded;
    use embers_model::wire::folded::parse_folded;

    fn every() -> Vec<Transform> {
        vec![
            Transform::FoldThreads,
            Transform::KernelDepth(2),
            Transform::CollapseUnresolved,
            Transform::Hide("a,b".into()),
            Transform::Focus("main".into()),
            Transform::Root("std::map<int, std::string>::find".into()),
            Transform::Drop("runtime.gopark".into()),
            Transform::Merge("net/http.(*conn).serve".into()),
            Transform::Recursion(None),
            Transform::Recursion(Some("fib".into())),
            Transform::Library(None),
            Transform::Library(Some("std".into())),
            Transform::Idle(IdleClass::Wait),
            Transform::Idle(IdleClass::Spin),
        ]
    }

    #[test]
    fn every_transform_round_trips_through_its_url_form() {
        for t in every() {
            assert_eq!(
                Transform::from_param(&t.to_param()),
                Some(t.clone()),
                "{t:?}"
            );
        }
        let joined: Vec<String> = every().iter().map(Transform::to_param).collect();
        assert_eq!(split_transforms(&joined.join(",")), every());
    }

    #[test]
    fn names_apply_exactly_and_labels_say_what_was_done() {
        let p = parse_folded(
            "main;fib;fib;x 2\nmain;fibonacci 1\nmain;[l] std::a;[l] std::b 1\n",
            "app",
        )
        .unwrap();
        let merged = Transform::Merge("fib".into()).apply(&p);
        assert_eq!(
            to_folded(&merged),
            "app;main;[l] std::a;[l] std::b 1\napp;main;fibonacci 1\napp;main;x 2\n"
        );
        let dropped = Transform::Drop("fib".into()).apply(&p);
        assert_eq!(dropped.root_total(), 2, "fibonacci is not fib");
        let rec = Transform::Recursion(Some("fib".into())).apply(&p);
        assert_eq!(
            to_folded(&rec),
            "app;main;[l] std::a;[l] std::b 1\napp;main;fib;x 2\napp;main;fibonacci 1\n"
        );
        let lib = Transform::Library(Some("std".into())).apply(&p);
        assert!(to_folded(&lib).contains("app;main;[l] std::a 1\n"));
        let root = Transform::Root("fib".into()).apply(&p);
        assert_eq!(to_folded(&root), "fib;fib;x 2\n");
        assert_eq!(
            Transform::Library(Some(UNSCOPED_LIBRARY.into())).label(),
            "Library collapsed: C symbols"
        );
        assert_eq!(Transform::Drop("f".into()).label(), "Dropped: f");
        assert!(Transform::Idle(IdleClass::Wait).drops_samples());
        assert!(!Transform::Merge("f".into()).drops_samples());
    }

    #[test]
    fn malformed_forms_are_refused() {
        for bad in [
            "drop:", "merge", "lib:", "rec:", "kernel:x", "root", "bogus:1", "idle:x",
        ] {
            assert_eq!(Transform::from_param(bad), None, "{bad}");
        }
    }
}
