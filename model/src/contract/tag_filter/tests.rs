//! Tests of the tag-filter parser and renderer: grammar, positions, limits, quoting, and
//! that rendered builder rows always parse back to the same conditions.

use super::*;

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

fn one(filter: &str) -> Condition {
    let parsed = parse(filter).unwrap_or_else(|e| panic!("{filter}: {e}"));
    assert_eq!(parsed.conditions.len(), 1, "{filter}");
    parsed
        .conditions
        .into_iter()
        .next()
        .unwrap_or_else(|| unreachable!())
}

#[test]
fn empty_and_blank_filters_have_no_conditions() {
    assert_eq!(parse(""), Ok(TagFilter::default()));
    assert_eq!(parse("  \t\n"), Ok(TagFilter::default()));
}

#[test]
fn simple_equality_and_and() {
    let f = parse("pod='web-1' AND host_ip='10.0.0.1'").expect("parses");
    assert_eq!(f.conditions.len(), 2);
    assert_eq!(f.conditions[0].field.name(), "pod");
    assert_eq!(f.conditions[0].op, Op::Eq);
    assert_eq!(f.conditions[0].values, vec![text("web-1")]);
    assert_eq!(f.conditions[1].field.name(), "host_ip");
    assert_eq!(f.conditions[1].values, vec![text("10.0.0.1")]);
}

#[test]
fn and_is_case_insensitive_and_spacing_is_free() {
    let f = parse("  pod = 'a'and host!='b'   aNd az<>'c' ").expect("parses");
    let ops: Vec<Op> = f.conditions.iter().map(|c| c.op).collect();
    assert_eq!(ops, vec![Op::Eq, Op::Ne, Op::Ne]);
}

#[test]
fn escaped_quotes() {
    assert_eq!(
        one("pod_ns='team-o''brien'").values,
        vec![text("team-o'brien")]
    );
    assert_eq!(
        one(r"pod_ns='team-o\'brien'").values,
        vec![text("team-o'brien")]
    );
    assert_eq!(one(r"pod='a\\b'").values, vec![text(r"a\b")]);
    assert_eq!(one(r"pod='a\nb'").values, vec![text(r"a\nb")]);
    assert_eq!(one("pod=''").values, vec![text("")]);
    assert_eq!(one("pod=''''").values, vec![text("'")]);
}

#[test]
fn unicode_values_and_positions() {
    assert_eq!(one("pod='wéb-ü'").values, vec![text("wéb-ü")]);
    let e = parse("pod='éé' OR 1=1").expect_err("OR");
    assert_eq!(e.char_pos, 10);
    assert_eq!(e.byte_pos, 11);
}

#[test]
fn in_and_not_in() {
    let c = one("pod IN ('a', 'b','c')");
    assert_eq!(c.op, Op::In);
    assert_eq!(c.values, vec![text("a"), text("b"), text("c")]);
    let c = one("pod not in ('a')");
    assert_eq!(c.op, Op::NotIn);
    assert!(parse("pod IN 'a'").is_err());
    assert!(parse("pod IN ('a',)").is_err());
    assert!(parse("pod IN ('a'").is_err());
}

#[test]
fn open_families_aliases_and_backticks() {
    assert_eq!(one("k8s.label.app='web'").field.name(), "k8s.label.app");
    assert_eq!(
        one("`k8s.label.app.kubernetes.io/name`='web'").field.name(),
        "k8s.label.app.kubernetes.io/name"
    );
    assert_eq!(one("cloud.tag.team='x'").field.name(), "cloud.tag.team");
    assert_eq!(one("vtap='agent-1'").field.name(), "agent");
}

#[test]
fn integer_fields_are_typed() {
    assert_eq!(one("is_ipv4=1").values, vec![Value::Int(1)]);
    assert_eq!(
        one("time='1700000000'").values,
        vec![Value::Int(1_700_000_000)]
    );
    let e = parse("time='yesterday'").expect_err("not an int");
    assert!(e.message.contains("integer"), "{e}");
    assert_eq!(e.char_pos, 6);
}

#[test]
fn unknown_tag_points_at_it() {
    let e = parse("pod='a' AND colour='red'").expect_err("unknown");
    assert_eq!(e.char_pos, 13);
    assert!(e.message.contains("unknown tag 'colour'"), "{e}");
    let e = parse("k8s.label='x'").expect_err("no key");
    assert!(e.message.contains("needs a key"), "{e}");
}

