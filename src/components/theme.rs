//! Light/dark theme (following the system unless chosen) and the colour-blind-safe palette.

use embers_model::view::color::{ColorBy, Palette};
use leptos::prelude::*;

/// How the theme is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThemeMode {
    /// Follow `prefers-color-scheme`.
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

/// The theme signals, shared through context.
#[derive(Clone, Copy)]
pub struct ThemeState {
    /// The user's choice.
    pub mode: RwSignal<ThemeMode>,
    /// Bar colours.
    pub palette: RwSignal<Palette>,
    /// What decides a bar's colour: its kind or its package.
    pub color_by: RwSignal<ColorBy>,
    system_dark: RwSignal<bool>,
}

const STORAGE_KEY: &str = "embers-theme";
const PALETTE_KEY: &str = "embers-palette";
const COLOR_BY_KEY: &str = "embers-color-by";

impl ThemeState {
    /// Whether the page is dark now.
    pub fn is_dark(&self) -> bool {
        match self.mode.get() {
            ThemeMode::System => self.system_dark.get(),
            ThemeMode::Light => false,
            ThemeMode::Dark => true,
        }
    }
}

/// The theme state from context, created (from saved preferences) on first use.
pub fn theme_state() -> ThemeState {
    if let Some(t) = use_context::<ThemeState>() {
        return t;
    }
    let mode = match stored(STORAGE_KEY).as_deref() {
        Some("light") => ThemeMode::Light,
        Some("dark") => ThemeMode::Dark,
        _ => ThemeMode::System,
    };
    let palette = if stored(PALETTE_KEY).as_deref() == Some("colorblind") {
        Palette::ColorBlind
    } else {
        Palette::Classic
    };
    let color_by = if stored(COLOR_BY_KEY).as_deref() == Some("package") {
        ColorBy::Package
    } else {
        ColorBy::Kind
    };
    let t = ThemeState {
        mode: RwSignal::new(mode),
        palette: RwSignal::new(palette),
        color_by: RwSignal::new(color_by),
        system_dark: RwSignal::new(system_prefers_dark()),
    };
    provide_context(t);
    follow_system_theme(t.system_dark);
    Effect::new(move |_| {
        let attr = match t.mode.get() {
            ThemeMode::System => None,
            ThemeMode::Light => Some("light"),
            ThemeMode::Dark => Some("dark"),
        };
        if let Some(root) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
        {
            let _ = match attr {
                Some(a) => root.set_attribute("data-theme", a),
                None => root.remove_attribute("data-theme"),
            };
        }
        store(STORAGE_KEY, attr.unwrap_or("system"));
        store(
            PALETTE_KEY,
            if t.palette.get() == Palette::ColorBlind {
                "colorblind"
            } else {
                "classic"
            },
        );
        store(
            COLOR_BY_KEY,
            if t.color_by.get() == ColorBy::Package {
                "package"
            } else {
                "kind"
            },
        );
    });
    t
}

/// Keeps `dark` equal to the system's preference as it changes (the page's CSS follows it by
/// itself; the canvas draws with the signal).
fn follow_system_theme(dark: RwSignal<bool>) {
    let Some(query) = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
    else {
        return;
    };
    let changed = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || {
        dark.set(system_prefers_dark());
    });
    let _ = query.add_event_listener_with_callback(
        "change",
        wasm_bindgen::JsCast::unchecked_ref(changed.as_ref()),
    );
    // The page's theme lives as long as the page.
    changed.forget();
}

fn system_prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

fn stored(key: &str) -> Option<String> {
    storage().and_then(|s| s.get_item(key).ok().flatten())
}

fn store(key: &str, value: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(key, value);
    }
}

/// Theme and palette switches for the toolbar.
#[component]
pub fn ThemeSwitch() -> impl IntoView {
    let t = theme_state();
    let label = move || match t.mode.get() {
        ThemeMode::System => "Auto",
        ThemeMode::Light => "Light",
        ThemeMode::Dark => "Dark",
    };
    let next = move |_| {
        t.mode.update(|m| {
            *m = match m {
                ThemeMode::System => ThemeMode::Light,
                ThemeMode::Light => ThemeMode::Dark,
                ThemeMode::Dark => ThemeMode::System,
            }
        })
    };
    view! {
        <button type="button" data-testid="theme-toggle" title="Theme: follow the system, light or dark" on:click=next>
            {label}
        </button>
        <button type="button" data-testid="palette-toggle" title="Colour-blind-safe palette"
            aria-pressed=move || (t.palette.get() == Palette::ColorBlind).to_string()
            class:active=move || t.palette.get() == Palette::ColorBlind
            on:click=move |_| t.palette.update(|p| *p = if *p == Palette::ColorBlind { Palette::Classic } else { Palette::ColorBlind })>
            "CB"
        </button>
    }
}
