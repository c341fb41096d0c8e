//! The stack chart's drawing and read-outs: its search over the chart's call tree, the draw
//! (the model's layout and paint, replayed by the flame graph's canvas with the same colours),
//! the tooltip of the hovered span and the window's text.

use std::cell::RefCell;
use std::rc::Rc;

use embers_model::tree::search::{
    parse_terms, search, substring_matcher, FrameMatch, SearchResult,
};
use embers_model::view::color::{ColorBy, Palette};
use embers_model::view::draw_list::DrawList;
use embers_model::view::layout::{Bar, Viewport};
use embers_model::view::stack_chart::layout::{format_offset, TimeViewport};
use embers_model::view::stack_chart::paint::{paint, ChartMarks};
use embers_model::view::stack_chart::StackChart;
use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

use crate::components::graph::canvas::{measure_char_width, prepare, replay, ColorCache, Theme};

/// The search over the chart's call tree, as the flame graph's search box has it (terms).
pub fn search_memo(
    chart: StoredValue<Rc<StackChart>, LocalStorage>,
    text: Signal<String>,
) -> Memo<Option<SearchResult>> {
    Memo::new(move |_| {
        let terms = parse_terms(&text.get());
        (!terms.is_empty())
            .then(|| chart.with_value(|c| search(c.profile(), substring_matcher(&terms))))
    })
}

/// What a draw keeps between frames: the draw list and the colours (made once per palette).
#[derive(Clone, Default)]
pub struct Painter {
    state: Rc<RefCell<PainterState>>,
}

#[derive(Default)]
struct PainterState {
    list: DrawList,
    colors: Option<ColorCache>,
    drawn: bool,
}

impl Painter {
    /// Paints `bars` of `chart` into `canvas` (its rows area, `vp` wide and high).
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &self,
        canvas: &HtmlCanvasElement,
        chart: &StackChart,
        bars: &[Bar],
        vp: &TimeViewport,
        found: Option<&SearchResult>,
        hovered: Option<Bar>,
        dark: bool,
        palette: Palette,
    ) {
        let mut s = self.state.borrow_mut();
        let s = &mut *s;
        let viewport = Viewport {
            width_css: vp.width_css,
            height_css: vp.height_css,
            scroll_top_css: 0.0,
        };
        let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
        let style = web_sys::HtmlElement::style(canvas);
        let _ = style.set_property("width", &format!("{}px", vp.width_css));
        let _ = style.set_property("height", &format!("{}px", vp.height_css));
        let Some(ctx) = prepare(canvas, &viewport, dpr, !s.drawn) else {
            return;
        };
        s.drawn = true;
        let marks = ChartMarks {
            search: found.map(|f| f as &dyn FrameMatch),
            selected: None,
            hovered,
        };
        paint(
            bars,
            chart.profile(),
            &marks,
            measure_char_width(&ctx),
            &mut s.list,
        );
        let stale = s.colors.as_ref().is_none_or(|c| c.scheme().0 != palette);
        if stale {
            s.colors = Some(ColorCache::new(chart.profile(), palette, ColorBy::Kind));
        }
        if let Some(colors) = &s.colors {
            replay(
                &ctx,
                &s.list,
                &viewport,
                chart.profile(),
                &Theme::new(dark),
                colors,
            );
        }
    }
}

/// `1.2 s of 40 s shown`: how much of the chart the window shows.
pub fn window_text((start, end): (f64, f64)) -> String {
    format!("{} shown", format_offset(end - start))
}

/// The tooltip of `bar` of thread `track` (hovered at `(x, y)` in the chart area `width`
/// wide, showing the window `(start, end)`): the frame's
/// name, how long its span lasts and when it starts after the chart's first sample.
pub fn tooltip(
    chart: StoredValue<Rc<StackChart>, LocalStorage>,
    track: usize,
    (start, end): (f64, f64),
    bar: Bar,
    x: f64,
    y: f64,
    width: f64,
) -> impl IntoView {
    let at_ms = start + x / width.max(1.0) * (end - start);
    let (name, detail) = chart.with_value(|c| {
        let p = c.profile();
        if !bar.is_frame() {
            return (
                format!("{} spans too short to draw", bar.merged),
                "Each is under a pixel at this zoom: zoom in (wheel or +) to see them.".to_owned(),
            );
        }
        let span = c.tracks().get(track).and_then(|t| {
            let spans = t.depths.get(bar.depth as usize)?;
            let i = spans.partition_point(|s| (s.end_ms as f64) <= at_ms);
            spans.get(i).filter(|s| s.node == bar.node)
        });
        let detail = span.map_or_else(String::new, |s| {
            format!(
                "{} · from {}",
                format_offset((s.end_ms - s.start_ms) as f64),
                format_offset((s.start_ms - c.start_ms()) as f64)
            )
        });
        (p.name(bar.node).to_owned(), detail)
    });
    let flip = x + 380.0 > width;
    let left = if flip { x - 14.0 } else { x + 14.0 };
    let shift = if flip { "translateX(-100%)" } else { "none" };
    view! {
        <div class="tooltip" data-testid="stack-chart-tooltip" role="tooltip"
            style:left=format!("{left}px") style:top=format!("{}px", y + 14.0) style:transform=shift>
            <div class="tip-name">{name}</div>
            <div class="tip-kind">{detail}</div>
        </div>
    }
}
