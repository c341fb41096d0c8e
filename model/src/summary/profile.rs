//! One profile as text: its total, the frames every sample passes through, the hottest
//! functions by self value (where the time is spent) and by total (what it is spent under),
//! and the hottest paths (the stacks with the largest self values).

use std::fmt::Write as _;

use crate::tree::order::sort_by_dyn;
use crate::tree::profile::{NodeId, Profile};
use crate::tree::stats::{function_stats, FunctionStats};
use crate::view::format::format_count;

use super::text::{self, Values};
use super::Subject;

/// A function is "on every stack" (a wrapper such as the thread or `main`) from this share of
/// the total on; such frames are named once instead of filling the list by total.
const EVERYWHERE: f64 = 0.995;

/// The summary of `profile` (already transformed as the caller wants it).
pub fn profile_summary(profile: &Profile, subject: &Subject) -> String {
    let values = Values::of(&subject.event_type);
    let mut out = format!("{}\n", subject.title);
    let total = profile.root_total();
    if profile.is_empty() || total == 0 {
        out.push_str("No samples match: nothing to summarise.\n");
        return out;
    }
    let _ = writeln!(
        out,
        "Total: {} of {} ({} stack nodes, {} functions).",
        values.value(total),
        values.measure,
        format_count(profile.node_count() as u64),
        format_count(profile.function_count() as u64)
    );
    let stats = function_stats(profile);
    let rows = subject.rows();
    write_everywhere(&mut out, profile, &stats, total);
    write_by_self(&mut out, profile, &stats, total, rows, &values);
    write_by_total(&mut out, profile, &stats, total, rows, &values);
    write_paths(&mut out, profile, total, rows, &values);
    out
}

/// The functions on (almost) every stack, root excluded, in call order.
fn everywhere(profile: &Profile, stats: &[FunctionStats], total: u64) -> Vec<u32> {
    let depths = text::min_depths(profile);
    let root = profile.func(0);
    let mut funcs: Vec<u32> = stats
        .iter()
        .filter(|s| s.func != root && s.total as f64 >= total as f64 * EVERYWHERE)
        .map(|s| s.func)
        .collect();
    // The page's one shared sort (`tree::order`): a sort of its own costs the bundle KBs.
    sort_by_dyn(&mut funcs, &|&a, &b| {
        (depths[a as usize], profile.function_name(a))
            .cmp(&(depths[b as usize], profile.function_name(b)))
    });
    funcs
}

fn write_everywhere(out: &mut String, profile: &Profile, stats: &[FunctionStats], total: u64) {
    let funcs = everywhere(profile, stats, total);
    if funcs.is_empty() {
        return;
    }
    let names: Vec<String> = funcs
        .iter()
        .take(super::MAX_PATH_FRAMES)
        .map(|&f| text::name(profile.function_name(f)))
        .collect();
    let more = funcs.len().saturating_sub(names.len());
    let _ = writeln!(
        out,
        "On every stack: {}{}.",
        names.join(" > "),
        if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        }
    );
}

/// `stats` with a non-zero `key`, largest first, ties by name.
fn ranked<'a>(
    profile: &Profile,
    stats: impl Iterator<Item = &'a FunctionStats>,
    key: impl Fn(&FunctionStats) -> u64,
) -> Vec<&'a FunctionStats> {
    let mut rows: Vec<&FunctionStats> = stats.filter(|s| key(s) > 0).collect();
    sort_by_dyn(&mut rows, &|a, b| {
        key(b).cmp(&key(a)).then_with(|| {
            profile
                .function_name(a.func)
                .cmp(profile.function_name(b.func))
        })
    });
    rows
}

fn write_by_self(
    out: &mut String,
    profile: &Profile,
    stats: &[FunctionStats],
    total: u64,
    rows: usize,
    values: &Values,
) {
    let _ = writeln!(
        out,
        "\nHottest functions by self {} (where it is spent):",
        values.measure
    );
    let listed = ranked(profile, stats.iter(), |s| s.self_value);
    let lines = listed
        .iter()
        .map(|s| (s.self_value, text::name(profile.function_name(s.func))));
    write_rows(out, lines.take(rows), total, values);
}

