//! A [`Profile`] as plain arrays, to move it between threads (the viewer decodes in a Web
//! Worker and sends the result to the page as typed arrays), and back again.
//!
//! Reassembly does not trust its input: every index is range-checked and every invariant the
//! rest of the model relies on is verified, so a bad message is an error, never a panic later.

use super::{Profile, Warnings};
use crate::contract::kind::FrameKind;
use crate::tree::table::NO_PARENT;

/// Parts that make no profile; the text says what is wrong with them (a column's length, an
/// index out of range, a node outside its parent).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PartsError(String);

impl PartsError {
    fn new(what: &str) -> PartsError {
        PartsError(what.to_owned())
    }
}

/// The arrays of a [`Profile`] (see there for what each column means).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileParts {
    /// Every function name, UTF-8, one after another.
    pub names: Vec<u8>,
    /// End of each name in `names`.
    pub name_ends: Vec<u32>,
    /// Kind of each function, as its index in [`FrameKind::ALL`].
    pub kinds: Vec<u8>,
    /// Per node, in preorder.
    pub func: Vec<u32>,
    pub parent: Vec<u32>,
    pub depth: Vec<u32>,
    pub self_value: Vec<u64>,
    pub total: Vec<u64>,
    pub start: Vec<u64>,
    pub end: Vec<u32>,
    /// Nodes by depth (CSR).
    pub row_offsets: Vec<u32>,
    pub row_nodes: Vec<u32>,
    /// The server's per-function `(self, total)` sums, flattened; empty when absent.
    pub server_function_values: Option<Vec<i64>>,
    /// [`Warnings`] in [`WARNING_ORDER`] order.
    pub warnings: [u32; 7],
}

/// The order of [`ProfileParts::warnings`].
pub const WARNING_ORDER: [&str; 7] = [
    "unreachable_rows",
    "extra_roots",
    "duplicate_ids",
    "bad_function_ids",
    "negative_values",
    "inconsistent_totals",
    "merged_siblings",
];

impl Profile {
    /// Takes the profile apart (consuming it, so nothing is copied twice).
    pub fn into_parts(self) -> ProfileParts {
        let (names, name_ends) = pack_names(&self.names);
        let w = &self.warnings;
        ProfileParts {
            names,
            name_ends,
            kinds: self.kinds.iter().map(|k| k.index()).collect(),
            func: self.func,
            parent: self.parent,
            depth: self.depth,
            self_value: self.self_value,
            total: self.total,
            start: self.start,
            end: self.end,
            row_offsets: self.row_offsets,
            row_nodes: self.row_nodes,
            server_function_values: self
                .server_function_values
                .map(|v| v.into_iter().flat_map(|(s, t)| [s, t]).collect()),
            warnings: [
                w.unreachable_rows,
                w.extra_roots,
                w.duplicate_ids,
                w.bad_function_ids,
                w.negative_values,
                w.inconsistent_totals,
                w.merged_siblings,
            ],
        }
    }

    /// Puts a profile back together, checking everything; the error says what is wrong.
    pub fn from_parts(parts: ProfileParts) -> Result<Profile, PartsError> {
        let names = split_names(&parts.names, &parts.name_ends)?;
        let kinds = parts
            .kinds
            .iter()
            .map(|&k| FrameKind::ALL.get(k as usize).copied())
            .collect::<Option<Vec<_>>>()
            .ok_or(PartsError::new("a function kind is out of range"))?;
        if kinds.len() != names.len() {
            return Err(PartsError(format!(
                "{} kinds for {} names",
                kinds.len(),
                names.len()
            )));
        }
        let server_function_values = match parts.server_function_values {
            Some(v) if v.len() == 2 * names.len() => {
                Some(v.chunks_exact(2).map(|p| (p[0], p[1])).collect())
            }
            Some(v) => {
                return Err(PartsError(format!(
                    "{} server values for {} names",
                    v.len(),
                    names.len()
                )))
            }
            None => None,
        };
        let [unreachable_rows, extra_roots, duplicate_ids, bad_function_ids, negative_values, inconsistent_totals, merged_siblings] =
            parts.warnings;
        let profile = Profile {
            names,
            kinds,
            func: parts.func,
            parent: parts.parent,
            depth: parts.depth,
            self_value: parts.self_value,
            total: parts.total,
            start: parts.start,
            end: parts.end,
            row_offsets: parts.row_offsets,
            row_nodes: parts.row_nodes,
            server_function_values,
            warnings: Warnings {
                unreachable_rows,
                extra_roots,
                duplicate_ids,
                bad_function_ids,
                negative_values,
                inconsistent_totals,
                merged_siblings,
            },
        };
        profile.check()?;
        Ok(profile)
    }