#[test]
fn injection_attempts_are_syntax_errors() {
    let e = parse("pod='x' OR 1=1").expect_err("OR");
    assert_eq!(e.char_pos, 9);
    assert!(e.message.contains("OR is not supported"), "{e}");
    let e = parse("pod='x'; DROP TABLE profile.in_process").expect_err("semicolon");
    assert_eq!(e.char_pos, 8);
    assert!(parse("pod='x' --").is_err());
    assert!(parse("pod=x").is_err());
    assert!(parse("1=1").is_err());
    assert!(parse("pod='x' AND (1=1)").is_err());
    assert!(parse("pod=(SELECT 1)").is_err());
}

#[test]
fn quote_tricks_stay_inside_the_value() {
    let c = one("pod='x''; DROP TABLE profile.in_process; --'");
    assert_eq!(
        c.values,
        vec![text("x'; DROP TABLE profile.in_process; --")]
    );
    let c = one(r"pod='x\' OR 1=1 --'");
    assert_eq!(c.values, vec![text("x' OR 1=1 --")]);
}

#[test]
fn syntax_errors_report_positions() {
    let e = parse("pod='unterminated").expect_err("unterminated");
    assert_eq!(e.char_pos, 5);
    assert!(e.message.contains("unterminated"), "{e}");
    let e = parse("pod 'a'").expect_err("no op");
    assert_eq!(e.char_pos, 5);
    assert!(e.message.contains("operator"), "{e}");
    let e = parse("pod=").expect_err("no value");
    assert_eq!(e.char_pos, 5);
    let e = parse("pod='a' host='b'").expect_err("missing AND");
    assert_eq!(e.char_pos, 9);
    let e = parse("pod=\"a\"").expect_err("double quotes");
    assert!(e.message.contains("single quotes"), "{e}");
    let e = parse("pod='a' AND").expect_err("dangling AND");
    assert!(e.to_string().contains("end of input"), "{e}");
    let e = parse("pod > 'a'").expect_err("unsupported op");
    assert_eq!(e.char_pos, 5);
}

#[test]
fn too_many_conditions_is_an_error() {
    let many = vec!["pod='a'"; MAX_CONDITIONS + 1].join(" AND ");
    assert!(parse(&many).is_err());
    let ok = vec!["pod='a'"; MAX_CONDITIONS].join(" AND ");
    assert!(parse(&ok).is_ok());
}

#[test]
fn tag_filter_rows_render_with_escaped_quotes() {
    let rows = [
        TagCondition {
            name: "pod".into(),
            value: "web-1".into(),
            negated: false,
        },
        TagCondition {
            name: " ".into(),
            value: "ignored".into(),
            negated: false,
        },
        TagCondition {
            name: "pod_ns".into(),
            value: r"team-o'brien\x".into(),
            negated: true,
        },
    ];
    assert_eq!(
        render_tag_filter(&rows),
        r"pod='web-1' AND pod_ns!='team-o\'brien\\x'"
    );
    assert_eq!(render_tag_filter(&[]), "");
}

/// Whatever the builder renders, the service's parser reads back as the same conditions.
#[test]
fn rendered_rows_parse_back_to_the_same_conditions() {
    let names = ["pod", "host_ip", "k8s.label.app", "cloud.tag.team", "vtap"];
    let values = [
        "",
        "web-1",
        "o'brien",
        r"back\slash",
        r"\'",
        "' OR 1=1 --",
        "ünï ; AND x='y'",
        "''",
    ];
    let mut rows = Vec::new();
    for (i, value) in values.iter().enumerate() {
        rows.push(TagCondition {
            name: names[i % names.len()].into(),
            value: (*value).into(),
            negated: i % 2 == 1,
        });
    }
    let parsed = parse(&render_tag_filter(&rows)).expect("rendered filters parse");
    assert_eq!(parsed.conditions.len(), rows.len());
    for (row, c) in rows.iter().zip(&parsed.conditions) {
        let canonical = if row.name == "vtap" {
            "agent"
        } else {
            &row.name
        };
        assert_eq!(c.field.name(), canonical);
        assert_eq!(c.op, if row.negated { Op::Ne } else { Op::Eq });
        assert_eq!(c.values, vec![text(&row.value)]);
    }
}

