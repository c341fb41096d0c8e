//! Two profiles as text: what grew and what shrank from a baseline to a comparison. Each
//! function's total is taken as a share of its own profile's total, so ranges of different
//! length compare fairly, and the functions are ranked by the change of that share (in
//! percentage points). When a function grew because a caller did — the callees of a hot new
//! call change about as much — the caller is named and its callees are folded into its line,
//! so the first line names where the change starts.

use std::fmt::Write as _;

use crate::tree::diff::{Diff, DiffMode};
use crate::tree::order::sort_by_dyn;
use crate::tree::profile::Profile;
use crate::tree::stats::{diff_stats, DiffStats};
use crate::view::format::{format_change, format_percent};

use super::text::{self, Values};
use super::Subject;

/// Changes smaller than this share (0.05 percentage points) are noise, not listed.
const MIN_CHANGE: f64 = 0.0005;
/// A callee's change is "alike" its caller's, and folded into the caller's line, when it is
/// at most the caller's (plus this much, 0.1 percentage points, for rounding) ...
const ALIKE: f64 = 0.001;
/// ... and at least this part of it: most of the callee's change is the caller's.
const EXPLAINED: f64 = 0.8;
/// Most folded callees named on a line.
const FOLDED_NAMES: usize = 3;

/// One function's change.
struct Change {
    func: u32,
    change: f64,
    stats: DiffStats,
}

/// What grew and shrank from `baseline` to `comparison`, described by `baseline_label` and
/// `comparison_label` (their ranges or snapshot names).
pub fn compare_summary(
    baseline: &Profile,
    comparison: &Profile,
    labels: [&str; 2],
    subject: &Subject,
) -> String {
    let values = Values::of(&subject.event_type);
    let mut out = format!("{}\n", subject.title);
    let totals = [baseline.root_total(), comparison.root_total()];
    for (label, (side, total)) in labels
        .iter()
        .zip(["Baseline", "Comparison"].iter().zip(totals))
    {
        let _ = writeln!(
            out,
            "{side}: {label}, {} of {}.",
            values.value(total),
            values.measure
        );
    }
    if totals.contains(&0) {
        let empty = if totals[0] == 0 {
            "baseline"
        } else {
            "comparison"
        };
        let _ = writeln!(out, "The {empty} has no samples: nothing to compare.");
        return out;
    }
    out.push_str(
        "Shares are of each side's own total, so ranges of different length compare fairly.\n",
    );
    let diff = Diff::new(baseline, comparison, DiffMode::Normalized);
    let changes = changes(&diff, totals);
    let rows = subject.rows();
    for grew in [true, false] {
        let listed: Vec<&Change> = changes
            .iter()
            .filter(|c| {
                if grew {
                    c.change >= MIN_CHANGE
                } else {
                    c.change <= -MIN_CHANGE
                }
            })
            .collect();
        write_list(&mut out, &diff.profile, &listed, grew, rows, totals);
    }
    out
}

/// Every function's change of total share, largest growth first; ties by how close to the
/// root the function is called (callers before callees), then name.
fn changes(diff: &Diff, totals: [u64; 2]) -> Vec<Change> {
    let profile = &diff.profile;
    let depths = text::min_depths(profile);
    let root = profile.func(0);
    let share = |v: u64, total: u64| v as f64 / total as f64;
    let mut all: Vec<Change> = diff_stats(profile, &diff.values)
        .into_iter()
        .filter(|s| s.func != root)
        .map(|stats| Change {
            func: stats.func,
            change: share(stats.comparison.total, totals[1])
                - share(stats.baseline.total, totals[0]),
            stats,
        })
        .collect();
    sort_by_dyn(&mut all, &|a, b| {
        b.change
            .total_cmp(&a.change)
            .then_with(|| depths[a.func as usize].cmp(&depths[b.func as usize]))
            .then_with(|| {
                profile
                    .function_name(a.func)
                    .cmp(profile.function_name(b.func))
            })
    });
    all
}

