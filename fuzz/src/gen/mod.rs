//! Structure-aware generators: `arbitrary` turns the fuzzer's bytes into a near-valid answer
//! (an envelope, a node array or tables, numbers and names of every awkward kind, then a few
//! byte edits), so mutations land in the decoders' deep code instead of dying at the first
//! brace. Each generator can render the same answer a second way that is equivalent JSON but
//! forces the serde fallbacks (escaped keys, rows too wide for the integer scanner), which gives
//! a differential check of every fast reader against its fallback.

pub mod otlp;
pub mod shape_a;
pub mod shape_b;
pub mod tags;

use std::fmt::Write;

use arbitrary::Arbitrary;

/// A number as a server, a proxy or a hand-edited file might write it.
#[derive(Arbitrary, Debug, Clone)]
pub enum Num {
    Small(u8),
    Int(i64),
    /// Up to `u64::MAX`: past `i64::MAX` too.
    Unsigned(u64),
    Float(f64),
    /// `<mantissa>e<exponent>`, e.g. `5e-3` or `1e400` (out of f64 range).
    Exp(i8, i16),
    /// `007`: not JSON.
    LeadingZero(u8),
    NegZero,
    /// Twenty or more digits.
    Long(u8),
    /// A string where a number belongs.
    Quoted(u16),
    Null,
    /// Any token at all (usually breaks the JSON).
    Raw(String),
}

impl Num {
    /// Writes the number's JSON text.
    pub fn write(&self, out: &mut String) {
        let _ = match self {
            Num::Small(v) => write!(out, "{v}"),
            Num::Int(v) => write!(out, "{v}"),
            Num::Unsigned(v) => write!(out, "{v}"),
            Num::Float(v) if v.is_finite() => write!(out, "{v:?}"),
            Num::Float(_) => write!(out, "1e999"),
            Num::Exp(m, e) => write!(out, "{m}e{e}"),
            Num::LeadingZero(v) => write!(out, "0{v}"),
            Num::NegZero => write!(out, "-0"),
            Num::Long(n) => write!(out, "1{}", "0".repeat(19 + usize::from(*n % 32))),
            Num::Quoted(v) => write!(out, "\"{v}\""),
            Num::Null => write!(out, "null"),
            Num::Raw(s) => write!(out, "{}", raw_token(s)),
        };
    }
}

/// `s` without characters that could move a cell boundary or open a string (so both
/// renderings of an answer keep the same structure); `-` (not JSON) when nothing is left.
fn raw_token(s: &str) -> String {
    let token: String = s
        .chars()
        .filter(|c| !matches!(c, ',' | '[' | ']' | '{' | '}' | '"' | '\\'))
        .collect();
    if token.trim().is_empty() {
        "-".to_string()
    } else {
        token
    }
}

/// Frame names the decoders treat specially, plus hard cases for escaping and ordering.
const NAMES: &[&str] = &[
    "Total",
    "main",
    "[t] worker-1",
    "[p] redis-server",
    "[k] schedule",
    "[l] libc.so.6",
    "[c] cudaLaunch",
    "[unknown] 0x7f12",
    "[/usr/lib/libfoo.so]",
    "",
    "fib",
    "a;b",
    "x y",
    "tab\there",
    "quote\"back\\slash",
    "wéb-ü",
    "日本語",
    "💥",
    "\u{7f}",
    "nul\u{0}byte",
];

/// A frame name.
#[derive(Arbitrary, Debug, Clone)]
pub enum Name {
    Known(u8),
    Text(String),
    /// Written with every character as a `\u` escape (surrogate pairs above the BMP).
    Escaped(String),
    /// A lone surrogate escape: not a Unicode scalar, serde must refuse it.
    LoneSurrogate(u16),
}

impl Name {
    /// Writes the name as a JSON string.
    pub fn write(&self, out: &mut String) {
        match self {
            Name::Known(i) => string(out, NAMES[usize::from(*i) % NAMES.len()]),
            Name::Text(s) => string(out, s),
            Name::Escaped(s) => {
                out.push('"');
                for unit in s.encode_utf16() {
                    let _ = write!(out, "\\u{unit:04x}");
                }
                out.push('"');
            }
            Name::LoneSurrogate(v) => {
                let _ = write!(out, "\"x\\u{:04x}y\"", 0xd800 | (v & 0x7ff));
            }
        }
    }
}

