//! Names of frames and threads as Embers shows them: `package.Class.method` with the JVM's
//! slashes turned to dots (what Java stack traces, `jfr print` and Embers' name parsing in
//! `tree::symbol` use), generated classes merged into one name, kernel frames of
//! async-profiler marked `[k]`, threads as `[t] name` as DeepFlow's agent writes them. Names
//! are untrusted text: each is made safe to store as the pprof reader's are
//! ([`native::clean`]: no `;`, no control characters).

use super::values::{Chunk, Value};
use crate::contract::detail::SourceLine;
use crate::wire::native;

/// A class's name from the JVM's internal form: `java/util/HashMap$Node` →
/// `java.util.HashMap$Node`. Generated classes lose what each run numbers anew, or one lambda
/// would be a different frame in every process and after every restart: lambda classes end at
/// `$$Lambda` (JDK 17 records `Foo$$Lambda$88+0x00007fe9e8007a08.937773018`, JDK 21
/// `Foo$$Lambda/0x0000000800c03000`), other hidden classes lose their `+0x…` or `/0x…` address.
pub fn class_name(raw: &str) -> String {
    const LAMBDA: &str = "$$Lambda";
    if let Some(i) = raw.find(LAMBDA) {
        let rest = &raw[i + LAMBDA.len()..];
        if rest.is_empty() || rest.starts_with(['$', '/', '+']) {
            return raw[..i + LAMBDA.len()].replace('/', ".");
        }
    }
    let raw = raw
        .rfind(['/', '+'])
        .filter(|&i| is_address(&raw[i + 1..]))
        .map_or(raw, |i| &raw[..i]);
    raw.replace('/', ".")
}

/// `0x` and hex digits, then perhaps `.` and decimal digits (a hidden class's suffix).
fn is_address(s: &str) -> bool {
    let Some(hex) = s.strip_prefix("0x") else {
        return false;
    };
    let (hex, number) = hex.split_once('.').unwrap_or((hex, "0"));
    !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// A stack frame's name: `Class.method`, the method alone when the class is empty (native
/// frames of async-profiler), `[k] ` before kernel frames.
pub fn frame_name(c: &Chunk, frame: &Value) -> String {
    let method = c.field(frame, "method");
    let method_name = symbol(c, method.and_then(|m| c.field(m, "name")));
    let class = method
        .and_then(|m| c.field(m, "type"))
        .and_then(|t| c.field(t, "name"));
    let class = class_name(symbol(c, class));
    let kernel = c
        .field(frame, "type")
        .and_then(|t| c.field_text(t, "description"))
        == Some("Kernel");
    let name = match (class.is_empty(), method_name.is_empty()) {
        (true, true) => "[unknown]".to_owned(),
        (true, false) => native::clean(method_name).into_owned(),
        (false, _) => native::clean(&format!("{class}.{method_name}")).into_owned(),
    };
    if kernel {
        format!("[k] {name}")
    } else {
        name
    }
}

/// The text of a `jdk.types.Symbol`, `""` when there is none.
fn symbol<'v>(c: &'v Chunk, v: Option<&'v Value>) -> &'v str {
    v.and_then(|v| c.field_text(v, "string")).unwrap_or("")
}

/// The source line of each frame of a stack trace, outermost first as [`stack_frames`]: JFR
/// records a line number (`lineNumber`, none for native and kernel frames) but not the source
/// file, so a line's file is its class as Embers names it (`com.example.Foo$Bar`).
pub fn stack_lines(c: &Chunk, stack: &Value) -> Vec<Option<SourceLine>> {
    let Some(Value::Array(frames)) = c.field(stack, "frames") else {
        return Vec::new();
    };
    let line = |frame: &Value| {
        let line = u32::try_from(c.int(frame, "lineNumber")?)
            .ok()
            .filter(|&l| l > 0)?;
        let class = c
            .field(frame, "method")
            .and_then(|m| c.field(m, "type"))
            .and_then(|t| c.field(t, "name"));
        let file = class_name(symbol(c, class));
        (!file.is_empty()).then(|| SourceLine {
            file: native::clean(&file).into_owned(),
            line,
        })
    };
    frames.iter().rev().map(line).collect()
}

/// The frames of a stack trace, outermost first (JFR lists them leaf first).
pub fn stack_frames(c: &Chunk, stack: &Value) -> Vec<String> {
    let Some(Value::Array(frames)) = c.field(stack, "frames") else {
        return Vec::new();
    };
    frames.iter().rev().map(|f| frame_name(c, f)).collect()
}

/// A thread's frame: `[t] ` and its Java name, else its OS name, else its id.
pub fn thread_frame(c: &Chunk, thread: &Value) -> String {
    let name = ["javaName", "osName"]
        .iter()
        .filter_map(|f| c.field_text(thread, f))
        .find(|n| !n.is_empty());
    match name {
        Some(n) => native::thread_frame(n),
        None => match c
            .int(thread, "javaThreadId")
            .or_else(|| c.int(thread, "osThreadId"))
        {
            Some(id) => format!("[t] thread {id}"),
            None => "[t] unknown thread".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::class_name;

    #[test]
    fn classes_are_dotted_and_generated_ones_merged() {
        assert_eq!(
            class_name("java/util/HashMap$Node"),
            "java.util.HashMap$Node"
        );
        // JDK 17, as recorded here; JDK 21; older JDKs.
        assert_eq!(
            class_name("Workload$$Lambda$88+0x00007fe9e8007a08.937773018"),
            "Workload$$Lambda"
        );
        assert_eq!(class_name("a/B$$Lambda/0x0000000800c03000"), "a.B$$Lambda");
        assert_eq!(class_name("a/B$$Lambda$7"), "a.B$$Lambda");
        assert_eq!(class_name("a/Gen+0x0000000800c03000"), "a.Gen");
        assert_eq!(class_name("a/Gen/0x1f.12"), "a.Gen");
        // Only a real address is dropped, only a real lambda class cut.
        assert_eq!(class_name("a/B$$LambdaForm"), "a.B$$LambdaForm");
        assert_eq!(class_name("a/B/0xzz"), "a.B.0xzz");
        assert_eq!(class_name(""), "");
    }
}
