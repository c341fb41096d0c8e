//! How the loaded profile is being looked at, as plain data: transforms (noise control), view
//! mode, search, metric. Encoded to and from URL parameters so a link reproduces the view.
//! Pure Rust (no web-sys): unit-tested natively.

use embers_model::tree::diff::DiffMode;
use embers_model::tree::search::{parse_terms, substring_matcher};
use embers_model::tree::transform::{
    cap_kernel_depth, collapse_unresolved, fold_threads, func_set, hide_functions, invert,
    keep_stacks_through,
};
use embers_model::view::layout::Orientation;
use embers_model::Profile;

use embers_model::view::paint::Metric;

/// One reversible noise-control step, shown as a removable chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transform {
    /// Merge the `[t]` thread layer.
    FoldThreads,
    /// Keep at most N kernel frames per stack (0 hides them).
    KernelDepth(u32),
    /// Collapse runs of unresolved frames.
    CollapseUnresolved,
    /// Hide frames whose name contains one of these comma-separated terms.
    Hide(String),
    /// Keep only the stacks through this function (exact name).
    Focus(String),
}

impl Transform {
    /// The chip's text.
    pub fn label(&self) -> String {
        match self {
            Transform::FoldThreads => "Threads folded".into(),
            Transform::KernelDepth(0) => "Kernel hidden".into(),
            Transform::KernelDepth(n) => format!("Kernel ≤ {n}"),
            Transform::CollapseUnresolved => "Unresolved collapsed".into(),
            Transform::Hide(p) => format!("Hidden: {p}"),
            Transform::Focus(f) => format!("Focus: {f}"),
        }
    }

    /// Applies the step.
    pub fn apply(&self, p: &Profile) -> Profile {
        match self {
            Transform::FoldThreads => fold_threads(p),
            Transform::KernelDepth(n) => cap_kernel_depth(p, *n),
            Transform::CollapseUnresolved => collapse_unresolved(p),
            Transform::Hide(pattern) => {
                let terms = parse_terms(pattern);
                hide_functions(p, &func_set(p, substring_matcher(&terms)))
            }
            Transform::Focus(name) => keep_stacks_through(p, &func_set(p, |n| n == name)),
        }
    }

    /// The URL form: `threads`, `kernel:2`, `unresolved`, `hide:<terms>`, `focus:<name>`.
    pub fn to_param(&self) -> String {
        match self {
            Transform::FoldThreads => "threads".into(),
            Transform::KernelDepth(n) => format!("kernel:{n}"),
            Transform::CollapseUnresolved => "unresolved".into(),
            Transform::Hide(p) => format!("hide:{p}"),
            Transform::Focus(f) => format!("focus:{f}"),
        }
    }

    /// Parses [`Transform::to_param`]'s form.
    pub fn from_param(s: &str) -> Option<Transform> {
        let (head, tail) = s.split_once(':').map_or((s, None), |(h, t)| (h, Some(t)));
        Some(match (head, tail) {
            ("threads", None) => Transform::FoldThreads,
            ("unresolved", None) => Transform::CollapseUnresolved,
            ("kernel", Some(n)) => Transform::KernelDepth(n.parse().ok()?),
            ("hide", Some(p)) if !p.is_empty() => Transform::Hide(p.into()),
            ("focus", Some(f)) if !f.is_empty() => Transform::Focus(f.into()),
            _ => return None,
        })
    }
}

/// The search box.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchSpec {
    /// What was typed: comma-separated terms, or one regular expression.
    pub text: String,
    /// Treat `text` as a regular expression.
    pub regex: bool,
    /// Keep only matching stacks instead of highlighting.
    pub filter: bool,
}

impl SearchSpec {
    /// Whether there is anything to search for.
    pub fn is_active(&self) -> bool {
        !self.text.trim().is_empty()
    }
}

/// Whether the graph shows callers or callees first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TreeMode {
    /// Top-down call tree.
    #[default]
    TopDown,
    /// Bottom-up (inverted): leaves first.
    Inverted,
}

/// Everything about the view that a shared link should reproduce (besides the query).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewSpec {
    /// Noise-control steps, in order.
    pub transforms: Vec<Transform>,
    /// Top-down or inverted.
    pub mode: TreeMode,
    /// Root on top (icicle) or bottom (flame).
    pub orientation: Orientation,
    /// The search.
    pub search: SearchSpec,
    /// Total or self.
    pub metric: Metric,
    /// How a comparison is scaled (normalised unless `diff=absolute`).
    pub diff_mode: DiffMode,
    /// Zoom path as function names from the root's child down (survives transforms and reloads).
    pub zoom_path: Vec<String>,
    /// Function whose sandwich view is open.
    pub sandwich: Option<String>,
    /// Function selected (outlined in the graph, its timeline under the main one), when no
    /// sandwich is open (`sandwich` names it then).
    pub select: Option<String>,
}

/// A view applied to a profile.
pub struct Applied {
    /// The displayed profile.
    pub profile: Profile,
    /// Something the user should know about it (e.g. a limited inversion).
    pub note: Option<String>,
}

/// Separates zoom path names in the URL (names never contain it: DeepFlow replaces `;`).
const PATH_SEP: char = ';';

