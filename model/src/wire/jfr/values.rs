//! Values decoded by their class's layout, the chunk's constant pools, and the lookups events
//! are read with ([`Chunk::field`], [`Chunk::text`]): a field of a pooled value is found
//! through the pool, a pooled string through the `java.lang.String` pool.
//!
//! Everything here is sized by the input: nesting is bounded, and every value decoded is
//! charged to the request's [`Budget`] before it is made, since an array of a class with no
//! fields takes no bytes.

use rustc_hash::FxHashMap;

use super::bytes::{Bytes, JfrString};
use super::types::{Field, Layout, Types};
use super::JfrError;
use crate::budget::Budget;

/// Nesting of inline (not pooled) values: a stack trace's frames are 3 deep.
const MAX_DEPTH: usize = 24;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `boolean`, `byte`, `short`, `char`, `int`, `long`.
    Int(i64),
    Float(f64),
    Str(JfrString),
    /// A key into the pool of `class`.
    Ref {
        class: i64,
        key: i64,
    },
    Array(Vec<Value>),
    /// A value of `class`, its fields in the class's order.
    Object {
        class: i64,
        fields: Vec<Value>,
    },
}

/// Memory one decoded value may take: the value and room for its vector's growth.
pub const VALUE_BYTES: usize = 2 * std::mem::size_of::<Value>();

/// Decodes values of the chunk's classes.
pub struct Decoder<'t, 'b> {
    pub types: &'t Types,
    /// The request's, spent by every value decoded.
    pub budget: &'b Budget,
}

impl Decoder<'_, '_> {
    fn spend(&self) -> Result<(), JfrError> {
        spend(self.budget, 1)
    }

    /// A value of class `class`.
    pub fn value(
        &mut self,
        b: &mut Bytes<'_>,
        class: i64,
        depth: usize,
    ) -> Result<Value, JfrError> {
        self.spend()?;
        if depth > MAX_DEPTH {
            return Err(JfrError::Invalid(format!(
                "values nested over {MAX_DEPTH} deep (a class that contains itself?)"
            )));
        }
        let c =
            self.types.classes.get(&class).ok_or_else(|| {
                JfrError::Invalid(format!("class id {class} is not in the metadata"))
            })?;
        Ok(match c.layout {
            Layout::Boolean | Layout::Byte => Value::Int(i64::from(b.u8()? as i8)),
            Layout::Short | Layout::Char => Value::Int(i64::from(b.short()?)),
            Layout::Int => Value::Int(i64::from(b.int()?)),
            Layout::Long => Value::Int(b.long()?),
            Layout::Float => Value::Float(f64::from(b.f32()?)),
            Layout::Double => Value::Float(b.f64()?),
            Layout::String => Value::Str(b.string()?),
            Layout::Fields => {
                let mut fields = Vec::with_capacity(c.fields.len());
                for f in &c.fields {
                    fields.push(self.field(b, f, depth + 1)?);
                }
                Value::Object { class, fields }
            }
        })
    }

    fn field(&mut self, b: &mut Bytes<'_>, f: &Field, depth: usize) -> Result<Value, JfrError> {
        if !f.array {
            return self.single(b, f, depth);
        }
        self.spend()?;
        let n = b.count("an array's length")?;
        spend(self.budget, n)?;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.single(b, f, depth)?);
        }
        Ok(Value::Array(items))
    }

    fn single(&mut self, b: &mut Bytes<'_>, f: &Field, depth: usize) -> Result<Value, JfrError> {
        if f.pooled {
            self.spend()?;
            Ok(Value::Ref {
                class: f.class,
                key: b.long()?,
            })
        } else {
            self.value(b, f.class, depth)
        }
    }
}

/// Charge `count` values to `budget`, or refuse the recording as too large.
fn spend(budget: &Budget, count: usize) -> Result<(), JfrError> {
    budget
        .charge(count.saturating_mul(VALUE_BYTES), "JFR values")
        .map_err(|e| JfrError::TooLarge(e.to_string()))
}

/// A chunk's classes and constant pools: what reading its events needs.
#[derive(Default)]
pub struct Chunk {
    pub types: Types,
    pub pools: FxHashMap<(i64, i64), Value>,
    /// The id of `java.lang.String`, whose pool pooled strings are keys of.
    pub string_class: Option<i64>,
}

impl Chunk {
    /// Reads a checkpoint event's pools into the chunk (its size and type id already read).
    pub fn read_checkpoint(&mut self, b: &mut Bytes<'_>, budget: &Budget) -> Result<(), JfrError> {
        // Start time, duration, the offset of the previous checkpoint (every checkpoint is
        // read in file order instead), and the flush flag.
        for _ in 0..3 {
            b.long()?;
        }
        b.u8()?;
        let mut d = Decoder {
            types: &self.types,
            budget,
        };
        let pools = b.count("a checkpoint's pool count")?;
        let mut entries = Vec::new();
        for _ in 0..pools {
            let class = b.long()?;
            let n = b.count("a pool's entry count")?;
            for _ in 0..n {
                let key = b.long()?;
                entries.push(((class, key), d.value(b, class, 0)?));
            }
        }
        self.pools.extend(entries);
        Ok(())
    }

    /// `v` itself, or the pooled value it refers to.
    pub fn resolve<'v>(&'v self, v: &'v Value) -> Option<&'v Value> {
        match v {
            Value::Ref { class, key } => self.pools.get(&(*class, *key)),
            v => Some(v),
        }
    }

    /// Field `name` of `v` (resolved), itself resolved.
    pub fn field<'v>(&'v self, v: &'v Value, name: &str) -> Option<&'v Value> {
        let Value::Object { class, fields } = self.resolve(v)? else {
            return None;
        };
        let i = self.types.classes.get(class)?.field(name)?;
        self.resolve(fields.get(i)?)
    }

    /// The text of a string value, through the string pool when pooled.
    pub fn text<'v>(&'v self, v: &'v Value) -> Option<&'v str> {
        match v {
            Value::Str(JfrString::Text(t)) => Some(t),
            // One level only: a pooled string's entry is text (a forged one pointing at
            // another key would otherwise loop).
            Value::Str(JfrString::Pooled(key)) => {
                match self.pools.get(&(self.string_class?, *key))? {
                    Value::Str(JfrString::Text(t)) => Some(t),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Field `name` of `v` as a number.
    pub fn int(&self, v: &Value, name: &str) -> Option<i64> {
        match self.field(v, name)? {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// Field `name` of `v` as text.
    pub fn field_text<'v>(&'v self, v: &'v Value, name: &str) -> Option<&'v str> {
        self.text(self.field(v, name)?)
    }
}
