//! A `perf script` sample header, `comm [pid/]tid [cpu] time: [period] event: [ip sym (dso)]`,
//! and the `srcline` line `perf script -F +srcline` prints under a frame (`file:line`).

/// A sample's header fields.
pub(super) struct Header<'a> {
    pub comm: &'a str,
    pub pid: Option<u64>,
    pub tid: u64,
    /// The sample's time on perf's clock (monotonic unless recorded with `-k CLOCK_REALTIME`,
    /// then Unix time), in nanoseconds.
    pub time_ns: u64,
    pub period: Option<u64>,
    pub event: &'a str,
    /// A frame on the header line itself (`perf script` without call chains).
    pub inline_frame: Option<&'a str>,
}

/// The whitespace-separated tokens of `line` with their byte offsets.
fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// `secs.frac` (perf prints 6 digits, 9 with `--ns`) as nanoseconds.
fn time_ns(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.')?;
    if secs.is_empty() || frac.is_empty() || frac.len() > 9 || frac.contains('.') {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Reads a header: `comm [pid/]tid [cpu] time: [period] event: [ip sym (dso)]`.
pub(super) fn header(line: &str) -> Option<Header<'_>> {
    let tokens = tokens(line);
    // The time ends in ':' and is `secs.frac:`; the thread id is before it (or before `[cpu]`).
    let (t, time_ns) = tokens.iter().enumerate().find_map(|(i, (_, t))| {
        let n = t.strip_suffix(':')?;
        if !n.contains('.') || !n.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        Some((i, time_ns(n)?))
    })?;
    let mut id_at = t.checked_sub(1)?;
    let cpu = tokens[id_at].1;
    if cpu.starts_with('[') && cpu.ends_with(']') {
        id_at = id_at.checked_sub(1)?;
    }
    if id_at == 0 {
        return None;
    }
    let (id_offset, ids) = tokens[id_at];
    let (pid, tid) = match ids.split_once('/') {
        Some((pid, tid)) => (Some(pid.parse().ok()?), tid.parse().ok()?),
        None => (None, ids.parse().ok()?),
    };
    let mut at = t + 1;
    let period = tokens.get(at)?.1.parse::<u64>().ok();
    if period.is_some() {
        at += 1;
    }
    let (event_offset, event_token) = *tokens.get(at)?;
    let event = event_token.split(':').next().filter(|e| !e.is_empty())?;
    let inline = line[event_offset + event_token.len()..].trim();
    Some(Header {
        comm: line[..id_offset].trim(),
        pid,
        tid,
        time_ns,
        period,
        event,
        inline_frame: (!inline.is_empty()).then_some(inline),
    })
}

/// What a line led by spaces (not perf's tab) under a frame is: `Some(Some((file, line)))` for
/// a `srcline` naming one, `Some(None)` for a `srcline` without one (`??:0`,
/// `[kernel.kallsyms][ffffffff81000e06]`, `sym+0x12`), `None` when it is not a `srcline` (a
/// frame printed with spaces: an address first).
pub(super) fn srcline(line: &str) -> Option<Option<(&str, u32)>> {
    if line.starts_with('\t') {
        return None;
    }
    let text = line.trim();
    if text.is_empty()
        || text.contains(char::is_whitespace)
        || text.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    let known = text
        .rsplit_once(':')
        .and_then(|(file, n)| Some((file, n.parse::<u32>().ok()?)))
        .filter(|&(file, n)| n > 0 && !file.is_empty() && file != "??");
    Some(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_gives_its_time_in_nanoseconds_on_perf_s_clock() {
        let h =
            header("hot 24440/24441 39924.765906:    5025125 cpu-clock:pppH: ").expect("header");
        assert_eq!((h.comm, h.pid, h.tid), ("hot", Some(24440), 24441));
        assert_eq!(h.time_ns, 39_924_765_906_000);
        assert_eq!(h.period, Some(5_025_125));
        let ns = header("hot 1 [003] 1795907346.840713123: 1 cycles:").expect("--ns");
        assert_eq!(ns.time_ns, 1_795_907_346_840_713_123);
        assert!(
            header("hot 1 1.1234567890: 1 cycles:").is_none(),
            "10 digits"
        );
    }

    #[test]
    fn srclines_are_told_from_frames_and_from_lines_perf_could_not_name() {
        assert_eq!(srcline("  hot.c:9"), Some(Some(("hot.c", 9))));
        assert_eq!(srcline("  /src/a b.c:9"), None, "one token only");
        assert_eq!(srcline("  ??:0"), Some(None));
        assert_eq!(srcline("  libc-start.c:0"), Some(None));
        assert_eq!(srcline("  [kernel.kallsyms][ffffffff81000e06]"), Some(None));
        assert_eq!(srcline("\t  1158 hot"), None);
        assert_eq!(srcline("      1158"), None, "an address alone is a frame");
    }
}
