//! Parser for the ProfileTracing `tag_filter` string.
//!
//! DeepFlow pastes this string into SQL; Embers parses it with a small grammar into typed
//! [`Condition`]s, which a store turns into SQL with bound parameters. The text of the filter
//! never becomes SQL text. The viewer's builder writes filters with [`render_tag_filter`], which
//! this parser reads back (tested both ways).
//!
//! Grammar (keywords case-insensitive, whitespace free between tokens):
//! ```text
//! filter    := [ condition { AND condition } ]
//! condition := name op operand
//! name      := ident | '`' any-but-backtick '`'      ident: [A-Za-z_][A-Za-z0-9_.:/-]*
//! op        := '=' | '!=' | '<>' | IN | NOT IN
//! operand   := value                                 (for = and !=)
//!            | '(' value { ',' value } ')'           (for IN and NOT IN)
//! value     := '\'' { char | '\'\'' | '\\\'' | '\\\\' } '\''  |  integer
//! ```
//! Names come from the seed's field table ([`crate::contract::fields`]), `vtap` is an alias of `agent`, and
//! `k8s.label.*`, `k8s.annotation.*`, `k8s.env.*`, `cloud.tag.*` are open families.

mod lex;
mod parser;

use thiserror::Error;

use crate::contract::fields::FieldRef;

/// Most conditions one filter may hold.
pub const MAX_CONDITIONS: usize = 64;
/// Most values one `IN (...)` list may hold.
pub const MAX_IN_VALUES: usize = 1000;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `!=` or `<>`
    Ne,
    /// `IN (...)`
    In,
    /// `NOT IN (...)`
    NotIn,
}

/// A typed literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Text, quotes unescaped.
    Text(String),
    /// Integer (for [`crate::contract::fields::FieldKind::Int`] fields).
    Int(i64),
}

/// One `name op value` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The resolved field.
    pub field: FieldRef,
    /// The operator.
    pub op: Op,
    /// One value for `=`/`!=`, one or more for `IN`/`NOT IN`; typed after the field.
    pub values: Vec<Value>,
}

/// A parsed filter: all conditions must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagFilter {
    /// The conditions, in source order.
    pub conditions: Vec<Condition>,
}

/// A syntax or name error, with its position in the filter text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "invalid tag_filter at character {char_pos} (byte {byte_pos}): {message}{}",
    near_text(.near)
)]
pub struct ParseError {
    /// 1-based character (Unicode scalar) position of the offending token.
    pub char_pos: usize,
    /// 0-based byte offset of the offending token.
    pub byte_pos: usize,
    /// What went wrong.
    pub message: String,
    /// Up to 20 characters of the filter from the offending position.
    pub near: String,
}

fn near_text(near: &str) -> String {
    if near.is_empty() {
        " (at end of input)".to_owned()
    } else {
        format!(" (near \"{near}\")")
    }
}

/// Parse a filter; an empty or blank string gives no conditions.
pub fn parse(input: &str) -> Result<TagFilter, ParseError> {
    let tokens = lex::lex(input)?;
    parser::Parser {
        input,
        tokens,
        pos: 0,
    }
    .filter()
}

/// One `name = 'value'` row of the tag-filter builder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagCondition {
    /// Tag name, e.g. `pod` or `k8s.label.app`.
    pub name: String,
    /// Raw value; quoting is applied by [`render_tag_filter`].
    pub value: String,
    /// `!=` instead of `=`.
    pub negated: bool,
}

/// Quotes a value for a tag filter: single quotes, with `\` and `'` escaped by a backslash
/// (what both ClickHouse and [`parse`] read).
pub fn quote_tag_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// Renders builder rows as `name='value' AND ...`, skipping rows without a name.
pub fn render_tag_filter(rows: &[TagCondition]) -> String {
    rows.iter()
        .filter(|r| !r.name.trim().is_empty())
        .map(|r| {
            format!(
                "{}{}{}",
                r.name.trim(),
                if r.negated { "!=" } else { "=" },
                quote_tag_value(&r.value)
            )
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

#[cfg(test)]
mod tests {
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

    /// Every tag name the viewer's builder offers is one the service accepts.
    #[test]
    fn every_offered_tag_is_accepted() {
        for name in crate::contract::fields::offered_names() {
            let name = if name.ends_with('.') {
                format!("{name}app")
            } else {
                name
            };
            let value = if matches!(
                name.as_str(),
                "_id" | "time" | "is_ipv4" | "profile_create_timestamp" | "profile_in_timestamp"
            ) {
                "1"
            } else {
                "x"
            };
            let row = TagCondition {
                name: name.clone(),
                value: value.into(),
                negated: false,
            };
            assert!(parse(&render_tag_filter(&[row])).is_ok(), "{name}");
        }
    }
}
