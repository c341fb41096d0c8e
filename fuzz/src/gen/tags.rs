//! Tag-filter builder rows: known tag names, aliases and open-family keys (including keys a
//! bare word cannot hold: spaces, quotes, backticks, `AND`, non-ASCII), values with `'` and `\`
//! tricks.

use arbitrary::Arbitrary;
use embers_model::contract::fields::offered_names;
use embers_model::contract::tag_filter::TagCondition;

/// A row's tag name.
#[derive(Arbitrary, Debug, Clone)]
pub enum TagName {
    /// One the viewer offers (family prefixes get a key appended).
    Offered(u8),
    /// An open-family key: `<family>.<key>`.
    Open(u8, String),
    Any(String),
}

/// Values that stress the quoting.
const TRICKY_VALUES: &[&str] = &[
    "",
    "'",
    "''",
    "\\",
    "\\'",
    "a\\",
    "x' OR 1=1 --",
    "' AND pod='y",
    "`",
    "12",
    " -7 ",
    "9223372036854775808",
    "ünï",
];

/// A row's value.
#[derive(Arbitrary, Debug, Clone)]
pub enum TagValue {
    Tricky(u8),
    Any(String),
}

/// One builder row.
#[derive(Arbitrary, Debug, Clone)]
pub struct Row {
    name: TagName,
    value: TagValue,
    negated: bool,
    /// Whitespace around the name (the renderer trims it).
    padded: bool,
}

impl Row {
    /// The builder row.
    pub fn condition(&self) -> TagCondition {
        let offered = offered_names();
        let name = match &self.name {
            TagName::Offered(i) => {
                let n = &offered[usize::from(*i) % offered.len()];
                if n.ends_with('.') {
                    format!("{n}app")
                } else {
                    n.clone()
                }
            }
            TagName::Open(f, key) => {
                const FAMILIES: [&str; 4] = ["k8s.label", "k8s.annotation", "k8s.env", "cloud.tag"];
                format!("{}.{key}", FAMILIES[usize::from(*f) % FAMILIES.len()])
            }
            TagName::Any(s) => s.clone(),
        };
        let value = match &self.value {
            TagValue::Tricky(i) => TRICKY_VALUES[usize::from(*i) % TRICKY_VALUES.len()].to_string(),
            TagValue::Any(s) => s.clone(),
        };
        TagCondition {
            name: if self.padded {
                format!(" {name}\t")
            } else {
                name
            },
            value,
            negated: self.negated,
        }
    }
}
