//! The stack chart's painting: laid-out bars → the flame graph's [`DrawList`], coloured by
//! function as the flame graph colours them ([`Fill::Function`] of the chart's call tree),
//! labelled with the function's name (shortened as the flame graph shortens it; a span has no
//! share of the whole to print), dimmed where a search does not match, the hovered bar and the
//! selected function outlined.

use crate::tree::profile::Profile;
use crate::tree::search::FrameMatch;
use crate::view::draw_list::{DrawList, Fill, Mark, Outline, Rect};
use crate::view::layout::Bar;
use crate::view::names::shorten;
use crate::view::paint::{
    outline_around, GAP_MIN_WIDTH_CSS, HOVER_WIDTH_CSS, LABEL_PAD_CSS, MARK_WIDTH_CSS,
    NON_MATCH_ALPHA,
};
use crate::view::stack_chart::layout::ROW_HEIGHT_CSS;

/// What is drawn on top of the bars.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChartMarks<'a> {
    /// An active search (non-matching frames are dimmed).
    pub search: Option<&'a dyn FrameMatch>,
    /// A selected function id (its spans outlined).
    pub selected: Option<u32>,
    /// The bar under the pointer.
    pub hovered: Option<Bar>,
}

/// Paints `bars` of `profile` into `out` (cleared first); labels are cut for characters
/// `char_width_css` wide.
pub fn paint(
    bars: &[Bar],
    profile: &Profile,
    marks: &ChartMarks<'_>,
    char_width_css: f64,
    out: &mut DrawList,
) {
    out.clear();
    let h = ROW_HEIGHT_CSS - 1.0;
    for bar in bars {
        let frame = bar.is_frame();
        let dim = marks
            .search
            .is_some_and(|s| !(frame && s.is_match(profile, bar.node)));
        let alpha = if dim { NON_MATCH_ALPHA } else { 1.0 };
        let w = if bar.width_css >= GAP_MIN_WIDTH_CSS {
            bar.width_css - 1.0
        } else {
            bar.width_css
        };
        let fill = if frame {
            Fill::Function(profile.func(bar.node))
        } else {
            Fill::Merged
        };
        out.rects.push(Rect {
            x: bar.x_css,
            y: bar.y_css,
            w,
            h,
            fill,
            alpha,
        });
        let room = w - 2.0 * LABEL_PAD_CSS;
        if frame && room >= char_width_css * 3.0 {
            let max_chars = (room / char_width_css).floor() as usize;
            if let Some(text) = shorten(profile.name(bar.node), max_chars) {
                let x = bar.x_css.max(0.0) + LABEL_PAD_CSS;
                out.labels
                    .push(&text, x, bar.y_css + ROW_HEIGHT_CSS / 2.0, alpha);
            }
        }
        let selected = frame && marks.selected == Some(profile.func(bar.node));
        if selected {
            out.outlines
                .push(outline(bar, MARK_WIDTH_CSS, Mark::Selected));
        }
    }
    if let Some(b) = &marks.hovered {
        out.outlines.push(outline(b, HOVER_WIDTH_CSS, Mark::Hover));
    }
}

fn outline(bar: &Bar, width: f64, mark: Mark) -> Outline {
    outline_around(bar, ROW_HEIGHT_CSS, width, mark)
}
