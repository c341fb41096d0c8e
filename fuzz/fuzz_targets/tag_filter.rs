//! Raw `tag_filter` text: `parse` never panics, respects its limits, and every error points
//! at a real position of the input (a character boundary, with a matching character count).
#![no_main]

use embers_fuzz::alloc;
use embers_model::contract::tag_filter::{parse, MAX_CONDITIONS, MAX_IN_VALUES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match alloc::bounded(text.len(), || parse(&text)) {
        Ok(filter) => {
            assert!(filter.conditions.len() <= MAX_CONDITIONS);
            for c in &filter.conditions {
                assert!(!c.values.is_empty() && c.values.len() <= MAX_IN_VALUES);
            }
        }
        Err(e) => {
            assert!(
                text.is_char_boundary(e.byte_pos),
                "error inside a character: {e:?}"
            );
            assert_eq!(e.char_pos, text[..e.byte_pos].chars().count() + 1, "{e:?}");
            assert!(text[e.byte_pos..].starts_with(e.near.as_str()), "{e:?}");
        }
    }
});
