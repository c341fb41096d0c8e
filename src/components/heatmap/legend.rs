//! The heatmap's legend: the colour ramp from no samples to the grid's largest count, with
//! round counts under it (`HeatScale::legend_ticks`), so a colour reads as a number.

use embers_model::view::heatmap::HeatScale;
use leptos::prelude::*;

/// Steps of the colour ramp.
const STOPS: u64 = 12;

/// The legend for counts up to `max` of `unit`.
#[component]
pub fn Legend(max: u64, unit: &'static str, #[prop(into)] dark: Signal<bool>) -> impl IntoView {
    let scale = Memo::new(move |_| HeatScale::new(max, dark.get()));
    // Steps as spans with a static background each: the page's CSP (style-src 'self') keeps
    // style attributes out, and a reactive shorthand came out empty; a plain value per step is
    // set as a property.
    let ramp = move || {
        scale.with(|s| {
            let top = s.max();
            (1..=STOPS)
                .map(|i| {
                    let color = s.color((top * i).div_ceil(STOPS).max(1)).css();
                    view! { <span class="heatmap-step" style:background-color=color></span> }
                })
                .collect_view()
        })
    };
    let empty = move || {
        let color = scale.with(|s| s.color(0).css());
        view! { <span class="heatmap-swatch" style:background-color=color title="no samples"></span> }
    };
    let ticks = move || {
        scale.with(|s| {
            let top = s.max() as f64;
            s.legend_ticks()
                .into_iter()
                .map(|t| {
                    let left = format!("{:.1}%", t as f64 / top * 100.0);
                    view! { <span class="heatmap-tick" style:left=left>{t}</span> }
                })
                .collect_view()
        })
    };
    view! {
        <div class="heatmap-legend" data-testid="heatmap-legend" aria-label=format!("Colour scale: 0 to {max} {unit} a cell")>
            {empty}
            <div class="heatmap-ramp-box">
                <div class="heatmap-ramp">{ramp}</div>
                <div class="heatmap-ticks">{ticks}</div>
            </div>
            <span class="heatmap-unit">{format!("{unit} a cell")}</span>
        </div>
    }
}
