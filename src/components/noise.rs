//! Noise control: the menu of transforms (whole-profile steps and steps on the selected
//! function), the hide box, the removable chips, the keys that apply a step to the frame with
//! keyboard focus (or the selected function), and copying a function's full name.

use embers_model::tree::transform::idle::IdleClass;
use embers_model::tree::transform::library_of;
use embers_model::FrameKind;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::state::view_spec::Transform;
use crate::state::view_state::ViewState;

/// Steps on the whole profile: (value, label, step).
fn whole_profile() -> [(&'static str, &'static str, Transform); 8] {
    [
        ("threads", "Fold [t] thread layer", Transform::FoldThreads),
        ("kernel0", "Hide kernel frames", Transform::KernelDepth(0)),
        (
            "kernel2",
            "Cap kernel depth at 2",
            Transform::KernelDepth(2),
        ),
        (
            "unresolved",
            "Collapse unresolved frames",
            Transform::CollapseUnresolved,
        ),
        (
            "idle",
            "Drop idle waits (futex, epoll, park…)",
            Transform::Idle(IdleClass::Wait),
        ),
        (
            "spin",
            "Drop idle spinning (CPU idle, yield…)",
            Transform::Idle(IdleClass::Spin),
        ),
        ("rec", "Collapse all recursion", Transform::Recursion(None)),
        (
            "libs",
            "Collapse every library's runs",
            Transform::Library(None),
        ),
    ]
}

/// Steps on one function, by menu value and key: (value, key, label).
const ON_FUNCTION: [(&str, &str, &str); 6] = [
    ("focus", "t", "Keep only stacks through it"),
    ("root", "f", "Focus on it (as the root)"),
    ("drop", "d", "Drop its samples"),
    ("merge", "m", "Merge it into its callers"),
    ("recursion", "r", "Collapse its recursion"),
    ("library", "l", "Collapse its library"),
];

/// The step `value` (an [`ON_FUNCTION`] entry) on function `name`; `None` when it does not
/// apply (a library step on a frame that is no library's).
fn on_function(value: &str, name: &str, kind: FrameKind) -> Option<Transform> {
    let name = name.to_owned();
    Some(match value {
        "focus" => Transform::Focus(name),
        "root" => Transform::Root(name),
        "drop" => Transform::Drop(name),
        "merge" => Transform::Merge(name),
        "recursion" => Transform::Recursion(Some(name)),
        "library" => Transform::Library(Some(library_of(&name, kind)?.to_owned())),
        _ => return None,
    })
}

/// Adds a step: one kernel cap at a time, each other step once.
pub fn add_transform(view: ViewState, t: Transform) {
    view.transforms.update(|ts| {
        if matches!(t, Transform::KernelDepth(_)) {
            ts.retain(|x| !matches!(x, Transform::KernelDepth(_)));
        }
        if !ts.contains(&t) {
            ts.push(t);
        }
    })
}

/// The function a step applies to: the frame with keyboard focus, else the selected function;
/// with its kind.
fn target(view: ViewState) -> Option<(String, FrameKind)> {
    let shown = view.shown.get_untracked()?;
    let p = &shown.profile;
    let by_focus = view
        .focused
        .get_untracked()
        .filter(|&n| n != 0 && (n as usize) < p.node_count())
        .map(|n| (p.name(n).to_owned(), p.kind(n)));
    by_focus.or_else(|| {
        let name = view.selected.get_untracked()?;
        let kind = p
            .function_id(&name)
            .map_or(FrameKind::from_name(&name), |f| p.function_kind(f));
        Some((name, kind))
    })
}

/// A key pressed outside a text field: applies its step (see the shortcut sheet) and says so.
pub fn transform_key(view: ViewState, key: &str) -> bool {
    if view.shown.with_untracked(|s| s.is_none()) {
        return false;
    }
    let step = match key {
        "i" => Some(Transform::Idle(IdleClass::Wait)),
        "s" => Some(Transform::Idle(IdleClass::Spin)),
        "c" => {
            if let Some((name, _)) = target(view) {
                copy_text(&name);
            }
            return target(view).is_some();
        }
        _ => ON_FUNCTION
            .iter()
            .find(|(_, k, _)| *k == key)
            .and_then(|(value, ..)| {
                let (name, kind) = target(view)?;
                on_function(value, &name, kind)
            }),
    };
    match step {
        Some(t) => {
            add_transform(view, t);
            true
        }
        None => false,
    }
}

