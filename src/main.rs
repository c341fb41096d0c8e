//! Entry point: mount the app. Everything else lives in the library crate.

fn main() {
    leptos::mount::mount_to_body(embers::App);
}
