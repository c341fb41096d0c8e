//! The Source panel's decisions, web-free: a function's lines as heat bars in the order the
//! metric ranks them ([`line_bars`]), the code of one file with the heat in its gutter and the
//! line to scroll to ([`code_view`]), and the words for a frame without lines
//! ([`explain_no_lines`]). The viewer's panel only renders what these return.

use crate::contract::event::DEFAULT_LANGUAGE;
use crate::contract::explore::NoLines;
use crate::tree::lines::LineStat;
use crate::view::paint::Metric;

/// A file of at most this many lines is shown whole; a longer one around the function's lines.
pub const WHOLE_FILE_LINES: u32 = 1500;
/// Lines shown above the function's first line and below its last, in a long file.
pub const CONTEXT_LINES: u32 = 40;
/// Gutter heat steps above "none" (CSS classes `heat-1` … `heat-5`).
pub const HEAT_LEVELS: u8 = 5;

/// One line of the function, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct LineBar {
    /// The file as stored.
    pub file: String,
    /// Its last path segment (what the row shows; `file` is its tooltip).
    pub short_file: String,
    /// 1-based line.
    pub line: u32,
    /// Self value.
    pub self_value: u64,
    /// Total value.
    pub total_value: u64,
    /// Self as a share of the function's total, 0–1 (the bar's dark part).
    pub self_share: f64,
    /// Total as a share of the function's total, 0–1 (the bar's light part).
    pub total_share: f64,
}

/// `rows` as bars, hottest first by `metric` (ties by the other value, then file and line),
/// shares of `whole` (the function's total; the rows' largest total when 0).
pub fn line_bars(rows: &[LineStat], metric: Metric, whole: u64) -> Vec<LineBar> {
    let whole = match whole {
        0 => rows.iter().map(|r| r.total_value).max().unwrap_or(0),
        w => w,
    };
    let share = |v: u64| match whole {
        0 => 0.0,
        w => (v as f64 / w as f64).min(1.0),
    };
    let mut sorted: Vec<&LineStat> = rows.iter().collect();
    let key = |r: &LineStat| match metric {
        Metric::Total => (r.total_value, r.self_value),
        Metric::Self_ => (r.self_value, r.total_value),
    };
    sorted.sort_by(|a, b| {
        key(b)
            .cmp(&key(a))
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    sorted
        .into_iter()
        .map(|r| LineBar {
            file: r.file.clone(),
            short_file: short_file(&r.file).to_owned(),
            line: r.line,
            self_value: r.self_value,
            total_value: r.total_value,
            self_share: share(r.self_value),
            total_share: share(r.total_value),
        })
        .collect()
}

/// The last segment of a path (`/`- or `\`-separated), or the path when it has none.
pub fn short_file(file: &str) -> &str {
    file.rsplit(['/', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or(file)
}

/// One line of code with its heat.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeLine<'t> {
    /// 1-based line number.
    pub number: u32,
    /// The line's text (without its line break).
    pub text: &'t str,
    /// The line's bar, when the function ran there.
    pub heat: Option<Heat>,
}

/// A hot line's gutter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Heat {
    /// 1–[`HEAT_LEVELS`]: the line's total against the file's hottest line.
    pub level: u8,
    /// The line's share of the function's total (the gutter's label).
    pub total_share: f64,
    /// Its self share.
    pub self_share: f64,
}

/// The code of one file as the panel shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeView<'t> {
    /// The lines shown, in order (all of a short file; the function's region of a long one).
    pub lines: Vec<CodeLine<'t>>,
    /// The line to scroll to (the chosen line, else the file's hottest).
    pub target: Option<u32>,
    /// Lines in the whole file.
    pub line_count: u32,
}

/// `text` (the whole of `file`) with the heat of `bars` in its gutter, scrolled to `chosen`
/// when it is a line of this file, else to the file's hottest line by `bars`' order.
pub fn code_view<'t>(
    text: &'t str,
    file: &str,
    bars: &[LineBar],
    chosen: Option<u32>,
) -> CodeView<'t> {
    let all: Vec<&str> = text.lines().collect();
    let line_count = u32::try_from(all.len()).unwrap_or(u32::MAX);
    let here: Vec<&LineBar> = bars
        .iter()
        .filter(|b| b.file == file && b.line <= line_count)
        .collect();
    let hottest = here.iter().map(|b| b.total_value).max().unwrap_or(0);
    let target = chosen
        .filter(|l| (1..=line_count).contains(l))
        .or_else(|| here.first().map(|b| b.line));
    let (first, last) = shown_range(&here, line_count, target);
    let lines = (first..=last)
        .filter_map(|n| {
            let text = all.get(n as usize - 1)?;
            let heat = here.iter().find(|b| b.line == n).map(|b| Heat {
                level: heat_level(b.total_value, hottest),
                total_share: b.total_share,
                self_share: b.self_share,
            });
            Some(CodeLine {
                number: n,
                text,
                heat,
            })
        })
        .collect();
    CodeView {
        lines,
        target,
        line_count,
    }
}

