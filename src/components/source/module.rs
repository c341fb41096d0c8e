//! The Source panel module's side (`src/bin/source_view.rs` mounts [`render`]): the panel for
//! the page's input, its events sent to the page as JSON.

use leptos::prelude::*;

use super::interface::SourceInput;
use super::SourcePanel;
use crate::on_demand::guest::Emit;

/// The panel for `input`, its events sent through `emit`.
pub fn render(input: ReadSignal<SourceInput>, emit: Emit) -> impl IntoView {
    view! { <SourcePanel input=input on_event=emit.callback() /> }
}
