//! Entry point: report panics on the console, take the access token out of the address, start
//! the decode worker, mount the app.

fn main() {
    // A panic in wasm otherwise surfaces only as "unreachable"; say where it happened.
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("Embers panicked: {info}").into())
    }));
    // Before anything reads or rewrites the address.
    embers::net::auth::capture_from_address();
    // Loads in the background while the page boots; queries decode there once it is ready.
    embers::net::marks::mark(embers::net::marks::APP_STARTED);
    embers::net::decode_worker::start();
    leptos::mount::mount_to_body(embers::App);
}
