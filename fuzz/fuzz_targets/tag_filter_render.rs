//! Tag-filter builder rows: `parse(render_tag_filter(rows))` gives back exactly the rows'
//! conditions (names resolved, integer fields typed), or an error when a row cannot be
//! expressed (unknown tag, non-integer value of an integer field, a name with a backtick,
//! too many rows). Never different conditions: that would widen or change a user's filter.
#![no_main]

use embers_fuzz::gen::tags::Row;
use embers_model::contract::fields::{resolve, FieldKind};
use embers_model::contract::tag_filter::{
    parse, render_tag_filter, Condition, Op, TagCondition, Value, MAX_CONDITIONS,
};
use libfuzzer_sys::fuzz_target;

/// The condition a row stands for, `None` when it cannot be expressed.
fn expected(row: &TagCondition) -> Option<Condition> {
    let name = row.name.trim();
    if name.contains('`') {
        return None;
    }
    let field = resolve(name).ok()?;
    let value = match field.kind() {
        FieldKind::Text => Value::Text(row.value.clone()),
        FieldKind::Int => Value::Int(row.value.trim().parse().ok()?),
    };
    Some(Condition {
        field,
        op: if row.negated { Op::Ne } else { Op::Eq },
        values: vec![value],
    })
}

fuzz_target!(|rows: Vec<Row>| {
    let rows: Vec<TagCondition> = rows.iter().map(Row::condition).collect();
    let text = render_tag_filter(&rows);
    let kept: Vec<&TagCondition> = rows.iter().filter(|r| !r.name.trim().is_empty()).collect();
    let want: Option<Vec<Condition>> = kept.iter().map(|r| expected(r)).collect();
    let want = want.filter(|w| w.len() <= MAX_CONDITIONS);
    match (parse(&text), want) {
        (Ok(got), Some(want)) => assert_eq!(got.conditions, want, "filter text: {text}"),
        (Err(_), None) => {}
        (Ok(got), None) => panic!("{text:?} parses as {got:?} but some row cannot be expressed"),
        (Err(e), Some(_)) => panic!("{text:?} does not parse back: {e}"),
    }
});
