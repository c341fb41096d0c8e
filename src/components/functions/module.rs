//! The Functions module's side (`src/bin/functions_view.rs` mounts [`render`]): the lists
//! with their own copy of the tab, kept equal to the page's both ways — a change the page
//! sends (its tabs, Back/Forward) is taken in, a change made here (metric, filter, baseline)
//! is sent to the page as [`FunctionsEvent::Tab`], which writes it into the URL.

use embers_model::view::color::Palette;
use leptos::prelude::*;

use super::interface::{FunctionsEvent, FunctionsInput};
use super::FunctionsPanel;
use crate::on_demand::guest::Emit;

/// The lists for `input`, their events sent through `emit`.
pub fn render(input: ReadSignal<FunctionsInput>, emit: Emit) -> impl IntoView {
    let tab = RwSignal::new(input.with_untracked(|i| i.tab.clone()));
    Effect::new(move |_| {
        let from_page = input.with(|i| i.tab.clone());
        if tab.with_untracked(|t| *t != from_page) {
            tab.set(from_page);
        }
    });
    Effect::new(move |_| {
        let here = tab.get();
        if input.with_untracked(|i| i.tab != here) {
            emit.send(&FunctionsEvent::Tab { tab: here });
        }
    });
    // Memos: a new input that only echoes the tab asks the service nothing again.
    let query = Memo::new(move |_| input.with(|i| i.query.clone()));
    let language = Memo::new(move |_| input.with(|i| i.language.clone()));
    let palette = Memo::new(move |_| match input.with(|i| i.colorblind) {
        true => Palette::ColorBlind,
        false => Palette::Classic,
    });
    view! {
        <FunctionsPanel tab=tab query=query language=language palette=palette open=emit.callback() />
    }
}
