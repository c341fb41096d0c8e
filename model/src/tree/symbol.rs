//! The structure of a function name: its kind prefix (`[l] `), its top-level segments (the
//! package path, namespaces, class or receiver, and the function's own name last) and its
//! package. Real names are Go import paths (`github.com/x/y.(*T).M`), C++ and Rust paths with
//! template arguments and parameter lists (`std::vector<int>::push_back(int const&)`,
//! `<tokio::…::BlockingTask<T> as core::future::Future>::poll`), Java packages and lambdas
//! (`com.example.Foo.lambda$run$0`) and plain C symbols (`epoll_wait`, `__schedule.part.0`).
//!
//! Names are untrusted text: scanning is one pass over the bytes, never recurses, and tolerates
//! unbalanced brackets (depth never goes below zero). Every delimiter is ASCII, so byte offsets
//! are always character boundaries.

/// One top-level segment of a name body: `body[start..end]`, without its separator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// The separator that follows it (`None` for the last).
    pub sep: Sep,
}

/// What separates two segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sep {
    /// Nothing: the last segment.
    None,
    /// `::` (C++, Rust).
    Colons,
    /// `.` (Java, Go, Python).
    Dot,
    /// `/` (Go import paths).
    Slash,
}

impl Sep {
    /// The separator's text.
    pub fn text(self) -> &'static str {
        match self {
            Sep::None => "",
            Sep::Colons => "::",
            Sep::Dot => ".",
            Sep::Slash => "/",
        }
    }
}

/// Length of a `[x] ` kind prefix at the start of a frame name, else 0.
pub fn kind_prefix_len(name: &str) -> usize {
    let b = name.as_bytes();
    if b.len() > 4 && b[0] == b'[' && b[2] == b']' && b[3] == b' ' {
        4
    } else {
        0
    }
}

/// GCC's clone suffixes (`f.isra.0`, `f.cold`) and Go's ABI wrappers (`runtime.usleep.abi0`): a
/// `.` before them is not a separator.
const CLONE_SUFFIXES: [&str; 8] = [
    "abi0",
    "isra",
    "constprop",
    "part",
    "cold",
    "lto_priv",
    "llvm",
    "localalias",
];

/// Characters of an operator's symbol after the keyword `operator` (`operator<<`, `operator[]`).
const OPERATOR_CHARS: &[u8] = b"<>=!+-*/%^&|~,[]";

/// What one byte of a name is to the bracket structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `(`, `<`, `[` or `{`; the depth is the one outside it.
    Open,
    /// The matching closer; the depth is the one outside it again.
    Close,
    /// Anything else, including an operator's symbol (`operator<<`) and an arrow (`->`).
    Text,
}

/// Walks a name's bytes with their bracket depth: `(index, byte, depth, role)`. Operator symbols
/// after the keyword `operator` and the `>` of `->` are text, not brackets; a closer without an
/// opener leaves the depth at zero.
pub fn walk(body: &str) -> impl Iterator<Item = (usize, u8, u32, Role)> + '_ {
    let b = body.as_bytes();
    let (mut depth, mut literal_until, mut i) = (0u32, 0usize, 0usize);
    std::iter::from_fn(move || {
        let c = *b.get(i)?;
        let at = i;
        i += 1;
        if at < literal_until {
            return Some((at, c, depth, Role::Text));
        }
        if depth == 0 && ends_with_operator_keyword(&b[..at]) {
            literal_until = at + operator_symbol_len(&b[at..]);
            if at < literal_until {
                return Some((at, c, depth, Role::Text));
            }
        }
        Some(match c {
            b'(' | b'<' | b'[' | b'{' => {
                depth += 1;
                (at, c, depth - 1, Role::Open)
            }
            b'>' if at > 0 && b[at - 1] == b'-' => (at, c, depth, Role::Text),
            b')' | b'>' | b']' | b'}' if depth > 0 => {
                depth -= 1;
                (at, c, depth, Role::Close)
            }
            _ => (at, c, depth, Role::Text),
        })
    })
}

/// The top-level segments of a name body (the name without its kind prefix), in order.
pub fn segments(body: &str) -> Vec<Segment> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut start = 0usize;
    for (i, c, depth, role) in walk(body) {
        if depth > 0 || role != Role::Text || i < start {
            continue;
        }
        let sep = match c {
            b':' if b.get(i + 1) == Some(&b':') => Sep::Colons,
            b'.' if is_separating_dot(b, i) => Sep::Dot,
            b'/' if !b[i + 1..].starts_with(b"0x") && i > start => Sep::Slash,
            _ => continue,
        };
        out.push(Segment { start, end: i, sep });
        start = i + sep.text().len();
    }
    out.push(Segment {
        start: start.min(b.len()),
        end: b.len(),
        sep: Sep::None,
    });
    out
}

