//! Data the page asks the service for when what it depends on changes: a signal that holds the
//! last answer. Leptos' `LocalResource` does the same, but each one brings its async-derived
//! machinery (suspense, wakers, a polled scoped future) monomorphised per type; the eight the
//! page used weighed ~45 KB of wasm before compression. A future spawned from an effect is
//! all the page needs: nothing here waits on `Suspense`.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

/// The last answer of `fetch`'s future (`None` until the first arrives). `fetch` runs again
/// whenever a signal it reads changes; its future is not tracked. An answer that arrives after
/// a newer request was made is dropped, so a slow old answer never replaces a newer one; the
/// previous answer stays shown while the next is on its way.
pub fn fetched<T, Fut>(fetch: impl Fn() -> Fut + 'static) -> ReadSignal<Option<T>, LocalStorage>
where
    T: 'static,
    Fut: Future<Output = T> + 'static,
{
    let (value, set_value) = signal_local(None::<T>);
    let latest = Rc::new(Cell::new(0u64));
    Effect::new(move |_| {
        let future = fetch();
        let request = latest.get() + 1;
        latest.set(request);
        let latest = Rc::clone(&latest);
        spawn_local(async move {
            let answer = future.await;
            if latest.get() == request {
                set_value.set(Some(answer));
            }
        });
    });
    value
}
