//! The model's folders import one another one way: reading every `crate::<folder>` path outside
//! test modules, the folder-level graph has no cycle, and the contract (the interface itself)
//! imports no other folder. A file-level check misses a cycle that runs through two files of
//! two folders (contract::kernel -> tree::kind while tree::transform -> contract::kernel).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

const FOLDERS: [&str; 6] = ["contract", "export", "synth", "tree", "view", "wire"];

/// The part of a file the build sees: without `//` comments and without its test module.
fn production_text(text: &str) -> String {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    code.split("#[cfg(test)]").next().unwrap_or("").to_owned()
}

fn visit(dir: &Path, top: &str, edges: &mut BTreeMap<String, BTreeSet<String>>) {
    for entry in fs::read_dir(dir).expect("read model/src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            visit(&path, top, edges);
        } else {
            scan(&path, top, edges);
        }
    }
}

/// Adds the folders one file of folder `top` imports.
fn scan(path: &Path, top: &str, edges: &mut BTreeMap<String, BTreeSet<String>>) {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !name.ends_with(".rs") || name == "tests.rs" {
        return;
    }
    let text = production_text(&fs::read_to_string(path).expect("read"));
    let mut add = |folder: &str| {
        if folder != top && FOLDERS.contains(&folder) {
            edges
                .entry(top.to_owned())
                .or_default()
                .insert(folder.to_owned());
        }
    };
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        add(&rest[..end]);
    }
    // `use crate::{a::x, b::y}` names folders without a `crate::` before each.
    for group in text.split("use crate::{").skip(1) {
        let group = group.split("};").next().unwrap_or("");
        for item in group.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
            add(item.split("::").next().unwrap_or(""));
        }
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut edges = BTreeMap::new();
    for folder in FOLDERS {
        let dir = src.join(folder);
        if dir.is_dir() {
            visit(&dir, folder, &mut edges);
        } else {
            scan(&src.join(format!("{folder}.rs")), folder, &mut edges);
        }
    }
    edges
}

/// A path from `from` back to itself, if the graph has one.
fn cycle_through(edges: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_owned()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().cloned().unwrap_or_default();
        for next in edges.get(&last).into_iter().flatten() {
            if next == from {
                let mut cycle = path.clone();
                cycle.push(next.clone());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

#[test]
fn the_folders_import_one_another_one_way() {
    let edges = graph();
    for folder in FOLDERS {
        assert_eq!(cycle_through(&edges, folder), None, "edges: {edges:?}");
    }
    assert_eq!(
        edges.get("contract"),
        None,
        "the contract imports {edges:?}"
    );
    // The check sees edges at all (a parser that found none would pass vacuously).
    assert!(edges["tree"].contains("contract") && edges["view"].contains("tree"));
}

#[test]
fn the_check_finds_a_cycle_when_there_is_one() {
    let mut edges = graph();
    edges
        .entry("contract".to_owned())
        .or_default()
        .insert("tree".to_owned());
    assert!(cycle_through(&edges, "contract").is_some());
}
