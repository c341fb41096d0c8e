//! Pure painting: laid-out bars → a [`DrawList`] of rectangles, labels and outlines, in CSS px.
//!
//! Every decision about how a frame looks is made here — its fill, its opacity (dimmed
//! ancestors of the zoom, non-matches of a search), the label text and where it is cut, the gap
//! between neighbours, which frames get outlines — so it is tested natively with snapshots
//! (`tests/paint.rs`). The viewer's canvas only replays the list; hit-testing uses the same bars.

pub use crate::view::draw_list::{DrawList, Fill, Labels, Mark, Outline, Rect};

use crate::tree::diff::wall::WallValues;
use crate::tree::diff::DiffValues;
use crate::tree::profile::{NodeId, Profile};
use crate::tree::search::FrameMatch;
use crate::view::color::{diff_color, self_heat, wall_color, Palette};
use crate::view::format::{format_change, format_percent};
use crate::view::layout::Bar;
use crate::view::names::shorten;

/// Horizontal padding inside a bar before its label, CSS px.
pub const LABEL_PAD_CSS: f64 = 4.0;
/// Bars at least this wide get a 1 px gap on their right, so neighbours stay distinct.
pub const GAP_MIN_WIDTH_CSS: f64 = 3.0;
/// Opacity of the dimmed ancestors of a zoomed frame.
pub const ANCESTOR_ALPHA: f64 = 0.45;
/// Opacity of frames that do not match an active search.
pub const NON_MATCH_ALPHA: f64 = 0.35;
/// Width of the outline around the selected function's frames and the keyboard focus, CSS px.
pub const MARK_WIDTH_CSS: f64 = 2.0;
/// Width of the outline around the hovered bar, CSS px.
pub const HOVER_WIDTH_CSS: f64 = 1.5;

/// Which value labels, tooltips and shading lead with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Time through a frame (its width).
    #[default]
    Total,
    /// Time in the frame itself; bars are shaded by it so hot leaves stand out.
    Self_,
}

impl Metric {
    /// The other metric.
    pub fn toggled(self) -> Metric {
        match self {
            Metric::Total => Metric::Self_,
            Metric::Self_ => Metric::Total,
        }
    }

    /// Lower-case name for attributes and URLs.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Total => "total",
            Metric::Self_ => "self",
        }
    }
}

/// What is drawn on top of the bars: search matches, selection, table hover, keyboard focus.
#[derive(Clone, Copy, Debug, Default)]
pub struct Marks<'a> {
    /// Active search over this profile (non-matching frames are dimmed).
    pub search: Option<&'a dyn FrameMatch>,
    /// Selected function id (all its frames outlined).
    pub selected: Option<u32>,
    /// Function id hovered in the table (all its frames outlined).
    pub highlighted: Option<u32>,
    /// Frame with keyboard focus.
    pub focused: Option<NodeId>,
    /// The bar under the pointer.
    pub hovered: Option<Bar>,
}

/// Everything [`paint`] needs besides the bars.
#[derive(Clone, Copy, Debug)]
pub struct PaintInput<'a> {
    /// The profile the bars were laid out from.
    pub profile: &'a Profile,
    /// Height of a row (as laid out), CSS px.
    pub row_height_css: f64,
    /// Which metric labels and shading lead with.
    pub metric: Metric,
    /// Width of one label character, CSS px (the label font is monospace).
    pub char_width_css: f64,
    /// Search, selection, focus and hover.
    pub marks: Marks<'a>,
    /// When the profile is a diff: colour by change instead of by kind.
    pub diff: Option<DiffPaint<'a>>,
    /// When the profile is a wall-clock view: each bar split into running and waiting.
    pub wall: Option<WallPaint<'a>>,
}

/// How a wall-clock view is coloured: each frame's bar is split, its running part (on-CPU) on
/// the left in warm colours, its waiting part (off-CPU) on the right in cool ones.
#[derive(Clone, Copy, Debug)]
pub struct WallPaint<'a> {
    /// Running and waiting per node of the profile.
    pub values: &'a WallValues,
    /// Which colours.
    pub palette: Palette,
}