/// The first and last line shown (1-based, inclusive; `(1, 0)` for an empty file).
fn shown_range(here: &[&LineBar], line_count: u32, target: Option<u32>) -> (u32, u32) {
    if line_count <= WHOLE_FILE_LINES {
        return (1, line_count);
    }
    let lo = here.iter().map(|b| b.line).min().or(target).unwrap_or(1);
    let hi = here.iter().map(|b| b.line).max().or(target).unwrap_or(1);
    let first = lo.saturating_sub(CONTEXT_LINES).max(1);
    let last = hi.saturating_add(CONTEXT_LINES).min(line_count);
    if last - first < WHOLE_FILE_LINES {
        return (first, last);
    }
    // A function spread over more lines than are shown: around the line scrolled to.
    let centre = target.unwrap_or(lo);
    let first = centre
        .saturating_sub(WHOLE_FILE_LINES / 2)
        .clamp(1, line_count - WHOLE_FILE_LINES + 1);
    (first, first + WHOLE_FILE_LINES - 1)
}

/// 1–[`HEAT_LEVELS`] for `value` against the hottest `max` (any value above 0 is at least 1).
pub fn heat_level(value: u64, max: u64) -> u8 {
    if max == 0 || value == 0 {
        return 1;
    }
    let level = (value as f64 / max as f64 * f64::from(HEAT_LEVELS)).ceil() as u8;
    level.clamp(1, HEAT_LEVELS)
}

/// Where a frame's missing lines were asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absence<'a> {
    /// The service's `function_lines` said why.
    Service(NoLines),
    /// An opened file without any line (the reader's words).
    File(&'a str),
    /// An opened file with lines, but none for this function.
    FunctionInFile,
    /// The service has no `function_lines` (a DeepFlow querier, an older Embers).
    NoEndpoint,
    /// A profile that is neither a service's answer nor a file with lines (a diff, a
    /// snapshot, folded text).
    NotAvailable,
}