fn write_by_total(
    out: &mut String,
    profile: &Profile,
    stats: &[FunctionStats],
    total: u64,
    rows: usize,
    values: &Values,
) {
    let skip = everywhere(profile, stats, total);
    let root = profile.func(0);
    let candidates = stats
        .iter()
        .filter(|s| s.func != root && !skip.contains(&s.func));
    let listed = ranked(profile, candidates, |s| s.total);
    if listed.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nHottest functions by total {} (with their callees):",
        values.measure
    );
    let lines = listed
        .iter()
        .map(|s| (s.total, text::name(profile.function_name(s.func))));
    write_rows(out, lines.take(rows), total, values);
}

fn write_paths(out: &mut String, profile: &Profile, total: u64, rows: usize, values: &Values) {
    let mut nodes: Vec<NodeId> = profile
        .nodes()
        .filter(|&n| n != 0 && profile.self_value(n) > 0)
        .collect();
    // Ties by preorder position, which follows the names (children are sorted).
    sort_by_dyn(&mut nodes, &|&a, &b| {
        profile
            .self_value(b)
            .cmp(&profile.self_value(a))
            .then(a.cmp(&b))
    });
    let _ = writeln!(
        out,
        "\nHottest paths (self {} of the last frame):",
        values.measure
    );
    let lines = nodes
        .iter()
        .map(|&n| (profile.self_value(n), text::path(profile, n)));
    write_rows(out, lines.take(rows), total, values);
}

/// Numbered rows `share  value  what`.
fn write_rows(
    out: &mut String,
    rows: impl Iterator<Item = (u64, String)>,
    total: u64,
    values: &Values,
) {
    for (i, (value, what)) in rows.enumerate() {
        let _ = writeln!(
            out,
            "{:>3}. {}  {:>10}  {what}",
            i + 1,
            text::share(value, total),
            values.value(value)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::folded::parse_folded;

    fn subject(rows: usize) -> Subject {
        Subject {
            title: "web, on-cpu, 2023-11-14 22:13:20–23:13:20 UTC".into(),
            event_type: "on-cpu".into(),
            rows,
        }
    }

    const FOLDED: &str = "\
[t] web;main;serve;render;json.Marshal;mallocgc 600000
[t] web;main;serve;render;template.Execute 250000
[t] web;main;serve;read;[k] tcp_recvmsg 100000
[t] web;main;gc;mallocgc 50000
";

    #[test]
    fn names_the_hottest_functions_and_paths_with_shares_and_units() {
        let profile = parse_folded(FOLDED, "web").expect("folded");
        let text = profile_summary(&profile, &subject(3));
        let expected = "\
web, on-cpu, 2023-11-14 22:13:20–23:13:20 UTC
Total: 1 s of CPU time (12 stack nodes, 11 functions).
On every stack: [t] web > main.

Hottest functions by self CPU time (where it is spent):
  1.    65%      650 ms  mallocgc
  2.    25%      250 ms  template.Execute
  3.    10%      100 ms  [k] tcp_recvmsg

Hottest functions by total CPU time (with their callees):
  1.    95%      950 ms  serve
  2.    85%      850 ms  render
  3.    65%      650 ms  mallocgc

Hottest paths (self CPU time of the last frame):
  1.    60%      600 ms  [t] web > main > serve > render > json.Marshal > mallocgc
  2.    25%      250 ms  [t] web > main > serve > render > template.Execute
  3.    10%      100 ms  [t] web > main > serve > read > [k] tcp_recvmsg
";
        assert_eq!(text, expected);
    }

    #[test]
    fn an_empty_profile_says_so_and_lists_are_bounded() {
        let empty = parse_folded("", "web").expect("folded");
        assert!(profile_summary(&empty, &subject(10))
            .ends_with("No samples match: nothing to summarise.\n"));
        let many: String = (0..200)
            .map(|i| format!("main;f{i:03} {}\n", 1000 + i))
            .collect();
        let profile = parse_folded(&many, "app").expect("folded");
        let text = profile_summary(&profile, &subject(10_000));
        let listed = text
            .lines()
            .filter(|l| l.contains(". ") && l.contains('%'))
            .count();
        assert_eq!(listed, 3 * super::super::MAX_ROWS, "{text}");
        assert!(text.len() < 16_000, "{} bytes", text.len());
    }
}