    /// Verifies the invariants of the module docs (used on profiles from outside).
    fn check(&self) -> Result<(), PartsError> {
        let n = self.func.len();
        let columns = [
            ("parent", self.parent.len()),
            ("depth", self.depth.len()),
            ("self_value", self.self_value.len()),
            ("total", self.total.len()),
            ("start", self.start.len()),
            ("end", self.end.len()),
            ("row_nodes", self.row_nodes.len()),
        ];
        if let Some((name, len)) = columns.iter().find(|(_, len)| *len != n) {
            return Err(PartsError(format!(
                "{name} has {len} entries for {n} nodes"
            )));
        }
        if n > 0 && (self.parent[0] != NO_PARENT || self.depth[0] != 0 || self.start[0] != 0) {
            return Err(PartsError::new("node 0 is not a root"));
        }
        for i in 0..n {
            if self.func[i] as usize >= self.names.len() {
                return Err(PartsError(format!(
                    "node {i} names function {}",
                    self.func[i]
                )));
            }
            if !(i as u32 + 1..=n as u32).contains(&self.end[i]) {
                return Err(PartsError(format!("node {i} ends at {}", self.end[i])));
            }
            if self.total[i] < self.self_value[i] {
                return Err(PartsError(format!(
                    "node {i} has a total below its self value"
                )));
            }
            if i == 0 {
                continue;
            }
            let p = self.parent[i] as usize;
            if p >= i || self.end[i] > self.end[p] || self.depth[i] != self.depth[p] + 1 {
                return Err(PartsError(format!("node {i} does not nest in its parent")));
            }
            let (start, end) = (self.start[i], self.start[i].saturating_add(self.total[i]));
            if start < self.start[p] || end > self.start[p].saturating_add(self.total[p]) {
                return Err(PartsError(format!("node {i} lies outside its parent")));
            }
        }
        self.check_rows()
    }

    /// Rows must list every node once, at its depth, in preorder.
    fn check_rows(&self) -> Result<(), PartsError> {
        let n = self.func.len();
        let offsets = &self.row_offsets;
        let well_formed = if n == 0 {
            offsets.is_empty()
        } else {
            offsets.first() == Some(&0)
                && offsets.last() == Some(&(n as u32))
                && offsets.windows(2).all(|w| w[0] <= w[1])
        };
        if !well_formed {
            return Err(PartsError::new("row offsets do not cover the nodes"));
        }
        for (d, w) in offsets.windows(2).enumerate() {
            let row = &self.row_nodes[w[0] as usize..w[1] as usize];
            let in_order = row.windows(2).all(|pair| pair[0] < pair[1]);
            let at_depth = row
                .iter()
                .all(|&node| (node as usize) < n && self.depth[node as usize] == d as u32);
            if !in_order || !at_depth {
                return Err(PartsError(format!(
                    "row {d} is not its depth's nodes in preorder"
                )));
            }
        }
        Ok(())
    }
}

/// Function names one after another, and the end of each: [`ProfileParts::names`] and
/// [`ProfileParts::name_ends`].
pub(crate) fn pack_names<S: AsRef<str>>(names: &[S]) -> (Vec<u8>, Vec<u32>) {
    let mut bytes = Vec::with_capacity(names.iter().map(|n| n.as_ref().len()).sum());
    let mut ends = Vec::with_capacity(names.len());
    for name in names {
        bytes.extend_from_slice(name.as_ref().as_bytes());
        ends.push(bytes.len() as u32);
    }
    (bytes, ends)
}

fn split_names(bytes: &[u8], ends: &[u32]) -> Result<Vec<Box<str>>, PartsError> {
    let mut start = 0usize;
    ends.iter()
        .map(|&end| {
            let end = end as usize;
            let slice = bytes
                .get(start..end)
                .ok_or(PartsError::new("function name offsets are out of range"))?;
            start = end;
            std::str::from_utf8(slice)
                .map(Box::from)
                .map_err(|_| PartsError::new("a function name is not UTF-8"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthOptions, SynthProfile};

    fn sample() -> Profile {
        let body = SynthProfile::generate(SynthOptions {
            nodes: 3_000,
            ..Default::default()
        })
        .to_shape_b_json();
        crate::decode_response(200, &body).expect("decodes").profile
    }

    #[test]
    fn a_profile_survives_the_round_trip() {
        let p = sample();
        let before = format!("{p:?}");
        let back = Profile::from_parts(p.into_parts()).expect("valid parts");
        assert_eq!(format!("{back:?}"), before);
        let empty = Profile::from_parts(Profile::default().into_parts()).expect("empty");
        assert!(empty.is_empty());
    }

    #[test]
    fn broken_parts_are_errors_not_panics() {
        let good = sample().into_parts();
        let n = good.func.len();
        type Breakage = Box<dyn Fn(&mut ProfileParts)>;
        let cases: Vec<(&str, Breakage)> = vec![
            (
                "short column",
                Box::new(|p| p.total.truncate(p.total.len() - 1)),
            ),
            ("bad function", Box::new(|p| p.func[5] = 1 << 30)),
            ("bad kind", Box::new(|p| p.kinds[0] = 200)),
            ("bad name end", Box::new(|p| p.name_ends[0] = u32::MAX)),
            ("bad utf-8", Box::new(|p| p.names[0] = 0xff)),
            ("bad end", Box::new(move |p| p.end[3] = n as u32 + 1)),
            ("self above total", Box::new(|p| p.self_value[2] = u64::MAX)),
            ("parent after child", Box::new(|p| p.parent[1] = 7)),
            ("escaping start", Box::new(|p| p.start[1] = u64::MAX / 2)),
            ("rows", Box::new(|p| p.row_nodes.swap(1, 2))),
            ("row offsets", Box::new(|p| p.row_offsets[1] = 0)),
            (
                "server values",
                Box::new(|p| p.server_function_values = Some(vec![1])),
            ),
        ];
        for (what, break_it) in cases {
            let mut parts = good.clone();
            break_it(&mut parts);
            assert!(Profile::from_parts(parts).is_err(), "{what}");
        }
    }
}