/// Fuzz regression (target `tag_filter_render`): open-family keys that are not one bare
/// word were written bare, so they failed to parse or, worse, parsed as other conditions. Keys
/// are now the Kubernetes key charset: such names are written in backticks and refused by the
/// field table, naming the problem, never read as other conditions.
#[test]
fn names_outside_the_key_charset_fail_loudly() {
    for name in [
        "k8s.label.a b",
        "cloud.tag.\u{1a}",
        "k8s.env.x='1' AND pod",
        "k8s.label.é",
        "k8s.label.a\\",
    ] {
        let row = TagCondition {
            name: name.into(),
            value: "v".into(),
            negated: false,
        };
        let e = parse(&render_tag_filter(&[row])).expect_err(name);
        assert!(e.message.contains("key may hold only"), "{name}: {e}");
    }
}

/// Every name the field table resolves is written the same way in both dialects' readers:
/// the filter grammar reads it back, and in SQL it is bare or a backtick identifier of the
/// key charset (no backslash, quote or backtick inside).
#[test]
fn every_resolvable_name_renders_in_both_dialects() {
    let names = crate::contract::fields::offered_names()
        .into_iter()
        .map(|n| {
            if n.ends_with('.') {
                format!("{n}example.com/a-b_c.d")
            } else {
                n
            }
        });
    for name in names {
        let field = crate::contract::fields::resolve(&name).expect("offered names resolve");
        let filter_name = render_name(field.name(), Dialect::TagFilter).expect("filter name");
        assert_eq!(filter_name, field.name(), "a valid name is one bare word");
        let sql = render_name(field.name(), Dialect::Sql).expect("sql name");
        let inner = sql
            .strip_prefix('`')
            .and_then(|s| s.strip_suffix('`'))
            .unwrap_or(&sql);
        assert_eq!(inner, field.name());
        assert!(!inner.contains(['`', '\\', '\'']), "{sql}");
        assert_eq!(
            sql.starts_with('`'),
            field.name().contains(['.', '/', '-']),
            "{sql}"
        );
    }
    for bad in ["a`b", "k8s.label.a\\", "k8s.label.a b", ""] {
        assert!(render_name(bad, Dialect::Sql).is_err(), "{bad:?}");
    }
    assert!(render_name("a`b", Dialect::TagFilter).is_err());
}

/// The typed renderer writes what the parser read, in either dialect; only names differ.
#[test]
fn parsed_conditions_render_in_both_dialects() {
    let f =
        parse(r"vtap!='a\\b' AND k8s.label.app IN ('x','y''z') AND is_ipv4=1 AND pod NOT IN ('p')")
            .unwrap();
    assert_eq!(
        render_conditions(&f, Dialect::Sql).unwrap(),
        r"agent!='a\\b' AND `k8s.label.app` IN ('x', 'y\'z') AND is_ipv4=1 AND pod NOT IN ('p')"
    );
    let text = render_conditions(&f, Dialect::TagFilter).unwrap();
    assert_eq!(
        text,
        r"agent!='a\\b' AND k8s.label.app IN ('x', 'y\'z') AND is_ipv4=1 AND pod NOT IN ('p')"
    );
    assert_eq!(parse(&text).unwrap(), f);
}

/// A name with a backtick cannot be written; it must fail rather than read back as
/// something else (here `k8s.label.a='1' AND pod='v'` once quoted naively).
#[test]
fn a_name_with_a_backtick_makes_the_filter_fail() {
    for name in ["k8s.label.a`='1' AND `pod", "pod='1' AND `k8s.label.z`"] {
        let row = TagCondition {
            name: name.into(),
            value: "v".into(),
            negated: false,
        };
        assert!(parse(&render_tag_filter(&[row])).is_err(), "{name}");
    }
}

/// Every tag name the viewer's builder offers is one the service accepts, with a value of
/// the field's own type (the server's HTTP test sends the same filters end to end).
#[test]
fn every_offered_tag_is_accepted() {
    use crate::contract::fields::{offered_names, resolve, FieldKind};
    for name in offered_names() {
        let name = if name.ends_with('.') {
            format!("{name}app")
        } else {
            name
        };
        let kind = resolve(&name)
            .map(|f| f.kind())
            .expect("offered names resolve");
        let value = match kind {
            FieldKind::Int => "1",
            FieldKind::Text => "x",
        };
        let row = TagCondition {
            name: name.clone(),
            value: value.into(),
            negated: false,
        };
        let parsed = parse(&render_tag_filter(&[row])).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = match kind {
            FieldKind::Int => Value::Int(1),
            FieldKind::Text => text("x"),
        };
        assert_eq!(parsed.conditions[0].values, vec![want], "{name}");
    }
}
