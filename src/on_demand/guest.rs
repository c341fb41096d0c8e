//! The module's side of an on-demand view: [`mount`] builds the view into the page's host
//! element under an owner of this module's own Leptos runtime, with its input in a signal
//! that [`update`] sets; [`Emit`] sends the view's events to the page; [`unmount`] drops the
//! view (its owner, effects and DOM). A module's exports are these three, written by
//! [`crate::on_demand_view!`]; nothing here is exported by the page's own wasm.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::JsValue;

/// Why a mount or an update was refused (shown by the page's error state).
#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    /// The page's input is not this view's input type.
    #[error("the view's input could not be read: {0}")]
    BadInput(#[from] serde_json::Error),
    /// No view is mounted under this id (unmounted, or never mounted).
    #[error("no view is mounted under id {0}")]
    NotMounted(u32),
}

impl From<GuestError> for JsValue {
    fn from(e: GuestError) -> JsValue {
        js_sys::Error::new(&e.to_string()).into()
    }
}

/// Sends the view's events to the page: each is serialized to JSON and handed to the
/// function the page gave [`mount`]. It holds only the view's id (the function stays in this
/// module's list), so it is `Send` and cheap to copy into event handlers and callbacks.
#[derive(Clone, Copy, Debug)]
pub struct Emit(u32);

impl Emit {
    /// Sends `event`. A page that cannot take it (its handler threw) is told on the console:
    /// the view stays usable.
    pub fn send<E: Serialize>(&self, event: &E) {
        let json = match serde_json::to_string(event) {
            Ok(j) => j,
            Err(e) => return web_sys::console::error_1(&format!("view event: {e}").into()),
        };
        // Cloned out first: the page's handler may call `update` on this module at once.
        let Some(f) = SLOTS.with(|s| s.borrow().get(self.0 as usize).and_then(|s| s.emit.clone()))
        else {
            return;
        };
        if let Err(e) = f.call1(&JsValue::NULL, &JsValue::from_str(&json)) {
            web_sys::console::error_2(&"the page refused a view event".into(), &e);
        }
    }

    /// A Leptos callback that sends what it is called with.
    pub fn callback<E: Serialize + 'static>(self) -> Callback<E> {
        Callback::new(move |e: E| self.send(&e))
    }
}

/// Sets a mounted view's input from its JSON.
type SetInput = Rc<dyn Fn(&str) -> Result<(), GuestError>>;

/// One mounted view: where its events go, what keeps it alive and how its input is set.
#[derive(Default)]
struct Slot {
    emit: Option<js_sys::Function>,
    view: Option<Box<dyn Any>>,
    set_input: Option<SetInput>,
}

thread_local! {
    /// Mounted views by id (a page may mount one view twice, e.g. after leaving and coming back).
    static SLOTS: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

/// Mounts `render`'s view into `host` with `input` (JSON of `I`); returns the id that
/// [`update`] and [`unmount`] take. Changes to the input arrive through [`update`], as the
/// signal `render` is given.
pub fn mount<I, V>(
    host: web_sys::HtmlElement,
    input: &str,
    emit: js_sys::Function,
    render: impl FnOnce(ReadSignal<I>, Emit) -> V + 'static,
) -> Result<u32, GuestError>
where
    I: DeserializeOwned + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let first: I = serde_json::from_str(input)?;
    let id = SLOTS.with(|s| {
        let mut s = s.borrow_mut();
        s.push(Slot {
            emit: Some(emit),
            ..Slot::default()
        });
        (s.len() - 1) as u32
    });
    // Created inside the view's owner (so it goes with the view), read back out for `update`.
    let made = Rc::new(Cell::new(None::<RwSignal<I>>));
    let keep = Rc::clone(&made);
    let view = leptos::mount::mount_to(host, move || {
        let signal = RwSignal::new(first);
        keep.set(Some(signal));
        render(signal.read_only(), Emit(id))
    });
    let set_input = made.get().map(|signal| {
        Rc::new(move |json: &str| {
            signal.set(serde_json::from_str(json)?);
            Ok(())
        }) as SetInput
    });
    SLOTS.with(|s| {
        if let Some(slot) = s.borrow_mut().get_mut(id as usize) {
            slot.view = Some(Box::new(view));
            slot.set_input = set_input;
        }
    });
    Ok(id)
}

/// Sets the input of the view mounted as `id` (JSON of its input type).
pub fn update(id: u32, input: &str) -> Result<(), GuestError> {
    // Parsed and set outside the list's borrow: setting the signal runs the view's effects.
    let set = SLOTS.with(|s| {
        s.borrow()
            .get(id as usize)
            .and_then(|s| s.set_input.clone())
    });
    match set {
        Some(set) => set(input),
        None => Err(GuestError::NotMounted(id)),
    }
}

/// Drops the view mounted as `id`: its DOM leaves the host, its effects stop.
pub fn unmount(id: u32) {
    // Taken out first: dropping a view runs its cleanups, which must not find the list borrowed.
    let slot = SLOTS.with(|s| s.borrow_mut().get_mut(id as usize).map(std::mem::take));
    drop(slot);
}

/// Writes an on-demand module's exports (`mount`, `update`, `unmount`) around `render`, a
/// `fn(ReadSignal<Input>, Emit) -> impl IntoView`. Use it once in the module's bin
/// (`src/bin/<stem>.rs`), beside an empty `fn main() {}`.
#[macro_export]
macro_rules! on_demand_view {
    ($render:path) => {
        /// Mounts the view into `host` with `input` (JSON); events go to `emit(json)`.
        #[wasm_bindgen::prelude::wasm_bindgen]
        pub fn mount(
            host: web_sys::HtmlElement,
            input: &str,
            emit: js_sys::Function,
        ) -> Result<u32, wasm_bindgen::JsValue> {
            $crate::on_demand::guest::panic_hook();
            Ok($crate::on_demand::guest::mount(host, input, emit, $render)?)
        }

        /// Sets the input of the view mounted as `id`.
        #[wasm_bindgen::prelude::wasm_bindgen]
        pub fn update(id: u32, input: &str) -> Result<(), wasm_bindgen::JsValue> {
            Ok($crate::on_demand::guest::update(id, input)?)
        }

        /// Drops the view mounted as `id`.
        #[wasm_bindgen::prelude::wasm_bindgen]
        pub fn unmount(id: u32) {
            $crate::on_demand::guest::unmount(id)
        }
    };
}

/// A panic in the module says where on the console (wasm's own report is "unreachable").
pub fn panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("Embers view panicked: {info}").into())
    }));
}
