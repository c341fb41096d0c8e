//! Long function names made to fit: what a label, a table cell or a breadcrumb shows when the
//! whole name does not fit. The function's own name (the last segment) is what identifies a
//! frame, so it is kept and the rest gives way first, in this order:
//!
//! 1. the return type, parameter lists (`(…)`), Go's ABI and Rust's hash suffixes, the address
//!    of a Java hidden class (`$$Lambda$3/0x…`);
//! 2. template and generic arguments (`<…>`, `[…]`); a Rust `<T as Trait>` keeps both names;
//! 3. the package path and namespaces from the front (`…concurrent.ThreadPoolExecutor.getTask`),
//!    down to the owner (class, receiver) and the function;
//! 4. the owner (`…getTask`);
//! 5. only then the function's own name, cut at its end as before (led by `…` when something
//!    was left out in front of it).
//!
//! The kind prefix (`[l] `) always stays. Pure and allocation-light; golden-tested on real
//! names (`tests/names.rs`).

use std::borrow::Cow;

use crate::tree::symbol::{kind_prefix_len, segments, strip_return_type, walk, Role, Segment, Sep};
use crate::view::format::elide;

/// The ellipsis that stands for what was left out.
const ELLIPSIS: char = '…';

/// `name` shortened to at most `max_chars` characters as the module docs describe; `None` when
/// not even a few characters of the function's own name fit.
pub fn shorten(name: &str, max_chars: usize) -> Option<Cow<'_, str>> {
    if name.chars().count() <= max_chars {
        return Some(Cow::Borrowed(name));
    }
    // Threads and processes are names people gave, not paths: cut at the end.
    if name.starts_with("[t] ") || name.starts_with("[p] ") {
        return elide(name, max_chars);
    }
    let prefix_len = kind_prefix_len(name);
    let (prefix, body) = name.split_at(prefix_len);
    let room = max_chars.saturating_sub(prefix_len);
    let fits = |s: &str| s.chars().count() <= room;
    let with_prefix = |s: String| Some(Cow::Owned(format!("{prefix}{s}")));
    if body.starts_with('[') {
        return unresolved(body)
            .filter(|s| fits(s))
            .map_or_else(|| elide(name, max_chars), with_prefix);
    }
    let parts = Compact::new(body);
    for level in [Level::Noise, Level::Arguments] {
        let form = parts.join(level, 0);
        if fits(&form) {
            return with_prefix(form);
        }
    }
    let own = parts.own_start();
    for from in 1..=own {
        let form = format!("{ELLIPSIS}{}", parts.join(Level::Arguments, from));
        if fits(&form) {
            return with_prefix(form);
        }
    }
    parts.cut_own(prefix, max_chars)
}

/// `[/usr/lib/x86_64-linux-gnu/libssl.so.3]` → `[…/libssl.so.3]`.
fn unresolved(body: &str) -> Option<String> {
    let inner = body.strip_prefix('[')?.strip_suffix(']')?;
    let (_, file) = inner.rsplit_once('/')?;
    Some(format!("[{ELLIPSIS}/{file}]"))
}

/// How much of each segment is left out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// Parameter lists and suffixes.
    Noise,
    /// And template or generic arguments.
    Arguments,
}

/// A name's segments at both levels, ready to join from any segment on.
struct Compact {
    /// Per segment: (at [`Level::Noise`], at [`Level::Arguments`], separator after it).
    segments: Vec<(String, String, &'static str)>,
}

impl Compact {
    fn new(body: &str) -> Compact {
        let body = strip_return_type(body);
        let mut segs: Vec<Segment> = segments(body);
        // A Rust symbol hash (`::h0123456789abcdef`) is not the function's name.
        if segs.len() > 1
            && segs
                .last()
                .is_some_and(|s| is_rust_hash(&body[s.start..s.end]))
        {
            segs.pop();
            if let Some(last) = segs.last_mut() {
                last.sep = Sep::None;
            }
        }
        let segments = segs
            .iter()
            .map(|s| {
                let text = &body[s.start..s.end];
                let noise = collapse(text, b"(");
                let noise = strip_noise(&noise);
                let args = if noise.starts_with('<') {
                    qualified(&noise)
                } else {
                    without_qualifiers(collapse(&noise, b"<["))
                };
                (noise, args, s.sep.text())
            })
            .collect();
        Compact { segments }
    }

    /// Where the function's own name starts: the last segment, or the last two when the last
    /// is a closure of the one before (`Serve.func1`, `run::{{closure}}`).
    fn own_start(&self) -> usize {
        let last = self.segments.len().saturating_sub(1);
        match self.segments.get(last) {
            Some((noise, ..)) if last > 0 && is_closure(noise) => last - 1,
            _ => last,
        }
    }

    /// The own name alone, cut to fit: at its end, or before the closure it ends with
    /// (`…startBackgr….func1`); led by `…` when a package or owner was left out before it.
    fn cut_own(&self, prefix: &str, max_chars: usize) -> Option<Cow<'static, str>> {
        let own = self.own_start();
        let lead = if own > 0 { "…" } else { "" };
        let prefix = format!("{prefix}{lead}");
        let whole = format!("{prefix}{}", self.join(Level::Arguments, own));
        let Some((_, owner, sep)) = self
            .segments
            .get(own)
            .filter(|_| own + 1 < self.segments.len())
        else {
            return elide(&whole, max_chars).map(|s| Cow::Owned(s.into_owned()));
        };
        let tail = format!("{sep}{}", self.join(Level::Arguments, own + 1));
        let room = max_chars.saturating_sub(tail.chars().count());
        match elide(&format!("{prefix}{owner}"), room) {
            Some(head) => Some(Cow::Owned(format!("{head}{tail}"))),
            None => elide(&whole, max_chars).map(|s| Cow::Owned(s.into_owned())),
        }
    }

