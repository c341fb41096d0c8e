//! The wall-clock view's bar: what the graph adds up (a process's on-CPU and off-CPU time of
//! one range), the two colours' legend with each side's total, and the way back to one profile.
//! The view itself is a baseline of the navigator (`BaselineSpec::wall`), so its two queries
//! run, cancel and reach the URL (`wall=1`) like a comparison's.

use embers_model::view::color::wall_key_color;
use embers_model::view::format::{format_percent, format_value};
use leptos::prelude::*;

use crate::components::theme::theme_state;
use crate::session::navigator::Navigator;
use crate::state::view_state::ViewState;

/// The bar above a wall-clock graph.
#[component]
pub fn WallBar(nav: Navigator, view: ViewState) -> impl IntoView {
    let theme = theme_state();
    let totals = move || {
        view.shown.with(|s| {
            let l = s.as_ref()?;
            let w = l.wall.as_deref()?;
            let name = if l.profile.is_empty() {
                String::new()
            } else {
                l.profile.name(0).to_owned()
            };
            Some((name, w.running.root_total(), w.waiting.root_total(), l.unit))
        })
    };
    move || {
        let (name, running, waiting, unit) = totals()?;
        let palette = theme.palette.get();
        let all = running + waiting;
        let key = |is_running: bool, label: &'static str, value: u64, testid: &'static str| {
            view! {
                <span class="wall-key" data-testid=testid>
                    <span class="swatch" style:background=wall_key_color(is_running, palette).css()></span>
                    {format!("{label} {} ({})", format_value(value, unit), format_percent(value, all))}
                </span>
            }
        };
        Some(view! {
            <div class="diff-bar wall-bar" data-testid="wall-bar">
                <span class="diff-what">"Wall clock of " <strong>{name}</strong> ": on-CPU + off-CPU, each bar split"</span>
                {key(true, "running", running, "wall-running")}
                {key(false, "waiting", waiting, "wall-waiting")}
                <button type="button" class="ghost small" data-testid="stop-wall"
                    on:click=move |_| nav.stop_comparing()>"One profile"</button>
                {(running == 0 || waiting == 0).then(|| view! {
                    <span class="diff-empty" role="status">
                        {if running == 0 { "No on-CPU samples in this range." } else { "No off-CPU samples in this range." }}
                    </span>
                })}
            </div>
        })
    }
}