/// A `.` separates unless it starts a clone suffix, a number or an ellipsis, or ends the name.
fn is_separating_dot(b: &[u8], i: usize) -> bool {
    let rest = &b[i + 1..];
    let Some(&next) = rest.first() else {
        return false;
    };
    if next == b'.' || next.is_ascii_digit() || (i > 0 && b[i - 1] == b'.') {
        return false;
    }
    !CLONE_SUFFIXES.iter().any(|s| {
        rest.starts_with(s.as_bytes())
            && rest
                .get(s.len())
                .is_none_or(|&c| c == b'.' || c == b' ' || c == b'_')
    })
}

fn ends_with_operator_keyword(before: &[u8]) -> bool {
    before.ends_with(b"operator")
        && before
            .len()
            .checked_sub(9)
            .is_none_or(|j| !(before[j].is_ascii_alphanumeric() || before[j] == b'_'))
}

fn operator_symbol_len(rest: &[u8]) -> usize {
    if rest.starts_with(b"()") {
        return 2;
    }
    if rest.first() == Some(&b' ') {
        return 1;
    }
    rest.iter()
        .take_while(|c| OPERATOR_CHARS.contains(c))
        .count()
}

/// The body without a leading return type: JVM perf maps write `java.lang.Object
/// java.util.concurrent.LinkedBlockingQueue.take()`, some demanglers `void f(int)`. A return
/// type is what comes before the last space outside brackets ahead of the parameter list.
pub fn strip_return_type(body: &str) -> &str {
    if body.starts_with('[') {
        return body;
    }
    let mut cut = None;
    for (i, c, depth, role) in walk(body) {
        match c {
            // Only ahead of a parameter list: `GC Thread#0` has no return type.
            b'(' if depth == 0 && role == Role::Open => return cut.map_or(body, |i| &body[i..]),
            b' ' if depth == 0 && i > 0 && !body[..i].ends_with("operator") => cut = Some(i + 1),
            _ => {}
        }
    }
    body
}

/// The body without its parameter list (the first bracket group `(` inside the last segment,
/// and whatever follows it, such as ` const`).
pub fn strip_params(body: &str) -> &str {
    let last = segments(body).last().map_or(0, |s| s.start);
    walk(body)
        .find(|&(i, c, depth, role)| i > last && c == b'(' && depth == 0 && role == Role::Open)
        .map_or(body, |(i, ..)| &body[..i])
}

/// The qualified function a name stands for: without kind prefix, return type and parameters
/// (`[l] void a.B.c(int)` → `a.B.c`).
pub fn function_path(name: &str) -> &str {
    strip_params(strip_return_type(&name[kind_prefix_len(name)..]))
}

/// The package (or namespace) of a frame name, as a slice of it, when the name has one:
/// the top-level namespace of a C++/Rust path when it is lower-case (`std`, `boost`, `tokio`;
/// a capitalised first segment is a class at global scope, not a namespace), the import path
/// of a Go name (`github.com/x/y`, `runtime`), the package of a Java name (the segments before
/// the class: `java.util.concurrent`), the first type's package in a Rust `<T as Trait>::f`,
/// and the file of an unresolved `[/path/lib.so]` frame. `None` for plain C symbols, threads,
/// processes and names whose first segment is a class.
pub fn package_of(name: &str) -> Option<&str> {
    if name.starts_with("[t] ") || name.starts_with("[p] ") {
        return None;
    }
    let body = strip_return_type(&name[kind_prefix_len(name)..]);
    let offset = name.len() - body.len();
    if let Some(inner) = body.strip_prefix('[') {
        let path = inner.split(']').next().filter(|p| !p.is_empty())?;
        return Some(&name[offset + 1..offset + 1 + path.len()]);
    }
    if let Some(inner) = body.strip_prefix('<') {
        let first = qualified_self_type(inner);
        let package = package_of_body(first)?;
        return Some(&name[offset + 1..offset + 1 + package.len()]);
    }
    package_of_body(body).map(|p| &name[offset..offset + p.len()])
}

/// `A` of `A as B>::f` or `A>::f`: the type a Rust qualified path is about.
fn qualified_self_type(inner: &str) -> &str {
    for (i, c, depth, role) in walk(inner) {
        let ends = match c {
            b'>' => role == Role::Text && depth == 0,
            b' ' => depth == 0 && inner[i..].starts_with(" as "),
            _ => false,
        };
        if ends {
            return &inner[..i];
        }
    }
    inner
}