    /// The segments from `from` on, at `level`, with their separators.
    fn join(&self, level: Level, from: usize) -> String {
        let mut out = String::new();
        for (noise, args, sep) in &self.segments[from.min(self.segments.len())..] {
            out.push_str(if level == Level::Noise { noise } else { args });
            out.push_str(sep);
        }
        out
    }
}

/// A closure's segment: Go's `func1` (`func1.2`, `gowrap1`), Rust's `{{closure}}` and
/// `{closure#0}`, C++'s `{lambda(int)#1}`.
fn is_closure(segment: &str) -> bool {
    let numbered = |word: &str| {
        segment
            .strip_prefix(word)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit() || c == b'.'))
    };
    numbered("func")
        || numbered("gowrap")
        || segment.starts_with("{{closure")
        || segment.starts_with("{closure")
        || segment.starts_with("{lambda")
}

/// `f(…) const` → `f(…)`: a method's qualifiers after its parameter list (` const`, ` &&`,
/// ` volatile`) say little once the parameters are left out.
fn without_qualifiers(segment: String) -> String {
    match segment.rfind(')') {
        Some(i)
            if segment[i + 1..]
                .bytes()
                .all(|c| c.is_ascii_alphabetic() || c == b' ' || c == b'&') =>
        {
            segment[..=i].to_string()
        }
        _ => segment,
    }
}

fn is_rust_hash(s: &str) -> bool {
    s.len() == 17 && s.starts_with('h') && s[1..].bytes().all(|c| c.is_ascii_hexdigit())
}

/// A segment without suffixes that say nothing to a reader: Go's `.abi0`, GCC's clone
/// suffixes, a symbol version, a hidden class's address.
fn strip_noise(segment: &str) -> String {
    let mut s = segment.split('@').next().unwrap_or(segment);
    for suffix in [".abi0", ".cold"] {
        s = s.strip_suffix(suffix).unwrap_or(s);
    }
    match s.find("/0x") {
        Some(i) => {
            let end = s[i + 3..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .map_or(s.len(), |j| i + 3 + j);
            format!("{}{}", &s[..i], &s[end..])
        }
        None => s.to_string(),
    }
}

/// `text` with the contents of its top-level bracket groups opened by one of `openers` replaced
/// by `…` — except a group the text starts with (a Go receiver, an anonymous namespace).
fn collapse(text: &str, openers: &[u8]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut open_at = None;
    for (i, c, depth, role) in walk(text) {
        match role {
            Role::Open if depth == 0 && i > 0 && openers.contains(&c) => open_at = Some(i),
            Role::Close if depth == 0 => {
                if let Some(start) = open_at.take() {
                    out.push_str(&text[copied..=start]);
                    if i > start + 1 {
                        out.push(ELLIPSIS);
                    }
                    copied = i;
                }
            }
            _ => {}
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// A Rust qualified path `<A as B>` as `<A' as B'>`: each type's own name with its arguments
/// collapsed (`<BlockingTask<…> as Future>`).
fn qualified(segment: &str) -> String {
    let inner = segment
        .strip_prefix('<')
        .and_then(|s| s.strip_suffix('>'))
        .unwrap_or(segment);
    let own = |path: &str| {
        let segs = segments(path);
        let last = segs.last().map_or(path, |s| &path[s.start..s.end]);
        collapse(last, b"<[")
    };
    if let Some(body) = inner.strip_prefix("impl ") {
        if let Some((a, b)) = split_word(body, " for ") {
            return format!("<impl {} for {}>", own(a), own(b));
        }
    }
    match split_word(inner, " as ") {
        Some((a, b)) => format!("<{} as {}>", own(a), own(b)),
        None => format!("<{}>", own(inner)),
    }
}

/// `inner` split at `word` (` as `, ` for `) outside brackets.
fn split_word<'a>(inner: &'a str, word: &str) -> Option<(&'a str, &'a str)> {
    walk(inner)
        .find(|&(i, c, depth, _)| c == b' ' && depth == 0 && inner[i..].starts_with(word))
        .map(|(i, ..)| (&inner[..i], &inner[i + word.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, max: usize) -> String {
        shorten(name, max).map(Cow::into_owned).unwrap_or_default()
    }

    #[test]
    fn the_own_name_outlives_packages_arguments_and_parameters() {
        let java = "java.lang.Object java.util.concurrent.LinkedBlockingQueue.take()";
        assert_eq!(s(java, 80), java);
        assert_eq!(
            s(java, 50),
            "java.util.concurrent.LinkedBlockingQueue.take()"
        );
        assert_eq!(s(java, 40), "…concurrent.LinkedBlockingQueue.take()");
        assert_eq!(s(java, 30), "…LinkedBlockingQueue.take()");
        assert_eq!(s(java, 10), "…take()");
        let cpp = "std::vector<int, std::allocator<int> >::push_back(int const&)";
        assert_eq!(s(cpp, 40), "std::vector<…>::push_back(…)");
    }

    #[test]
    fn every_result_fits() {
        let names = [
            "[l] std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::assign(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)",
            "net/http.(*http2serverConn).processSettingInitialWindowSize",
            "<tokio::runtime::blocking::task::BlockingTask<T> as core::future::future::Future>::poll",
            "[/usr/lib/x86_64-linux-gnu/libssl.so.3]",
            "ngx_http_upstream_process_non_buffered_downstream",
            "a",
            "",
        ];
        for name in names {
            for max in 0..=name.chars().count() + 1 {
                if let Some(out) = shorten(name, max) {
                    assert!(out.chars().count() <= max, "{name} at {max}: {out}");
                }
            }
        }
    }
}