/// How a diff is coloured.
#[derive(Clone, Copy, Debug)]
pub struct DiffPaint<'a> {
    /// The sides of the diff the profile is (same node ids).
    pub diff: &'a DiffValues,
    /// The change that gets the full colour (the legend's ends), > 0.
    pub scale: f64,
    /// Which diverging colours.
    pub palette: Palette,
}

/// The change that gets a diff's full colour: its largest change, rounded up to 1, 2 or 5 times
/// a power of ten (so the legend reads `±20 pp`, not `±17.3 pp`).
pub fn color_scale(diff: &DiffValues) -> f64 {
    let max = diff.max_change();
    let mut step = 0.001;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if step * m >= max - 1e-12 {
                return step * m;
            }
        }
        step *= 10.0;
        if step > 10.0 {
            return max;
        }
    }
}

/// Paints `bars` into `out` (cleared first).
pub fn paint(bars: &[Bar], input: &PaintInput<'_>, out: &mut DrawList) {
    out.clear();
    let profile = input.profile;
    let max_self = bars
        .iter()
        .filter(|b| b.is_frame())
        .map(|b| profile.self_value(b.node))
        .max()
        .unwrap_or(0)
        .max(1);
    let row_h = input.row_height_css;
    for bar in bars {
        let alpha = bar_alpha(bar, input);
        let w = if bar.width_css >= GAP_MIN_WIDTH_CSS {
            bar.width_css - 1.0
        } else {
            bar.width_css
        };
        let rect = Rect {
            x: bar.x_css,
            y: bar.y_css,
            w,
            h: row_h - 1.0,
            fill: bar_fill(bar, input, max_self),
            alpha,
        };
        match &input.wall {
            Some(wall) if bar.is_frame() => split_wall(rect, bar.node, input, wall, &mut out.rects),
            _ => out.rects.push(rect),
        }
        if bar.is_frame() {
            if let Some(text) = label_for(bar, input, w) {
                out.labels.push(
                    &text,
                    bar.x_css + LABEL_PAD_CSS,
                    bar.y_css + row_h / 2.0,
                    alpha,
                );
            }
        }
    }
    outline_marks(bars, input, &mut out.outlines);
}

/// A wall-clock bar as its running part and its waiting part (one rectangle when a part would
/// be under half a pixel). Self mode splits by self time where the frame has some.
fn split_wall(
    rect: Rect,
    node: NodeId,
    input: &PaintInput<'_>,
    wall: &WallPaint<'_>,
    out: &mut Vec<Rect>,
) {
    let own = input.metric == Metric::Self_ && input.profile.self_value(node) > 0;
    let share = wall.values.running_share(node, own);
    let name = input.profile.name(node);
    let color = |running| Fill::Rgb(wall_color(running, name, wall.palette));
    let running_w = rect.w * share;
    if running_w >= 0.5 {
        out.push(Rect {
            w: if rect.w - running_w < 0.5 {
                rect.w
            } else {
                running_w
            },
            fill: color(true),
            ..rect
        });
    }
    if rect.w - running_w >= 0.5 {
        let x = if running_w >= 0.5 {
            rect.x + running_w
        } else {
            rect.x
        };
        out.push(Rect {
            x,
            w: rect.x + rect.w - x,
            fill: color(false),
            ..rect
        });
    }
}

fn bar_alpha(bar: &Bar, input: &PaintInput<'_>) -> f64 {
    let mut alpha = if bar.is_ancestor { ANCESTOR_ALPHA } else { 1.0 };
    let matches = |s: &dyn FrameMatch| bar.is_frame() && s.is_match(input.profile, bar.node);
    if input.marks.search.is_some_and(|s| !matches(s)) {
        alpha *= NON_MATCH_ALPHA;
    }
    alpha
}

fn bar_fill(bar: &Bar, input: &PaintInput<'_>, max_self: u64) -> Fill {
    if !bar.is_frame() {
        return Fill::Merged;
    }
    if let Some(d) = &input.diff {
        let change = match input.metric {
            Metric::Total => d.diff.change(bar.node),
            Metric::Self_ => d.diff.self_change(bar.node),
        };
        return Fill::Rgb(diff_color(change / d.scale, d.palette));
    }
    match input.metric {
        Metric::Total if bar.node == 0 => Fill::Root,
        Metric::Total => Fill::Function(input.profile.func(bar.node)),
        Metric::Self_ => {
            let share = input.profile.self_value(bar.node) as f64 / max_self as f64;
            Fill::Rgb(self_heat(share))
        }
    }
}

