//! Keeping a signal equal to an element's size, through a `ResizeObserver`.

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::ResizeObserver;

/// Keeps `size` equal to the element's client size (CSS px).
pub fn observe_size<E>(target: NodeRef<E>, size: RwSignal<(f64, f64)>)
where
    E: html::ElementType,
    E::Output: JsCast + Clone + 'static,
{
    let observer = StoredValue::new_local(None::<ResizeObserver>);
    Effect::new(move |_| {
        let Some(el) = target.get() else { return };
        let el: web_sys::Element = el.unchecked_into();
        let measured = el.clone();
        let callback = Closure::<dyn FnMut()>::new(move || {
            let now = (
                f64::from(measured.client_width()),
                f64::from(measured.client_height()),
            );
            // Its first report repeats the size read below: no second paint for it.
            if size.get_untracked() != now {
                size.set(now);
            }
        });
        if let Ok(ro) = ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            ro.observe(&el);
            observer.set_value(Some(ro));
        }
        // The first size is read now, in the task that mounted the element (effects run once
        // this update's DOM is complete): whoever draws with it draws in this task, and the
        // next frame shows the result. Waiting for the observer's first report instead puts the
        // drawing inside the next frame's rendering, after its animation-frame callbacks.
        // The observer reports every later change.
        let (w, h) = (el.client_width(), el.client_height());
        if w > 0 && h > 0 {
            size.set((f64::from(w), f64::from(h)));
        }
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