/// The keys of the steps, for the shortcut sheet.
pub const TRANSFORM_KEYS: [(&str, &str); 5] = [
    (
        "t / f",
        "only stacks through / focus on the focused frame's function",
    ),
    ("d / m", "drop its samples / merge it into its callers"),
    ("r / l", "collapse its recursion / its library"),
    ("i / s", "drop idle waits / idle spinning"),
    ("c", "copy the focused or selected function's full name"),
];

/// Puts `text` on the clipboard (where the page may).
pub fn copy_text(text: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}

/// The menu and the hide box.
#[component]
pub fn NoiseControl(view: ViewState) -> impl IntoView {
    let hide_text = RwSignal::new(String::new());
    let selected_kind = Memo::new(move |_| {
        let name = view.selected.get()?;
        Some(FrameKind::from_name(&name))
    });
    view! {
        <select data-testid="noise-add" aria-label="Noise control"
            on:change=move |e| {
                let value = event_target_value(&e);
                if let Some((_, _, t)) = whole_profile().into_iter().find(|(v, _, _)| *v == value) {
                    add_transform(view, t);
                }
                if let Some(name) = view.selected.get_untracked() {
                    let kind = selected_kind.get_untracked().unwrap_or(FrameKind::App);
                    if let Some(t) = on_function(&value, &name, kind) {
                        add_transform(view, t);
                    }
                }
                // Back to the placeholder so the same step can be chosen again later.
                if let Some(el) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()) {
                    el.set_value("");
                }
            }>
            <option value="" selected>"Noise control…"</option>
            <optgroup label="Whole profile">
                {whole_profile().into_iter().map(|(v, label, _)| view! { <option value=v>{label}</option> }).collect_view()}
            </optgroup>
            <optgroup label=move || view.selected.get().map_or_else(|| "Selected function (select one first)".to_owned(), |n| format!("Selected: {n}"))>
                {ON_FUNCTION.into_iter().map(|(v, key, label)| {
                    let disabled = move || match (v, selected_kind.get()) {
                        (_, None) => true,
                        ("library", Some(k)) => k != FrameKind::Library,
                        _ => false,
                    };
                    view! { <option value=v prop:disabled=disabled>{format!("{label}  ({key})")}</option> }
                }).collect_view()}
            </optgroup>
        </select>
        <input type="text" class="hide-input" data-testid="hide-pattern" placeholder="hide frames: a, b"
            aria-label="Hide frames whose name contains any of these terms"
            prop:value=move || hide_text.get()
            on:input=move |e| hide_text.set(event_target_value(&e))
            on:keydown=move |e| {
                if e.key() == "Enter" && !hide_text.get_untracked().trim().is_empty() {
                    e.prevent_default();
                    add_transform(view, Transform::Hide(hide_text.get_untracked().trim().to_string()));
                    hide_text.set(String::new());
                }
            } />
        // Always there (disabled until a frame is selected): a click that selects must not
        // wrap this bar and move the graph below.
        <button type="button" class="icon" data-testid="copy-name"
            prop:disabled=move || view.selected.with(Option::is_none)
            title=move || view.selected.get().map_or_else(|| "Copy the selected frame's full name (c)".to_owned(), |n| format!("Copy the full name: {n} (c)"))
            on:click=move |_| if let Some(name) = view.selected.get_untracked() { copy_text(&name) }>"Copy name"</button>
    }
}

/// The steps applied, each a removable chip, and "Clear all".
#[component]
pub fn Chips(view: ViewState) -> impl IntoView {
    move || {
        let transforms = view.transforms.get();
        (!transforms.is_empty()).then(|| {
            view! {
                <div class="chips" data-testid="chips">
                    {transforms.into_iter().enumerate().map(|(i, t)| view! {
                        <span class="chip" data-testid="chip" data-param=t.to_param()>
                            {t.label()}
                            <button type="button" aria-label=format!("Remove {}", t.label())
                                on:click=move |_| view.transforms.update(|ts| { if i < ts.len() { ts.remove(i); } })>"×"</button>
                        </span>
                    }).collect_view()}
                    <button type="button" class="ghost small" on:click=move |_| view.transforms.set(Vec::new())>"Clear all"</button>
                </div>
            }
        })
    }
}
