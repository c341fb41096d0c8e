//! The heatmap's legend: the colour ramp from no samples to the grid's largest count, with
//! round counts under it (`HeatScale::legend_ticks`), so a colour reads as a number.

use embers_model::view::heatmap::HeatScale;
use leptos::prelude::*;

/// Colours sampled along the ramp for the CSS gradient.
const STOPS: u64 = 12;

/// The legend for counts up to `max` of `unit`.
#[component]
pub fn Legend(max: u64, unit: &'static str, #[prop(into)] dark: Signal<bool>) -> impl IntoView {
    let scale = Memo::new(move |_| HeatScale::new(max, dark.get()));
    let gradient = move || {
        scale.with(|s| {
            let top = s.max();
            let stops: Vec<String> = (1..=STOPS)
                .map(|i| {
                    let count = (top * i).div_ceil(STOPS).max(1);
                    format!(
                        "{} {:.1}%",
                        s.color(count).css(),
                        (i - 1) as f64 * 100.0 / (STOPS - 1) as f64
                    )
                })
                .collect();
            format!(
                "background: linear-gradient(to right, {})",
                stops.join(", ")
            )
        })
    };
    let empty = move || scale.with(|s| s.color(0).css());
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
            <span class="heatmap-swatch" style:background=empty title="no samples"></span>
            <div class="heatmap-ramp-box">
                <div class="heatmap-ramp" style:background=gradient></div>
                <div class="heatmap-ticks">{ticks}</div>
            </div>
            <span class="heatmap-unit">{format!("{unit} a cell")}</span>
        </div>
    }
}