fn write_list(
    out: &mut String,
    profile: &Profile,
    changes: &[&Change],
    grew: bool,
    rows: usize,
    totals: [u64; 2],
) {
    let _ = writeln!(
        out,
        "\n{} (share of the total, baseline → comparison):",
        if grew { "Grew" } else { "Shrank" }
    );
    // Shrinking functions come smallest (most negative) last: walk them from the end.
    let ordered: Vec<&Change> = if grew {
        changes.to_vec()
    } else {
        changes.iter().rev().copied().collect()
    };
    let mut shown: Vec<(&Change, Vec<u32>)> = Vec::new();
    for c in ordered {
        let caller = shown.iter().position(|(s, _)| {
            let (outer, inner) = (s.change.abs(), c.change.abs());
            inner <= outer + ALIKE
                && inner >= outer * EXPLAINED
                && text::called_under(profile, c.func, s.func)
        });
        match caller {
            Some(i) => shown[i].1.push(c.func),
            None if shown.len() < rows => shown.push((c, Vec::new())),
            None => {}
        }
    }
    if shown.is_empty() {
        out.push_str("  nothing changed by more than 0.05 percentage points\n");
    }
    for (i, (c, folded)) in shown.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>3}. {:>8}  {} → {}  {}{}",
            i + 1,
            format_change(c.change),
            format_percent(c.stats.baseline.total, totals[0]),
            format_percent(c.stats.comparison.total, totals[1]),
            text::name(profile.function_name(c.func)),
            folded_note(profile, folded)
        );
    }
}

/// `  (with 4 callees alike: a, b, c, …)`, or nothing.
fn folded_note(profile: &Profile, folded: &[u32]) -> String {
    if folded.is_empty() {
        return String::new();
    }
    let names: Vec<String> = folded
        .iter()
        .take(FOLDED_NAMES)
        .map(|&f| text::name(profile.function_name(f)))
        .collect();
    let more = if folded.len() > FOLDED_NAMES {
        ", …"
    } else {
        ""
    };
    let callees = if folded.len() == 1 {
        "callee"
    } else {
        "callees"
    };
    format!(
        "  (with {} {callees} alike: {}{more})",
        folded.len(),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::folded::parse_folded;

    fn subject() -> Subject {
        Subject {
            title: "api-gateway, on-cpu".into(),
            event_type: "on-cpu".into(),
            rows: 5,
        }
    }

    #[test]
    fn names_the_caller_where_the_growth_starts_first() {
        let before = "\
[t] gw;main;serve;route;render.jsonEncode;json.Marshal;mallocgc 60
[t] gw;main;serve;route;db.Query 540
[t] gw;main;serve;read 400
";
        let after = "\
[t] gw;main;serve;route;render.jsonEncode;json.Marshal;mallocgc 1100
[t] gw;main;serve;route;db.Query 540
[t] gw;main;serve;read 400
";
        let b = parse_folded(before, "gw").expect("before");
        let a = parse_folded(after, "gw").expect("after");
        let text = compare_summary(&b, &a, ["02:40–03:20 UTC", "03:20–03:40 UTC"], &subject());
        let grew = text
            .lines()
            .skip_while(|l| !l.starts_with("Grew"))
            .nth(1)
            .expect("a line");
        assert!(
            grew.contains("render.jsonEncode  (with 2 callees alike: json.Marshal, mallocgc)"),
            "{text}"
        );
        assert!(grew.contains("+48 pp  6% → 53.9%"), "{text}");
        let shrank = text
            .lines()
            .skip_while(|l| !l.starts_with("Shrank"))
            .nth(1)
            .expect("line");
        assert!(shrank.contains("−28 pp  54% → 26.5%  db.Query"), "{text}");
        assert!(
            text.contains("Baseline: 02:40–03:20 UTC, 1 ms of CPU time."),
            "{text}"
        );
        assert!(
            text.contains("Comparison: 03:20–03:40 UTC, 2.04 ms of CPU time."),
            "{text}"
        );
    }

    #[test]
    fn an_empty_side_is_said_and_equal_profiles_change_nothing() {
        let p = parse_folded("main;work 10\n", "app").expect("folded");
        let empty = parse_folded("", "app").expect("empty");
        let text = compare_summary(&empty, &p, ["a", "b"], &subject());
        assert!(
            text.ends_with("The baseline has no samples: nothing to compare.\n"),
            "{text}"
        );
        let same = compare_summary(&p, &p, ["a", "b"], &subject());
        assert_eq!(
            same.matches("nothing changed by more than").count(),
            2,
            "{same}"
        );
    }
}
