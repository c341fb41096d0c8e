//! A gate [`Report`] as words: plain text for a terminal or a CI log ([`text`]), and Markdown
//! for a pull-request comment ([`markdown`]). Function names and labels are untrusted text:
//! in Markdown every character that could start markup is escaped, so a name cannot turn into
//! a link, an image or a broken table.

use std::fmt::Write as _;

use super::{Metric, Report, Row, SideReport};
use crate::summary::text::Values;
use crate::view::format::{format_change, format_count, format_percent, ValueUnit};

/// The report as plain text.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Baseline: {}", side_line(&report.base, report));
    let _ = writeln!(out, "New:      {}", side_line(&report.new, report));
    let _ = writeln!(out, "{}", rule_sentence(report));
    for (metric, rows) in [
        (Metric::SelfTime, &report.self_time),
        (Metric::TotalTime, &report.total_time),
    ] {
        let _ = writeln!(
            out,
            "\nShare of {}, largest changes (baseline → new):",
            metric.words()
        );
        if rows.is_empty() {
            out.push_str("  nothing changed by 0.05 percentage points or more\n");
        }
        for (i, r) in rows.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:>3}. {:>8}  {:>6} → {:<6}  z {:>6.1}  {:<11}  {}",
                i + 1,
                change(r),
                percent(r.base_value, report.base.value),
                percent(r.new_value, report.new.value),
                r.z,
                if r.significant {
                    "significant"
                } else {
                    "noise"
                },
                r.function
            );
        }
    }
    out.push('\n');
    out.push_str(&verdict_text(report));
    out
}

fn side_line(side: &SideReport, report: &Report) -> String {
    let values = Values::of(&report.event_type);
    let counts = format!("{} samples", format_count(side.samples));
    if ValueUnit::for_event_type(&report.event_type) == ValueUnit::Samples {
        return format!("{}, {counts}", side.label);
    }
    let samples = if side.samples_counted {
        counts
    } else {
        "values taken as sample counts".to_owned()
    };
    format!(
        "{}, {} of {} ({samples})",
        side.label,
        values.value(side.value),
        values.measure
    )
}

fn rule_sentence(report: &Report) -> String {
    format!(
        "Shares are of each side's own total. A change is significant when |z| ≥ {} and the \
         function has at least {} samples on one side.",
        report.min_z, report.min_samples
    )
}

fn percent(part: u64, whole: u64) -> String {
    format_percent(part, whole)
}

fn change(r: &Row) -> String {
    format_change(r.change_points / 100.0)
}

fn limits(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(l) = report.max_growth {
        out.push(format!("self time by more than {l} pp"));
    }
    if let Some(l) = report.max_total_growth {
        out.push(format!("total time by more than {l} pp"));
    }
    out
}

/// `PASS`/`FAIL` and why, the last lines of the text.
fn verdict_text(report: &Report) -> String {
    let limits = limits(report);
    if limits.is_empty() {
        return "No limit given (--max-growth, --max-total-growth): nothing checked.\n".into();
    }
    if report.passed() {
        return format!(
            "PASS: no function's share grew significantly: of {}.\n",
            limits.join(", nor of ")
        );
    }
    let mut out = format!(
        "FAIL: {} past the limit:\n",
        count_words(report.breaches.len())
    );
    for b in &report.breaches {
        let _ = writeln!(
            out,
            "  {}: {} {} ({} → {}), limit {} pp, z {:.1}",
            b.row.function,
            b.metric.words(),
            change(&b.row),
            percent(b.row.base_value, report.base.value),
            percent(b.row.new_value, report.new.value),
            b.limit_points,
            b.row.z
        );
    }
    out
}

fn count_words(n: usize) -> String {
    if n == 1 {
        "1 function grew".into()
    } else {
        format!("{n} functions grew")
    }
}

/// The report as Markdown, for a pull-request comment.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let limits = limits(report);
    let heading = match (limits.is_empty(), report.passed()) {
        (true, _) => "Profile diff".to_owned(),
        (false, true) => "Profile diff: passed".to_owned(),
        (false, false) => format!(
            "Profile diff: failed, {} past the limit",
            count_words(report.breaches.len())
        ),
    };
    let _ = writeln!(out, "### {heading}\n");
    if !report.breaches.is_empty() {
        let rows: Vec<(Option<Metric>, &Row)> = report
            .breaches
            .iter()
            .map(|b| (Some(b.metric), &b.row))
            .collect();
        table(&mut out, report, &rows);
        out.push('\n');
    } else if !limits.is_empty() {
        let _ = writeln!(
            out,
            "No function's share grew significantly: of {}.\n",
            limits.join(", nor of ")
        );
    }
    for (metric, rows) in [
        (Metric::SelfTime, &report.self_time),
        (Metric::TotalTime, &report.total_time),
    ] {
        let _ = writeln!(
            out,
            "<details><summary>Share of {}, largest changes</summary>\n",
            metric.words()
        );
        let rows: Vec<(Option<Metric>, &Row)> = rows.iter().map(|r| (None, r)).collect();
        table(&mut out, report, &rows);
        out.push_str("\n</details>\n\n");
    }
    let _ = writeln!(
        out,
        "Baseline: {}. New: {}. {}",
        escape(&side_line(&report.base, report)),
        escape(&side_line(&report.new, report)),
        escape(&rule_sentence(report))
    );
    if let Some(link) = &report.link {
        let _ = writeln!(out, "\n[Open the differential view]({})", link_target(link));
    }
    out
}

/// A table of rows, with a column naming each row's share when they have one (the breaches).
fn table(out: &mut String, report: &Report, rows: &[(Option<Metric>, &Row)]) {
    let with_metric = rows.iter().any(|(m, _)| m.is_some());
    if rows.is_empty() {
        out.push_str("Nothing changed by 0.05 percentage points or more.\n");
        return;
    }
    let metric_head = if with_metric { " Share of |" } else { "" };
    let metric_rule = if with_metric { "---|" } else { "" };
    let _ = writeln!(
        out,
        "| Function |{metric_head} Baseline | New | Change | z | Significant |"
    );
    let _ = writeln!(out, "|---|{metric_rule}---:|---:|---:|---:|---|");
    for (m, r) in rows {
        let metric = m.map_or(String::new(), |m| format!(" {} |", m.words()));
        let _ = writeln!(
            out,
            "| {} |{metric} {} | {} | {} | {:.1} | {} |",
            escape(&r.function),
            percent(r.base_value, report.base.value),
            percent(r.new_value, report.new.value),
            change(r),
            r.z,
            if r.significant { "yes" } else { "no" }
        );
    }
}

/// `text` with Markdown's punctuation escaped and HTML's specials as entities, control
/// characters as spaces, so untrusted names stay plain text inside a table cell.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // Brackets escaped, a parenthesis cannot make a link: `(*T).Run` stays readable.
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A link target that cannot close the link early: spaces, parentheses and angle brackets
/// percent-encoded.
fn link_target(link: &str) -> String {
    let mut out = String::with_capacity(link.len());
    for c in link.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_become_markup() {
        assert_eq!(
            escape("a|b <img> [x](y) (*T).Run_1\n"),
            "a\\|b &lt;img&gt; \\[x\\](y) (\\*T).Run\\_1 "
        );
        assert_eq!(
            link_target("http://h/?a=1 (x)<y>"),
            "http://h/?a=1%20%28x%29%3Cy%3E"
        );
    }
}
