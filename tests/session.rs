//! The session layer's form rules in headless Chromium (they read the browser clock): an event
//! type without a per-host graph unticks the whole host in the form state itself (no effect of
//! a component does it), and the process suggestions ask the home view's own services question
//! while the form names what home shows, else the form's (every language either way).
#![cfg(target_arch = "wasm32")]

use embers::session::explore::{services_question, suggestions_question, HomeQuery};
use embers::session::form::FormState;
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::request::ProfileRequest;
use leptos::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn an_event_type_without_a_per_host_graph_unticks_the_whole_host() {
    Owner::new().with(|| {
        let form = FormState::new(None);
        form.set_process(TOTAL_APP_SERVICE);
        assert!(form.whole_host.get_untracked());
        let r = form.to_request().expect("a valid request");
        assert_eq!(r.app_service.as_deref(), Some(TOTAL_APP_SERVICE));

        form.set_event_type("off-cpu");
        assert!(!form.whole_host.get_untracked(), "off-CPU has no Total");
        let r = form.to_request().expect("a valid request");
        assert_eq!(
            (r.app_service, r.profile_event_type.as_str()),
            (None, "off-cpu")
        );
        form.set_event_type("on-cpu");
        assert!(
            !form.whole_host.get_untracked(),
            "not ticked again by itself"
        );

        // A request from a link that names Total with another event type fills an unticked box.
        form.fill(&ProfileRequest {
            app_service: Some(TOTAL_APP_SERVICE.into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "mem-alloc".into(),
            time_start: 100,
            time_end: 200,
            ..ProfileRequest::default()
        });
        assert!(!form.whole_host.get_untracked());
        assert_eq!(form.event_type.get_untracked(), "mem-alloc");
    });
}

#[wasm_bindgen_test]
fn suggestions_share_the_home_views_question_while_the_form_names_it() {
    Owner::new().with(|| {
        let form = FormState::new(None);
        // The form's default: the last hour, on-CPU, eBPF, no filter; home was opened from it.
        let request = form.to_request().expect("a valid request");
        let home = HomeQuery {
            base_url: String::new(),
            services: services_question(&request),
            relative: true,
        };
        let (_, asked) = suggestions_question(form, Some(home.clone())).expect("a question");
        assert_eq!(asked, home.services, "the very question home asked");

        // Another language in the form changes nothing: home lists every language.
        form.language.set("Golang".into());
        let (_, asked) = suggestions_question(form, Some(home.clone())).expect("a question");
        assert_eq!(asked, home.services);

        // Another event type or filter is the form's own question, still of every language.
        form.set_event_type("off-cpu");
        form.tag_filter.set("pod='a'".into());
        let (_, asked) = suggestions_question(form, Some(home.clone())).expect("a question");
        assert_ne!(asked, home.services);
        assert_eq!(asked.profile_event_type.as_deref(), Some("off-cpu"));
        assert_eq!(asked.tag_filter, "pod='a'");
        assert_eq!(asked.profile_language_type, None);
        assert_eq!(asked.time_end - asked.time_start, 3600);

        // No valid range yet: nothing is asked.
        form.preset.set("absolute".into());
        form.time_start.set(String::new());
        assert_eq!(suggestions_question(form, None), None);
    });
}
