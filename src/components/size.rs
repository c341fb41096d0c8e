//! Keeping a signal equal to an element's size, through a `ResizeObserver`.

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::ResizeObserver;

/// Keeps `size` equal to the element's client size (CSS px).
pub fn observe_size(target: NodeRef<html::Div>, size: RwSignal<(f64, f64)>) {
    let observer = StoredValue::new_local(None::<ResizeObserver>);
    Effect::new(move |_| {
        let Some(el) = target.get() else { return };
        let measured = el.clone();
        let callback = Closure::<dyn FnMut()>::new(move || {
            size.set((
                f64::from(measured.client_width()),
                f64::from(measured.client_height()),
            ));
        });
        if let Ok(ro) = ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            ro.observe(&el);
            observer.set_value(Some(ro));
        }
        // No synchronous first read: `clientWidth` here would force a layout of a page still
        // being built, and the size it saw would change once the rest of the page is in (a
        // second full paint). An observer reports every element once, after layout and before
        // that frame is painted, so the first paint already has the final size.
        // The observer owns the callback for the component's life; disconnecting on cleanup
        // stops it from firing, so leaking this small closure is bounded by mounts.
        callback.forget();
    });
    on_cleanup(move || {
        observer.try_with_value(|ro| {
            if let Some(ro) = ro {
                ro.disconnect();
            }
        });
    });
}