/// The package at the start of `body` (a prefix of it).
fn package_of_body(body: &str) -> Option<&str> {
    let segs = segments(body);
    if segs.len() < 2 {
        return None;
    }
    let text = |s: &Segment| &body[s.start..s.end];
    let starts_lower = |s: &Segment| {
        text(s)
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == b'_')
    };
    if segs.iter().any(|s| s.sep == Sep::Colons) {
        let first = &segs[0];
        return (first.sep == Sep::Colons && starts_lower(first)).then(|| text(first));
    }
    if let Some(last_slash) = segs.iter().rposition(|s| s.sep == Sep::Slash) {
        // Go: the import path, and the package name after its last slash.
        let package = segs.get(last_slash + 1)?;
        return Some(&body[..package.end]);
    }
    // Dotted: the segments before the first class or receiver (Java `com.x.Foo.run`, Go
    // `main.(*T).m`); all lower-case (Go `runtime.gopark`, `main.main.func1`): the first.
    let first_type = segs[..segs.len() - 1].iter().position(|s| !starts_lower(s));
    match first_type {
        Some(0) => None,
        Some(k) => Some(&body[..segs[k - 1].end]),
        None => starts_lower(&segs[0]).then(|| text(&segs[0])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(body: &str) -> Vec<&str> {
        segments(body)
            .iter()
            .map(|s| &body[s.start..s.end])
            .collect()
    }

    #[test]
    fn segments_split_at_top_level_separators_only() {
        assert_eq!(
            texts("std::vector<std::string, std::allocator<int>>::push_back(int const&)"),
            [
                "std",
                "vector<std::string, std::allocator<int>>",
                "push_back(int const&)"
            ]
        );
        assert_eq!(
            texts("github.com/prometheus/client_golang/prometheus.(*Registry).Gather"),
            [
                "github",
                "com",
                "prometheus",
                "client_golang",
                "prometheus",
                "(*Registry)",
                "Gather"
            ]
        );
        assert_eq!(
            texts("com.example.Foo$$Lambda$14/0x0000000800c0b000.run"),
            ["com", "example", "Foo$$Lambda$14/0x0000000800c0b000", "run"]
        );
        assert_eq!(texts("__schedule.part.0"), ["__schedule.part.0"]);
        assert_eq!(texts("ext4_sync_file.cold"), ["ext4_sync_file.cold"]);
        assert_eq!(
            texts("std::ostream::operator<<(int)"),
            ["std", "ostream", "operator<<(int)"]
        );
        assert_eq!(
            texts("Foo::operator()() const"),
            ["Foo", "operator()() const"]
        );
        assert_eq!(
            texts("f(std::function<void ()>, int (*)(a->b))"),
            ["f(std::function<void ()>, int (*)(a->b))"]
        );
        assert_eq!(texts("epoll_wait"), ["epoll_wait"]);
        assert_eq!(texts(""), [""]);
    }

    #[test]
    fn unbalanced_names_never_panic() {
        for name in [
            ")))::a", "<<<", "a::", "::", "a.", "operator", ">::>", "a/0x", "/",
        ] {
            let segs = segments(name);
            assert!(segs.iter().all(|s| s.start <= s.end && s.end <= name.len()));
            let _ = package_of(name);
        }
    }

    #[test]
    fn function_paths_leave_out_return_types_and_parameters() {
        let cases = [
            (
                "void jdk.internal.misc.Unsafe.park(boolean, long)",
                "jdk.internal.misc.Unsafe.park",
            ),
            ("[l] Unsafe_Park", "Unsafe_Park"),
            (
                "std::ostream::operator<<(int) const",
                "std::ostream::operator<<",
            ),
            ("Foo::operator()() const", "Foo::operator()"),
            ("operator new(unsigned long)", "operator new"),
            (
                "(anonymous namespace)::run(int)",
                "(anonymous namespace)::run",
            ),
            ("main.(*server).handle", "main.(*server).handle"),
            ("[unknown] 0x7f12", "[unknown] 0x7f12"),
            ("GC Thread#0", "GC Thread#0"),
            ("[/usr/lib/libssl.so.3]", "[/usr/lib/libssl.so.3]"),
        ];
        for (name, want) in cases {
            assert_eq!(function_path(name), want, "{name}");
        }
    }

    #[test]
    fn packages_of_real_names() {
        let cases = [
            ("[l] epoll_wait", None),
            ("__libc_start_main", None),
            ("[k] __schedule.part.0", None),
            ("[t] tokio-runtime-w", None),
            ("std::vector<int>::push_back(int const&)", Some("std")),
            ("boost::asio::detail::scheduler::run", Some("boost")),
            ("JavaThread::thread_main_inner", None),
            (
                "tokio::runtime::task::harness::Harness<T,S>::poll",
                Some("tokio"),
            ),
            (
                "<tokio::runtime::blocking::task::BlockingTask<T> as core::future::future::Future>::poll",
                Some("tokio"),
            ),
            ("runtime.gopark", Some("runtime")),
            ("main.main.func1", Some("main")),
            ("main.(*server).handle", Some("main")),
            ("net/http.(*conn).serve", Some("net/http")),
            (
                "github.com/prometheus/client_golang/prometheus.(*Registry).Gather",
                Some("github.com/prometheus/client_golang/prometheus"),
            ),
            (
                "java.util.concurrent.ThreadPoolExecutor.getTask",
                Some("java.util.concurrent"),
            ),
            (
                "com.example.Foo$$Lambda$14/0x0000000800c0b000.run",
                Some("com.example"),
            ),
            ("[/usr/lib/x86_64-linux-gnu/libssl.so.3]", Some("/usr/lib/x86_64-linux-gnu/libssl.so.3")),
            ("(anonymous namespace)::Worker::run", None),
            (
                "java.lang.Object java.util.concurrent.LinkedBlockingQueue.take()",
                Some("java.util.concurrent"),
            ),
            ("void Idle.lambda$main$4()", None),
        ];
        for (name, want) in cases {
            assert_eq!(package_of(name), want, "{name}");
        }
    }
}