/// Writes `s` as a JSON string (standard escapes).
pub fn string(out: &mut String, s: &str) {
    out.push_str(&serde_json::Value::from(s).to_string());
}

/// Writes `"key":`, the key plain or (`escaped`) with its last character as a `\u` escape,
/// which is the same key to a JSON parser but not to the one-pass readers.
pub fn key(out: &mut String, key: &str, escaped: bool) {
    out.push('"');
    match key.char_indices().last() {
        Some((i, c)) if escaped => {
            out.push_str(&key[..i]);
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        _ => out.push_str(key),
    }
    out.push_str("\":");
}

/// A byte edit applied after rendering (positions wrap around the text).
#[derive(Arbitrary, Debug, Clone)]
pub enum Edit {
    Truncate(u16),
    Insert(u16, u8),
    Delete(u16),
    Replace(u16, u8),
}

/// Applies `edits` to `bytes`.
pub fn apply_edits(bytes: &mut Vec<u8>, edits: &[Edit]) {
    for edit in edits {
        let at = |p: u16, len: usize| usize::from(p) % len.max(1);
        match *edit {
            Edit::Truncate(p) => bytes.truncate(at(p, bytes.len())),
            Edit::Insert(p, b) => bytes.insert(at(p, bytes.len() + 1), b),
            Edit::Delete(p) if !bytes.is_empty() => {
                bytes.remove(at(p, bytes.len()));
            }
            Edit::Replace(p, b) if !bytes.is_empty() => {
                let i = at(p, bytes.len());
                bytes[i] = b;
            }
            _ => {}
        }
    }
}

/// `OPT_STATUS` values.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Status {
    Success,
    Fail,
    Lowercase,
    /// `SUCCESS` with an escaped letter: the same string.
    Escaped,
    Null,
}

impl Status {
    fn write(self, out: &mut String) {
        out.push_str(match self {
            Status::Success => "\"SUCCESS\"",
            Status::Fail => "\"FAIL\"",
            Status::Lowercase => "\"success\"",
            Status::Escaped => "\"SUCCES\\u0053\"",
            Status::Null => "null",
        });
    }
}

/// The envelope around a result.
#[derive(Arbitrary, Debug, Clone)]
pub struct Envelope {
    /// `None`: no `OPT_STATUS` member.
    status: Option<Status>,
    /// A second `OPT_STATUS` member after the result.
    repeated_status: Option<Status>,
    description: Option<Name>,
    result_first: bool,
    /// A second `result` member (serde refuses duplicate members).
    repeated_result: bool,
    /// An unknown member with nested junk.
    debug: Option<Vec<Num>>,
    pretty: bool,
}

impl Envelope {
    /// Wraps the result text `result` (escaping keys when `escaped`).
    pub fn wrap(&self, result: &str, escaped: bool) -> String {
        let sep = if self.pretty { ",\n  " } else { "," };
        let mut members: Vec<String> = Vec::new();
        let member = |name: &str, value: &dyn Fn(&mut String)| {
            let mut m = String::new();
            key(&mut m, name, escaped);
            value(&mut m);
            m
        };
        if let Some(s) = self.status {
            members.push(member("OPT_STATUS", &|m| s.write(m)));
        }
        if let Some(d) = &self.description {
            members.push(member("DESCRIPTION", &|m| d.write(m)));
        }
        let result_member = member("result", &|m| m.push_str(result));
        if self.result_first {
            members.insert(0, result_member.clone());
        } else {
            members.push(result_member.clone());
        }
        if self.repeated_result {
            members.push(result_member);
        }
        if let Some(s) = self.repeated_status {
            members.push(member("OPT_STATUS", &|m| s.write(m)));
        }
        if let Some(junk) = &self.debug {
            members.push(member("debug", &|m| {
                m.push_str("{\"x\":[");
                for (i, n) in junk.iter().enumerate() {
                    if i > 0 {
                        m.push(',');
                    }
                    n.write(m);
                }
                m.push_str("],\"s\":\"]}\"}");
            }));
        }
        format!("{{{}}}", members.join(sep))
    }
}
