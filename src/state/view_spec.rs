//! How the loaded profile is being looked at, as plain data: transforms (noise control), view
//! mode, search, metric. Encoded to and from URL parameters so a link reproduces the view.
//! Pure Rust (no web-sys): unit-tested natively.

use embers_model::tree::diff::DiffMode;
use embers_model::tree::transform::{invert, keep_stacks_through};
use embers_model::view::layout::Orientation;
use embers_model::Profile;

use embers_model::view::paint::Metric;

use crate::state::transform::split_transforms;
pub use crate::state::transform::Transform;

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
    /// Function selected (outlined in the graph, its timeline in the strip above it), when no
    /// sandwich is open (`sandwich` names it then).
    pub select: Option<String>,
    /// Whether the Source panel (the selected function's lines) is open.
    pub source: bool,
}

/// A view applied to a profile.
pub struct Applied {
    /// The displayed profile.
    pub profile: Profile,
    /// Something the user should know about it (e.g. a limited inversion).
    pub note: Option<String>,
    /// What the steps that drop samples (drop, idle presets) removed, and the total before
    /// them, when one applied.
    pub dropped: Option<(u64, u64)>,
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
        let mut dropped = None::<(u64, u64)>;
        for t in &self.transforms {
            let before = p.root_total();
            p = t.apply(&p);
            if t.drops_samples() {
                let (removed, of) = dropped.unwrap_or((0, base.root_total()));
                dropped = Some((removed + before.saturating_sub(p.root_total()), of));
            }
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
        Applied {
            profile: p,
            note,
            dropped,
        }
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
        if self.source {
            out.push(("source", "1".into()));
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
                "source" => v.source = val == "1",
                _ => {}
            }
        }
        v
    }
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
            source: true,
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

    #[test]
    fn dropping_steps_report_what_they_removed() {
        let p = parse_folded(
            "main;runtime.gopark 6\nmain;work 3\nmain;drop_me 1\n",
            "app",
        )
        .unwrap();
        let v = ViewSpec {
            transforms: vec![
                Transform::Idle(embers_model::tree::transform::idle::IdleClass::Wait),
                Transform::FoldThreads,
                Transform::Drop("drop_me".into()),
            ],
            ..ViewSpec::default()
        };
        let applied = v.apply(&p, |_| None);
        assert_eq!(applied.dropped, Some((7, 10)));
        assert_eq!(to_folded(&applied.profile), "app;main;work 3\n");
        let none = ViewSpec::default().apply(&p, |_| None);
        assert_eq!(none.dropped, None);
    }
}
