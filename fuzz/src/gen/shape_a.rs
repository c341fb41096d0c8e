//! Near-valid shape-A answers: node objects with UUID or text ids, parents that point at other
//! nodes (so shuffles, orphans, self-loops and cycles all occur), awkward values and names,
//! members in any order, missing, repeated or unknown.

use arbitrary::Arbitrary;

use super::{apply_edits, key, string, Edit, Envelope, Name, Num};

/// A node id.
#[derive(Arbitrary, Debug, Clone)]
pub enum Id {
    /// `""`, the root's id in DeepFlow's answers.
    Empty,
    Uuid(u128),
    /// `n<k>`: short ids that nodes can share (duplicates).
    Short(u8),
    Text(String),
}

impl Id {
    fn write(&self, out: &mut String) {
        match self {
            Id::Empty => out.push_str("\"\""),
            Id::Uuid(v) => {
                let h = format!("{v:032x}");
                out.push_str(&format!(
                    "\"{}-{}-{}-{}-{}\"",
                    &h[..8],
                    &h[8..12],
                    &h[12..16],
                    &h[16..20],
                    &h[20..]
                ));
            }
            Id::Short(k) => out.push_str(&format!("\"n{k}\"")),
            Id::Text(s) => string(out, s),
        }
    }
}

/// A parent reference.
#[derive(Arbitrary, Debug, Clone)]
pub enum Parent {
    /// `"-1"`: a root.
    Root,
    /// The id of node `k % len`: shuffles, self-loops and cycles.
    Node(u8),
    Other(Id),
    /// Not a string (an error).
    Number(Num),
}

/// One element of the array.
#[derive(Arbitrary, Debug, Clone)]
pub struct Node {
    name: Option<Name>,
    id: Option<Id>,
    parent: Option<Parent>,
    self_value: Option<Num>,
    total_value: Option<Num>,
    unknown: Option<(String, Num)>,
    /// Rotates the member order.
    rotate: u8,
    /// Repeats one member (0..5 picks it; otherwise none).
    repeat: u8,
}

/// A whole answer.
#[derive(Arbitrary, Debug, Clone)]
pub struct Answer {
    envelope: Envelope,
    nodes: Vec<Node>,
    /// The result is `null` or some other non-array instead.
    not_an_array: Option<Num>,
    edits: Vec<Edit>,
}

impl Answer {
    /// The answer's body; `slow` escapes every key, which is the same JSON but sends every
    /// reader to its serde fallback. Byte edits apply only to the fast rendering.
    pub fn render(&self, slow: bool) -> Vec<u8> {
        let result = match &self.not_an_array {
            Some(n) => {
                let mut s = String::new();
                n.write(&mut s);
                s
            }
            None => self.array(slow),
        };
        let mut bytes = self.envelope.wrap(&result, slow).into_bytes();
        if !slow {
            apply_edits(&mut bytes, &self.edits);
        }
        bytes
    }

    /// Whether byte edits make the two renderings incomparable.
    pub fn edited(&self) -> bool {
        !self.edits.is_empty()
    }

    fn array(&self, slow: bool) -> String {
        let mut out = String::from("[");
        for (i, node) in self.nodes.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            node.write(&self.nodes, slow, &mut out);
        }
        out.push(']');
        out
    }
}

impl Node {
    fn write(&self, all: &[Node], slow: bool, out: &mut String) {
        let mut members: Vec<String> = Vec::new();
        let mut member = |name: &str, write: &dyn Fn(&mut String)| {
            let mut m = String::new();
            key(&mut m, name, slow);
            write(&mut m);
            members.push(m);
        };
        if let Some(n) = &self.name {
            member("profile_location_str", &|m| n.write(m));
        }
        if let Some(id) = &self.id {
            member("node_id", &|m| id.write(m));
        }
        if let Some(p) = &self.parent {
            member("parent_node_id", &|m| write_parent(p, all, m));
        }
        if let Some(v) = &self.self_value {
            member("self_value", &|m| v.write(m));
        }
        if let Some(v) = &self.total_value {
            member("total_value", &|m| v.write(m));
        }
        if let Some((k, v)) = &self.unknown {
            let mut m = String::new();
            string(&mut m, k);
            m.push(':');
            v.write(&mut m);
            members.push(m);
        }
        if let Some(repeated) = members.get(usize::from(self.repeat)).cloned() {
            members.push(repeated);
        }
        if !members.is_empty() {
            let k = usize::from(self.rotate) % members.len();
            members.rotate_left(k);
        }
        out.push('{');
        out.push_str(&members.join(","));
        out.push('}');
    }
}

fn write_parent(parent: &Parent, all: &[Node], out: &mut String) {
    match parent {
        Parent::Root => out.push_str("\"-1\""),
        Parent::Node(k) => match all
            .get(usize::from(*k) % all.len().max(1))
            .and_then(|n| n.id.as_ref())
        {
            Some(id) => id.write(out),
            None => out.push_str("\"\""),
        },
        Parent::Other(id) => id.write(out),
        Parent::Number(n) => n.write(out),
    }
}
