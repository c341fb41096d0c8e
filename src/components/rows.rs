//! Lists of rows the keyboard moves through (the home view's services and functions): ↑ ↓ go
//! to the previous or next visible row.

use wasm_bindgen::JsCast;

/// Arrow keys move between the rows (each an `li` whose first child is its button).
pub fn move_focus(e: leptos::ev::KeyboardEvent) {
    let forward = match e.key().as_str() {
        "ArrowDown" => true,
        "ArrowUp" => false,
        _ => return,
    };
    let Some(li) = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|el| el.parent_element())
    else {
        return;
    };
    let mut next = if forward {
        li.next_element_sibling()
    } else {
        li.previous_element_sibling()
    };
    while let Some(el) = next.clone().filter(|el| el.class_list().contains("hidden")) {
        next = if forward {
            el.next_element_sibling()
        } else {
            el.previous_element_sibling()
        };
    }
    if let Some(button) = next
        .and_then(|el| el.first_element_child())
        .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
    {
        e.prevent_default();
        let _ = button.focus();
    }
}