impl ViewSpec {
    /// Derives the displayed profile from the decoded one. Search filtering is applied last.
    pub fn apply(
        &self,
        base: &Profile,
        search_funcs: impl Fn(&Profile) -> Option<Vec<bool>>,
    ) -> Applied {
        let mut p = base.clone();
        let mut note = None;
        for t in &self.transforms {
            p = t.apply(&p);
        }
        if self.mode == TreeMode::Inverted {
            let inverted = invert(&p);
            note = inverted.caller_depth_limit.map(|d| {
                format!(
                    "inverted view shows up to {d} callers per frame (profile too large for all)"
                )
            });
            p = inverted.profile;
        }
        if self.search.filter && self.search.is_active() {
            if let Some(funcs) = search_funcs(&p) {
                p = keep_stacks_through(&p, &funcs);
            }
        }
        Applied { profile: p, note }
    }

    /// URL parameters for the view (only what differs from the default).
    pub fn to_params(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if !self.transforms.is_empty() {
            let list: Vec<String> = self.transforms.iter().map(Transform::to_param).collect();
            out.push(("transforms", list.join(",")));
        }
        if self.mode == TreeMode::Inverted {
            out.push(("inverted", "1".into()));
        }
        if self.orientation == Orientation::Flame {
            out.push(("view", "flame".into()));
        }
        if self.search.is_active() {
            out.push(("search", self.search.text.clone()));
            if self.search.regex {
                out.push(("regex", "1".into()));
            }
            if self.search.filter {
                out.push(("filter", "1".into()));
            }
        }
        if self.metric == Metric::Self_ {
            out.push(("metric", "self".into()));
        }
        if self.diff_mode == DiffMode::Absolute {
            out.push(("diff", "absolute".into()));
        }
        if !self.zoom_path.is_empty() {
            out.push(("zoom", self.zoom_path.join(&PATH_SEP.to_string())));
        }
        if let Some(f) = &self.sandwich {
            out.push(("sandwich", f.clone()));
        } else if let Some(f) = &self.select {
            out.push(("select", f.clone()));
        }
        out
    }

    /// Reads a view from URL parameters; unknown or malformed values are ignored.
    pub fn from_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> ViewSpec {
        let mut v = ViewSpec::default();
        for (k, val) in params {
            match k {
                // Hide terms may contain commas, so each transform is split at the known heads.
                "transforms" => v.transforms = split_transforms(val),
                "inverted" => {
                    v.mode = if val == "1" {
                        TreeMode::Inverted
                    } else {
                        TreeMode::TopDown
                    }
                }
                "view" => {
                    v.orientation = if val == "flame" {
                        Orientation::Flame
                    } else {
                        Orientation::Icicle
                    }
                }
                "search" => v.search.text = val.to_string(),
                "regex" => v.search.regex = val == "1",
                "filter" => v.search.filter = val == "1",
                "metric" => {
                    v.metric = if val == "self" {
                        Metric::Self_
                    } else {
                        Metric::Total
                    }
                }
                "diff" => {
                    v.diff_mode = if val == "absolute" {
                        DiffMode::Absolute
                    } else {
                        DiffMode::Normalized
                    }
                }
                "zoom" => {
                    v.zoom_path = val
                        .split(PATH_SEP)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                }
                "sandwich" if !val.is_empty() => v.sandwich = Some(val.to_string()),
                "select" if !val.is_empty() => v.select = Some(val.to_string()),
                _ => {}
            }
        }
        v
    }
}

/// Splits `threads,hide:a,b,kernel:2` into transforms: a comma starts a new transform only when
/// what follows is a known transform head.
fn split_transforms(s: &str) -> Vec<Transform> {
    const HEADS: [&str; 5] = ["threads", "unresolved", "kernel:", "hide:", "focus:"];
    let mut parts: Vec<String> = Vec::new();
    for piece in s.split(',') {
        let starts_new = HEADS
            .iter()
            .any(|h| piece == h.trim_end_matches(':') || piece.starts_with(h));
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

    #[test]
    fn view_round_trips_through_url_params() {
        let v = ViewSpec {
            transforms: vec![
                Transform::FoldThreads,
                Transform::Hide("a,b".into()),
                Transform::KernelDepth(2),
                Transform::Focus("main".into()),
            ],
            mode: TreeMode::Inverted,
            orientation: Orientation::Flame,
            search: SearchSpec {
                text: "fib,read".into(),
                regex: false,
                filter: true,
            },
            metric: Metric::Self_,
            diff_mode: DiffMode::Absolute,
            zoom_path: vec!["[t] w".into(), "main".into()],
            sandwich: Some("fib".into()),
            select: None,
        };
        let params = v.to_params();
        let back = ViewSpec::from_params(params.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, v);
        assert!(ViewSpec::default().to_params().is_empty());
        let selected = ViewSpec {
            select: Some("[k] vfs_read".into()),
            ..ViewSpec::default()
        };
        let params = selected.to_params();
        assert_eq!(params, [("select", "[k] vfs_read".to_owned())]);
        let back = ViewSpec::from_params(params.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, selected);
    }

    #[test]
    fn transforms_apply_in_order_then_inversion() {
        let p = parse_folded("[t] a;main;[k] sys 2\n[t] b;main 1\n", "app").unwrap();
        let v = ViewSpec {
            transforms: vec![Transform::FoldThreads, Transform::KernelDepth(0)],
            mode: TreeMode::Inverted,
            ..ViewSpec::default()
        };
        assert_eq!(to_folded(&v.apply(&p, |_| None).profile), "app;main 3\n");
    }

    #[test]
    fn malformed_params_are_ignored() {
        let v = ViewSpec::from_params([("transforms", "bogus,kernel:x,threads"), ("zoom", ";;")]);
        assert_eq!(v.transforms, [Transform::FoldThreads]);
        assert!(v.zoom_path.is_empty());
    }
}