/// The label of a diff's bar: the name, then how its share changed (or that it is new/gone).
pub fn diff_label_text(
    profile: &Profile,
    diff: &DiffValues,
    node: NodeId,
    metric: Metric,
) -> String {
    let name = profile.name(node);
    if diff.is_new(node) {
        return format!("{name} (new)");
    }
    if diff.is_gone(node) {
        return format!("{name} (gone)");
    }
    let change = match metric {
        Metric::Total => diff.change(node),
        Metric::Self_ => diff.self_change(node),
    };
    format!("{name} ({})", format_change(change))
}

/// The label a bar shows: the name, then the leading metric's share of the root.
pub fn label_text(profile: &Profile, node: NodeId, metric: Metric) -> String {
    let value = match metric {
        Metric::Total => profile.total(node),
        Metric::Self_ => profile.self_value(node),
    };
    let share = format_percent(value, profile.root_total());
    match metric {
        Metric::Total => format!("{} ({share})", profile.name(node)),
        Metric::Self_ => format!("{} (self {share})", profile.name(node)),
    }
}

/// The text that fits a bar drawn `width` CSS px wide: the full label, else the bare name
/// shortened (a cut-off percentage says nothing; the function's own name goes last, see
/// [`shorten`]), else nothing.
fn label_for(bar: &Bar, input: &PaintInput<'_>, width: f64) -> Option<String> {
    let room = width - 2.0 * LABEL_PAD_CSS;
    if room < input.char_width_css * 3.0 {
        return None;
    }
    let max_chars = (room / input.char_width_css).floor() as usize;
    let full = match &input.diff {
        Some(d) => diff_label_text(input.profile, d.diff, bar.node, input.metric),
        None => label_text(input.profile, bar.node, input.metric),
    };
    if full.chars().count() <= max_chars {
        return Some(full);
    }
    shorten(input.profile.name(bar.node), max_chars).map(|t| t.into_owned())
}

/// The outline of `width` around `bar` in rows of `row_h`, drawn inside the bar (the flame
/// graph and the stack chart mark frames alike).
pub fn outline_around(bar: &Bar, row_h: f64, width: f64, mark: Mark) -> Outline {
    Outline {
        x: bar.x_css + width / 2.0,
        y: bar.y_css + width / 2.0,
        w: (bar.width_css - width).max(1.0),
        h: row_h - 1.0 - width,
        line_width: width,
        mark,
    }
}

/// Outlines: the selected/highlighted function's frames, the keyboard focus, the hover.
fn outline_marks(bars: &[Bar], input: &PaintInput<'_>, out: &mut Vec<Outline>) {
    let marks = &input.marks;
    let profile = input.profile;
    let row_h = input.row_height_css;
    let outline = |bar: &Bar, width: f64, mark: Mark| outline_around(bar, row_h, width, mark);
    let of = |f: Option<u32>, bar: &Bar| {
        bar.is_frame() && f.is_some_and(|f| profile.func(bar.node) == f)
    };
    for bar in bars {
        if of(marks.selected, bar) || of(marks.highlighted, bar) {
            out.push(outline(bar, MARK_WIDTH_CSS, Mark::Selected));
        }
        if bar.is_frame() && marks.focused == Some(bar.node) {
            out.push(outline(bar, MARK_WIDTH_CSS, Mark::Focus));
        }
        let gone = |d: &DiffPaint<'_>| d.diff.is_gone(bar.node);
        if bar.is_frame() && input.diff.as_ref().is_some_and(gone) {
            out.push(outline(bar, HOVER_WIDTH_CSS, Mark::Gone));
        }
    }
    if let Some(h) = &marks.hovered {
        out.push(outline(h, HOVER_WIDTH_CSS, Mark::Hover));
    }
}

#[cfg(test)]
mod tests;