/// Why a frame shows no lines, in words a user can act on; `language` is the profile's
/// (the producer: `eBPF` is our collector).
pub fn explain_no_lines(absence: Absence<'_>, language: &str) -> String {
    match absence {
        Absence::Service(NoLines::NoSamples) => {
            "No sample in this range and filter runs this function, so it has no lines here.".into()
        }
        Absence::Service(NoLines::NoLineInfo) if language == DEFAULT_LANGUAGE => {
            "No line information: the collector found no DWARF line table for this code. Build \
             the binary with -g (frame pointers are not needed), do not strip it, or install its \
             debug file under /usr/lib/debug/.build-id/. Kernel and JIT frames have no lines."
                .into()
        }
        Absence::Service(NoLines::NoLineInfo) => format!(
            "No line information: the {language} profiles of this process carry none. Its \
             producer wrote functions only (perf script without srcline, an SDK format without \
             lines), or the binary was stripped or built without -g."
        ),
        Absence::File(why) => why.to_owned(),
        Absence::FunctionInFile => {
            "The file has lines for other functions, but none for this one: its frames are \
             addresses without debug information, or the producer named the function only."
                .into()
        }
        Absence::NoEndpoint => "This service cannot answer source lines (it has no \
             /v1/profile/function_lines: a DeepFlow querier, or an older Embers)."
            .into(),
        Absence::NotAvailable => "Lines are shown for a service's profile or an opened pprof \
             file; this view (a comparison, a snapshot or folded text) has none."
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(file: &str, line: u32, self_value: u64, total_value: u64) -> LineStat {
        LineStat {
            file: file.into(),
            line,
            self_value,
            total_value,
        }
    }

    fn rows() -> Vec<LineStat> {
        vec![
            stat("/src/a/main.go", 25, 16, 16),
            stat("/src/a/main.go", 26, 34, 49),
            stat("/src/a/util.go", 7, 40, 40),
        ]
    }

    #[test]
    fn bars_rank_by_the_metric_as_shares_of_the_function() {
        let total = line_bars(&rows(), Metric::Total, 100);
        let order: Vec<u32> = total.iter().map(|b| b.line).collect();
        assert_eq!(order, [26, 7, 25]);
        assert_eq!(total[0].short_file, "main.go");
        assert!((total[0].total_share - 0.49).abs() < 1e-9);
        assert!((total[0].self_share - 0.34).abs() < 1e-9);
        let by_self: Vec<u32> = line_bars(&rows(), Metric::Self_, 100)
            .iter()
            .map(|b| b.line)
            .collect();
        assert_eq!(by_self, [7, 26, 25]);
        // Without the function's total, the hottest line fills the bar.
        assert_eq!(line_bars(&rows(), Metric::Total, 0)[0].total_share, 1.0);
        assert!(line_bars(&[], Metric::Total, 0).is_empty());
        assert_eq!(short_file("C:\\w\\x.c"), "x.c");
        assert_eq!(short_file("x.c"), "x.c");
    }

    #[test]
    fn code_has_heat_on_the_function_s_lines_and_scrolls_to_the_hottest() {
        let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let bars = line_bars(&rows(), Metric::Total, 100);
        let view = code_view(&text, "/src/a/main.go", &bars, None);
        assert_eq!(view.line_count, 30);
        assert_eq!(view.lines.len(), 30, "a short file is shown whole");
        assert_eq!(view.target, Some(26));
        let heat = |n: usize| view.lines[n - 1].heat.map(|h| h.level);
        assert_eq!(heat(26), Some(HEAT_LEVELS));
        assert_eq!(heat(25), Some(2));
        assert_eq!(heat(7), None, "util.go's line 7 is another file's");
        assert_eq!(view.lines[25].text, "line 26");
        // A chosen line wins; one outside the file does not.
        assert_eq!(
            code_view(&text, "/src/a/main.go", &bars, Some(3)).target,
            Some(3)
        );
        assert_eq!(
            code_view(&text, "/src/a/main.go", &bars, Some(99)).target,
            Some(26)
        );
    }

    #[test]
    fn a_long_file_shows_the_function_s_region() {
        let text: String = (1..=5000).map(|n| format!("{n}\n")).collect();
        let bars = line_bars(
            &[stat("f.c", 3000, 1, 2), stat("f.c", 3010, 1, 1)],
            Metric::Total,
            3,
        );
        let view = code_view(&text, "f.c", &bars, None);
        assert_eq!(
            view.lines.first().map(|l| l.number),
            Some(3000 - CONTEXT_LINES)
        );
        assert_eq!(
            view.lines.last().map(|l| l.number),
            Some(3010 + CONTEXT_LINES)
        );
        assert_eq!(view.target, Some(3000));
        let spread = line_bars(
            &[stat("f.c", 10, 1, 1), stat("f.c", 4900, 2, 2)],
            Metric::Total,
            3,
        );
        let view = code_view(&text, "f.c", &spread, None);
        assert_eq!(view.lines.len() as u32, WHOLE_FILE_LINES);
        assert!(
            view.lines.iter().any(|l| l.number == 4900),
            "around the hottest"
        );
        assert!(code_view("", "f.c", &spread, None).lines.is_empty());
    }

    #[test]
    fn missing_lines_are_explained_for_their_producer() {
        let ebpf = explain_no_lines(Absence::Service(NoLines::NoLineInfo), "eBPF");
        assert!(ebpf.contains("-g") && ebpf.contains("strip"), "{ebpf}");
        let go = explain_no_lines(Absence::Service(NoLines::NoLineInfo), "Golang");
        assert!(go.contains("Golang profiles"), "{go}");
        assert!(explain_no_lines(Absence::File("no Line.line"), "x").contains("Line.line"));
        for a in [
            Absence::Service(NoLines::NoSamples),
            Absence::FunctionInFile,
            Absence::NoEndpoint,
            Absence::NotAvailable,
        ] {
            assert!(explain_no_lines(a, "eBPF").len() > 40, "{a:?}");
        }
        assert_eq!(heat_level(0, 0), 1);
        assert_eq!(heat_level(1, 100), 1);
        assert_eq!(heat_level(100, 100), HEAT_LEVELS);
    }
}
