//! What grew on a host where processes come and go: new and vanished processes listed apart,
//! changes weighed by what they cost the fleet, each row's certainty.

use crate::contract::explore::{
    parse_functions_body, FunctionSums, FunctionsAnswer, FunctionsQuery, SelfTotal,
    ON_CPU_US_PER_SAMPLE,
};

const S: u64 = ON_CPU_US_PER_SAMPLE;

fn query(extra: &str) -> FunctionsQuery {
    let body = format!(
        r#"{{"time_start":100,"time_end":200,"profile_event_type":"on-cpu","metric":"total",
            "baseline_time_start":1,"baseline_time_end":99{extra}}}"#
    );
    parse_functions_body(body.as_bytes()).unwrap()
}

/// One process of a side: its name, its samples, and each function's samples of total.
type Process<'a> = (&'a str, u64, &'a [(&'a str, u64)]);

/// A side of `processes`, in µs.
fn side(processes: &[Process]) -> FunctionSums {
    let mut s = FunctionSums::default();
    for (app, all, functions) in processes {
        let p = s.place(&(app.to_string(), None));
        s.add_all(p, all * S);
        s.all += all * S;
        for (name, n) in *functions {
            let v = n * S;
            s.add(
                name,
                p,
                SelfTotal {
                    self_value: v,
                    total: v,
                },
            );
        }
    }
    s
}

/// The demo's shape: a gateway whose encoder went from 6 % to 52 % of it, a steady database,
/// and, now only, a compiler that lived a few seconds (all of it `main`, `_start`).
fn host() -> (FunctionSums, FunctionSums) {
    let base = side(&[
        (
            "gateway",
            1_000,
            &[("encode", 60), ("main", 1_000), ("route", 900)],
        ),
        ("db", 5_000, &[("scan", 2_000), ("main", 5_000)]),
        ("old-cron", 300, &[("main", 300), ("tick", 200)]),
    ]);
    let now = side(&[
        (
            "gateway",
            2_000,
            &[("encode", 1_040), ("main", 2_000), ("route", 1_900)],
        ),
        ("db", 5_000, &[("scan", 2_030), ("main", 5_000)]),
        (
            "cc1",
            3_000,
            &[("main", 3_000), ("_start", 3_000), ("parse", 1_500)],
        ),
    ]);
    (now, base)
}

#[test]
fn new_processes_are_listed_apart_not_as_growth() {
    let (now, base) = host();
    let a = FunctionsAnswer::finish(&query(r#","order_by":"change""#), now, Some(base));
    let names: Vec<&str> = a.values.iter().map(|r| r.function.as_str()).collect();
    assert_eq!(names[0], "encode", "{:?}", &a.values[..3]);
    // `_start` and `parse` ran only in the compiler, `tick` only in the cron job gone since.
    for only_shifted in ["_start", "parse", "tick"] {
        assert!(!names.contains(&only_shifted), "{names:?}");
    }
    // `main` ran in the compiler too, but inside gateway and db it is all of them both times.
    let main = a.values.iter().find(|r| r.function == "main").unwrap();
    assert!(main.change.is_some_and(|c| c.abs() < 1e-9), "{main:?}");
    assert_eq!(main.significant, Some(false));
    let new = a.new_processes.as_ref().unwrap();
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].app_service, "cc1");
    assert!((new[0].share - 30.0).abs() < 1e-9);
    let listed: Vec<&str> = new[0]
        .functions
        .iter()
        .map(|f| f.function.as_str())
        .collect();
    assert_eq!(listed, ["_start", "main", "parse"]);
    let gone = a.vanished_processes.as_ref().unwrap();
    assert_eq!((gone.len(), gone[0].app_service.as_str()), (1, "old-cron"));
}

#[test]
fn growth_is_weighed_by_what_the_process_costs_and_judged() {
    let (now, base) = host();
    let a = FunctionsAnswer::finish(&query(r#","order_by":"change""#), now, Some(base));
    let encode = &a.values[0];
    // Inside gateway 6 % -> 52 %, gateway is 2,000 of the 7,000 samples of gateway and db.
    let expected = (52.0 - 6.0) * 2_000.0 / 7_000.0;
    assert!(
        (encode.change.unwrap() - expected).abs() < 1e-9,
        "{encode:?}"
    );
    assert!(encode.z.unwrap() > 10.0 && encode.significant == Some(true));
    // db's scan moved 0.6 points on 5,000 samples: noise, ranked after every sure change.
    let scan = a.values.iter().find(|r| r.function == "scan").unwrap();
    assert_eq!(scan.significant, Some(false), "{scan:?}");
    // The change inside a process of its own: place change has none for the new compiler.
    let by_place = FunctionsAnswer::finish(
        &query(r#","order_by":"place_change""#),
        host().0,
        Some(host().1),
    );
    assert_eq!(by_place.values[0].function, "encode");
    let main = by_place
        .values
        .iter()
        .find(|r| r.function == "main")
        .unwrap();
    let cc1 = main.places.iter().find(|p| p.app_service == "cc1").unwrap();
    assert_eq!(cc1.change, None, "a new process did not grow from nothing");
}

#[test]
fn a_baseline_of_other_samples_is_one_stratum() {
    // pod a against pod b: the processes differ on purpose, nothing is listed apart.
    let (now, base) = host();
    let q = query(r#","order_by":"change","baseline_tag_filter":"pod='b'""#);
    let a = FunctionsAnswer::finish(&q, now.clone(), Some(base.clone()));
    assert_eq!(
        (a.new_processes.as_ref(), a.vanished_processes.as_ref()),
        (None, None)
    );
    let parse = a.values.iter().find(|r| r.function == "parse").unwrap();
    let share = 1_500.0 * 100.0 / 10_000.0;
    assert!((parse.change.unwrap() - share).abs() < 1e-9, "{parse:?}");
    // Without a baseline nothing is judged.
    let mut q = query("");
    q.baseline = None;
    let plain = FunctionsAnswer::finish(&q, now, None);
    assert!(plain
        .values
        .iter()
        .all(|r| r.z.is_none() && r.significant.is_none()));
    assert_eq!(plain.new_processes, None);
}
