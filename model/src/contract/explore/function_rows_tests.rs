//! The functions finishing step: shares of everything selected, the baseline's change and
//! ratio, search, ranking by value or change, paging, and the places listed per function.

use super::*;
use crate::contract::explore::{parse_functions_body, Place, SelfTotal};

fn query(extra: &str) -> FunctionsQuery {
    // Off-CPU: values are taken as counts (on-CPU ones are µs, 10,101 to a sample).
    let body = format!(r#"{{"time_start":1,"time_end":2,"profile_event_type":"off-cpu"{extra}}}"#);
    parse_functions_body(body.as_bytes()).unwrap()
}

fn place(app: &str) -> Place {
    (app.to_owned(), None)
}

fn st(self_value: u64, total: u64) -> SelfTotal {
    SelfTotal { self_value, total }
}

/// `main` everywhere, `f` hot in `a`, `g` only in `b`: 200 in all.
fn sums() -> FunctionSums {
    let mut s = FunctionSums {
        all: 200,
        ..FunctionSums::default()
    };
    let (a, b) = (s.place(&place("a")), s.place(&place("b")));
    s.add_all(a, 150);
    s.add_all(b, 50);
    s.add("main", a, st(0, 150));
    s.add("main", b, st(10, 50));
    s.add("f", a, st(120, 150));
    s.add("g", b, st(40, 40));
    s.add("f", a, st(30, 0));
    s
}

fn names(a: &FunctionsAnswer) -> Vec<&str> {
    a.values.iter().map(|r| r.function.as_str()).collect()
}

#[test]
fn rows_rank_by_the_metric_with_shares_of_everything() {
    let a = FunctionsAnswer::finish(&query(""), sums(), None);
    assert_eq!(names(&a), ["f", "g", "main"]);
    assert_eq!(
        (a.rows, a.offset, a.value, a.baseline_value),
        (3, 0, 200, None)
    );
    let f = &a.values[0];
    assert_eq!(
        (f.self_value, f.total, f.self_share, f.total_share),
        (150, 150, 75.0, 75.0)
    );
    assert_eq!((f.baseline_self, f.change, f.ratio), (None, None, None));
    let main = &a.values[2];
    assert_eq!((main.total, main.place_count), (200, 2));
    let plain = |app: &str, s: u64, t: u64| {
        PlaceValue::from((app.to_owned(), None, s, t, None, None, None))
    };
    assert_eq!(
        main.places,
        vec![plain("b", 10, 50), plain("a", 0, 150)],
        "by self, the metric"
    );
    let a = FunctionsAnswer::finish(&query(r#","metric":"total""#), sums(), None);
    assert_eq!(names(&a), ["main", "f", "g"]);
    assert_eq!(a.values[0].places[0].app_service, "a", "by total");
    let json = serde_json::to_string(&a.values[2]).unwrap();
    assert_eq!(
        json,
        r#"["g",40,40,20.0,20.0,null,null,null,null,null,1,[["b",null,40,40,null,null,null]],null,null]"#
    );
    let back: FunctionRow = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a.values[2]);
    // A row as services wrote it before `z` and `significant` still reads.
    let short =
        r#"["g",40,40,20.0,20.0,null,null,null,null,null,1,[["b",null,40,40,null,null,null]]]"#;
    assert_eq!(
        serde_json::from_str::<FunctionRow>(short).unwrap(),
        a.values[2]
    );
}

#[test]
fn search_and_pages() {
    let a = FunctionsAnswer::finish(&query(r#","search":"MA""#), sums(), None);
    assert_eq!((names(&a), a.rows), (vec!["main"], 1));
    let a = FunctionsAnswer::finish(&query(r#","limit":1,"offset":1"#), sums(), None);
    assert_eq!((names(&a), a.rows, a.offset), (vec!["g"], 3, 1));
    let a = FunctionsAnswer::finish(&query(r#","offset":5"#), sums(), None);
    assert!(a.values.is_empty() && a.rows == 3);
    let empty = FunctionsAnswer::finish(&query(""), FunctionSums::default(), None);
    assert_eq!((empty.rows, empty.value), (0, 0));
    assert_eq!(empty.columns, FUNCTION_COLUMNS);
}

#[test]
fn baselines_give_change_in_points_and_ratio_and_sort_by_growth() {
    let mut base = FunctionSums {
        all: 100,
        ..FunctionSums::default()
    };
    // Indexes of the baseline's own places (listed in another order than the range's).
    let (b, a) = (base.place(&place("b")), base.place(&place("a")));
    base.add_all(a, 60);
    base.add_all(b, 40);
    base.add("f", a, st(25, 30));
    base.add("g", b, st(30, 30));
    base.add("gone", a, st(20, 20));
    let q = query(r#","baseline_time_start":1,"baseline_time_end":2,"order_by":"change""#);
    let a = FunctionsAnswer::finish(&q, sums(), Some(base));
    // Changes inside each process, weighed by its share now (a 150 of 200, b 50): f in a
    // 25/60 -> 150/150 self: +58.3 x 0.75 = +43.75; main in b 0 -> 10/50: +20 x 0.25 = +5;
    // g in b 30/40 -> 40/50: +1.25; gone in a 20/60 -> 0: -25.
    assert_eq!(names(&a), ["f", "main", "g", "gone"]);
    assert_eq!(a.baseline_value, Some(100));
    let near = |x: Option<f64>, y: f64| x.is_some_and(|x| (x - y).abs() < 1e-9);
    let f = &a.values[0];
    assert!(near(f.change, 43.75) && near(f.ratio, 2.4), "{f:?}");
    assert_eq!((f.baseline_self, f.baseline_total), (Some(25), Some(30)));
    assert!(near(a.values[1].change, 5.0) && a.values[1].ratio.is_none());
    assert!(near(a.values[2].change, 1.25));
    let gone = &a.values[3];
    assert!(gone.self_value == 0 && near(gone.change, -25.0) && near(gone.ratio, 0.0));
    // Both processes ran on both sides: nothing is listed apart.
    assert_eq!(a.new_processes, Some(vec![]));
    assert_eq!(a.vanished_processes, Some(vec![]));
    assert!(
        f.z.is_some_and(|z| z > 3.0) && f.significant == Some(true),
        "{f:?}"
    );
    assert_eq!(gone.place_count, 1, "where it ran before");
    assert_eq!(gone.places[0].baseline_self, Some(20));
    // Within each place: f in a went from 25 of 60 to 150 of 150 (self).
    let fa = &f.places[0];
    assert_eq!(
        (fa.baseline_self, fa.change),
        (Some(25), Some(100.0 - 25.0 * 100.0 / 60.0))
    );
    assert_eq!(f.place_change, fa.change);
}

#[test]
fn place_change_ranks_what_grew_inside_a_service() {
    // `big` is most of the fleet and grew a little; `small` doubled in a small service (both
    // on enough samples for the rule to call them changes).
    let side = |small_share: u64, big: u64| {
        let mut s = FunctionSums {
            all: 10_000 + 1_000,
            ..FunctionSums::default()
        };
        let (x, y) = (s.place(&place("large")), s.place(&place("tiny")));
        s.add_all(x, 10_000);
        s.add_all(y, 1_000);
        s.add("big", x, st(big, big));
        s.add("small", y, st(small_share, small_share));
        s
    };
    let by = |order: &str| {
        let q = query(&format!(
            r#","baseline_time_start":1,"baseline_time_end":2,"metric":"total","order_by":"{order}""#
        ));
        FunctionsAnswer::finish(&q, side(400, 6_000), Some(side(200, 5_500)))
    };
    let fleet = by("change");
    assert_eq!(
        names(&fleet),
        ["big", "small"],
        "4.5 points of the fleet against 1.8"
    );
    let inside = by("place_change");
    assert_eq!(
        names(&inside),
        ["small", "big"],
        "20 points of its service against 5"
    );
    assert_eq!(inside.values[0].place_change, Some(20.0));
    assert_eq!(inside.values[0].places[0].app_service, "tiny");
}

#[test]
fn sums_add_up_per_place_and_saturate() {
    let mut a = sums();
    assert_eq!(a.functions["f"], [(0, st(150, 150))]);
    let p = a.place(&place("a"));
    a.add("f", p, st(u64::MAX, 1));
    assert_eq!(a.functions["f"], [(0, st(u64::MAX, 151))]);
    assert_eq!(a.places.len(), 2);
}

/// `s` with every function's places summed into one (what a store's fleet-wide sums hold).
fn collapsed(s: &FunctionSums) -> FunctionSums {
    let mut out = FunctionSums {
        all: s.all,
        ..FunctionSums::default()
    };
    let one = out.place(&place(""));
    out.add_all(one, s.all);
    for name in s.functions.keys() {
        out.add(name, one, s.summed(name));
    }
    out
}

#[test]
fn ranking_the_fleets_sums_then_listing_the_pages_places_answers_as_finish_does() {
    let mut base = sums();
    base.add("gone", 1, st(5, 5));
    for extra in [
        "",
        r#","metric":"total","limit":2"#,
        r#","search":"a""#,
        r#","offset":10"#,
    ] {
        let q = query(extra);
        let with_base = extra.contains("baseline");
        let base = with_base.then(|| base.clone());
        let whole = FunctionsAnswer::finish(&q, sums(), base.clone());
        let fleet_base = base.as_ref().map(collapsed);
        let mut two_steps = FunctionsAnswer::ranked(&q, &collapsed(&sums()), fleet_base.as_ref());
        assert!(two_steps.values.iter().all(|r| r.places.is_empty()));
        two_steps.fill_places(&q, &sums(), base.as_ref());
        assert_eq!(two_steps, whole, "{extra}");
        assert!(whole.values.iter().all(|r| r.place_count > 0), "{extra}");
        assert_eq!(
            whole.values.is_empty(),
            extra.contains("offset\":10"),
            "{extra}"
        );
    }
}
