//! Tests of [`super`] on the real Go CPU profile of `server/tests/data/go/hot` (written by
//! `runtime/pprof`): the stacks with lines are the plain stacks, value for value, and the hot
//! loop's body is where `hotLoop` spends its time.

use std::collections::HashMap;
use std::io::Read;

use super::*;
use crate::wire::pprof::decode;

fn go_cpu() -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pprof/go-cpu.pb.gz");
    let gz = std::fs::read(path).expect("fixture");
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

const BOUNDS: StackBounds = StackBounds {
    max_frames: 512,
    max_frame_bytes: 4096,
};

#[test]
fn stacks_with_lines_are_the_plain_stacks_with_lines_below() {
    let bytes = go_cpu();
    let p = decode(&bytes).expect("decodes");
    assert!(has_lines(&p));
    let budget = Budget::unlimited();
    let value = p.sample_types.len() - 1;
    let plain = stacks(&fold(&p, "hot", value).expect("fold"), &BOUNDS, &budget).expect("plain");
    let lined = stacks_with_lines(&p, "hot", value, &BOUNDS, &budget).expect("lines");
    let sum = |it: &mut dyn Iterator<Item = (String, u64)>| {
        let mut m: HashMap<String, u64> = HashMap::new();
        for (s, v) in it {
            *m.entry(s).or_default() += v;
        }
        m
    };
    let by_text = sum(&mut lined.iter().map(|(s, _, v)| (s.clone(), *v)));
    assert_eq!(
        by_text,
        sum(&mut plain.into_iter()),
        "same stacks, same values"
    );
    let mut hot: HashMap<(String, u32), u64> = HashMap::new();
    for (stack, lines, v) in &lined {
        assert!(!stack.contains(MARK), "{stack}");
        let frames: Vec<&str> = stack.split(';').collect();
        assert_eq!(lines.len(), frames.len(), "{stack}");
        if frames.last() == Some(&"main.hotLoop") {
            let at = lines.last().cloned().flatten().expect("hotLoop has lines");
            *hot.entry((at.file, at.line)).or_default() += v;
        }
    }
    let (top, _) = hot.iter().max_by_key(|(_, v)| **v).expect("hotLoop ran");
    assert!(top.0.ends_with("/hot/main.go"), "{top:?}");
    assert_eq!(top.1, 26, "the loop body: x = x*6364136223846793005 + ...");
}

#[test]
fn only_our_own_decoration_is_taken_off() {
    let m = MARK;
    assert_eq!(undecorate(&format!("main.f{m}3"), 5), ("main.f", 3));
    assert_eq!(undecorate(&format!("[l] f{m}0"), 5), ("[l] f", 0));
    // Not a line index of this profile, or no decoration: the frame as it is.
    let beyond = format!("f{m}9");
    assert_eq!(undecorate(&beyond, 5), (beyond.as_str(), 0));
    let signed = format!("f{m}+1");
    assert_eq!(undecorate(&signed, 5), (signed.as_str(), 0));
    assert_eq!(undecorate("[t] worker", 5), ("[t] worker", 0));
}
