//! The page's side of an on-demand view: [`OnDemand`] renders an empty host element, loads
//! the view's module the first time (`import()` of its script, then its wasm: one request
//! each, cached by the browser and by this page for later opens), mounts the view into the
//! host with the input's JSON, sends each new input to it, hands its events to `on_event`,
//! and unmounts it when the page leaves the view. While the module loads the page says so;
//! if it cannot load, the page says why and offers to try again.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::ViewModule;
use crate::net::http::js_error;

#[wasm_bindgen(inline_js = "
const loaded = new Map();
export function load_view_module(stem, url) {
  let p = loaded.get(stem);
  if (!p) {
    p = import(url).then(async (m) => { await m.default(); return m; });
    p.catch(() => loaded.delete(stem));
    loaded.set(stem, p);
  }
  return p;
}")]
extern "C" {
    /// The module `stem` from `url` (absolute), imported and its wasm instantiated; one
    /// promise per module while it loads or once loaded (every later open shares its one
    /// instance), none after a failure (so a retry loads again).
    fn load_view_module(stem: &str, url: &str) -> js_sys::Promise;

    /// An on-demand module's exports (see `on_demand::guest`).
    type LoadedView;
    #[wasm_bindgen(method, catch)]
    fn mount(
        this: &LoadedView,
        host: &web_sys::HtmlElement,
        input: &str,
        emit: &js_sys::Function,
    ) -> Result<u32, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn update(this: &LoadedView, id: u32, input: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(method)]
    fn unmount(this: &LoadedView, id: u32);
}

/// Where the view is.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    Loading,
    Shown,
    Failed(String),
}

/// A view in its host: the module, its id there, and the events' callback it holds.
struct Mounted {
    module: LoadedView,
    id: u32,
    _emit: Closure<dyn Fn(String)>,
}

/// The view of `module` with `input` (JSON of its input type), in a host element; its events
/// (JSON of its event type) go to `on_event`.
#[component]
pub fn OnDemand(
    module: ViewModule,
    #[prop(into)] input: Signal<String>,
    on_event: Callback<String>,
) -> impl IntoView {
    let host = NodeRef::<html::Div>::new();
    let phase = RwSignal::new(Phase::Loading);
    let attempt = RwSignal::new(0u32);
    let mounted = StoredValue::new_local(None::<Mounted>);
    Effect::new(move |_| {
        let n = attempt.get();
        let Some(el) = host.get() else { return };
        phase.set(Phase::Loading);
        spawn_local(async move {
            match load(module, n).await {
                Ok(m) => show(m, el.into(), input, on_event, mounted, phase),
                Err(e) => phase.set(Phase::Failed(e)),
            }
        });
    });
    Effect::new(move |_| {
        let json = input.get();
        mounted.try_with_value(|m| {
            if let Some(m) = m {
                if let Err(e) = m.module.update(m.id, &json) {
                    phase.set(Phase::Failed(js_error(&e)));
                }
            }
        });
    });
    on_cleanup(move || {
        if let Some(Some(m)) = mounted.try_update_value(Option::take) {
            m.module.unmount(m.id);
        }
    });
    view! {
        <HostNote module=module phase=phase attempt=attempt />
        <div class="on-demand" node_ref=host data-view=module.stem></div>
    }
}

/// "Loading the X view…" while the module loads; why it failed, with *Try again*.
#[component]
fn HostNote(module: ViewModule, phase: RwSignal<Phase>, attempt: RwSignal<u32>) -> impl IntoView {
    let label = module.label;
    move || {
        match phase.get() {
        Phase::Loading => view! {
            <p class="home-note" data-testid="view-loading" role="status">{format!("Loading the {label} view…")}</p>
        }
        .into_any(),
        Phase::Shown => ().into_any(),
        Phase::Failed(why) => view! {
            <div class="error" role="alert" data-testid="view-error">
                <strong>{format!("Could not load the {label} view. ")}</strong>
                <span>{why}</span>" "
                <button type="button" data-testid="view-retry" on:click=move |_| attempt.update(|n| *n += 1)>"Try again"</button>
            </div>
        }
        .into_any(),
    }
    }
}

/// The loaded module (imported the first time; a retry asks the server again).
async fn load(module: ViewModule, attempt: u32) -> Result<LoadedView, String> {
    let base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.base_uri().ok().flatten())
        .unwrap_or_default();
    let url = web_sys::Url::new_with_base(&module.script(), &base).map_err(|e| js_error(&e))?;
    if attempt > 0 {
        // A failed import stays failed for its URL in some browsers: ask under a new one.
        url.search_params().set("attempt", &attempt.to_string());
    }
    let loaded = JsFuture::from(load_view_module(module.stem, &url.href()))
        .await
        .map_err(|e| js_error(&e))?;
    Ok(loaded.unchecked_into())
}

/// Mounts the view into `host` (unless the page left it while the module loaded).
fn show(
    module: LoadedView,
    host: web_sys::HtmlElement,
    input: Signal<String>,
    on_event: Callback<String>,
    mounted: StoredValue<Option<Mounted>, LocalStorage>,
    phase: RwSignal<Phase>,
) {
    let emit = Closure::<dyn Fn(String)>::new(move |json: String| on_event.run(json));
    let shown = mounted.try_update_value(|slot| {
        // A retry after a failed update: the old view goes first.
        if let Some(old) = slot.take() {
            old.module.unmount(old.id);
        }
        let json = input.get_untracked();
        let id = module.mount(&host, &json, emit.as_ref().unchecked_ref())?;
        *slot = Some(Mounted {
            module,
            id,
            _emit: emit,
        });
        Ok::<(), JsValue>(())
    });
    match shown {
        Some(Ok(())) => phase.set(Phase::Shown),
        Some(Err(e)) => phase.set(Phase::Failed(js_error(&e))),
        // The page left the view before its module was in.
        None => {}
    }
}
