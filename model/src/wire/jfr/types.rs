//! A chunk's metadata event: the classes every event and constant pool is laid out by. Only
//! what decoding needs is kept (each class's name and fields); annotations, settings and the
//! `region` element are read past.

use rustc_hash::FxHashMap;

use super::bytes::Bytes;
use super::JfrError;

/// Nesting of metadata elements (`root → metadata → class → field → annotation` is 5 deep).
const MAX_ELEMENT_DEPTH: usize = 16;

/// One field of a class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: Box<str>,
    /// The class id of its values.
    pub class: i64,
    /// Held as a key into the constant pool of `class`.
    pub pooled: bool,
    /// An array of values (`dimension="1"`).
    pub array: bool,
}

/// How values of a class are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Boolean,
    Byte,
    Short,
    Char,
    Int,
    Long,
    Float,
    Double,
    String,
    /// Its fields, in order.
    Fields,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub name: Box<str>,
    pub layout: Layout,
    pub fields: Vec<Field>,
}

impl Class {
    /// The index of field `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &*f.name == name)
    }
}

/// The classes of one chunk, by id.
#[derive(Clone, Debug, Default)]
pub struct Types {
    pub classes: FxHashMap<i64, Class>,
}

impl Types {
    /// The id of the class named `name`.
    pub fn id_of(&self, name: &str) -> Option<i64> {
        self.classes
            .iter()
            .find(|(_, c)| &*c.name == name)
            .map(|(&id, _)| id)
    }
}

/// An element of the metadata tree, as far as it is read: its name and attributes are indices
/// into the metadata's string table (a string is stored once however often it is used).
struct Element {
    name: usize,
    attributes: Vec<(usize, usize)>,
    children: Vec<Element>,
}

/// The metadata's string table and the lookups its elements need.
struct Strings(Vec<Box<str>>);

impl Strings {
    fn get(&self, i: usize) -> &str {
        self.0.get(i).map_or("", |s| s)
    }

    fn is(&self, e: &Element, name: &str) -> bool {
        self.get(e.name) == name
    }

    fn attribute(&self, e: &Element, key: &str) -> Option<&str> {
        e.attributes
            .iter()
            .find(|(k, _)| self.get(*k) == key)
            .map(|(_, v)| self.get(*v))
    }

    fn number(&self, e: &Element, key: &str) -> Result<i64, JfrError> {
        let v = self.attribute(e, key).unwrap_or_default();
        v.parse().map_err(|_| {
            JfrError::Invalid(format!(
                "metadata {} has {key}=\"{v}\", not a number",
                self.get(e.name)
            ))
        })
    }
}

/// Reads the metadata event at `b`'s position (its size and type id already read).
pub fn read_metadata(b: &mut Bytes<'_>) -> Result<Types, JfrError> {
    // Start time, duration and metadata id: not needed.
    for _ in 0..3 {
        b.long()?;
    }
    let n = b.count("the metadata's string count")?;
    let strings = Strings((0..n).map(|_| b.text()).collect::<Result<Vec<_>, _>>()?);
    let root = element(b, n, 0)?;
    let mut types = Types::default();
    for class in root
        .children
        .iter()
        .filter(|e| strings.is(e, "metadata"))
        .flat_map(|m| &m.children)
        .filter(|e| strings.is(e, "class"))
    {
        let (id, class) = class_of(&strings, class)?;
        types.classes.insert(id, class);
    }
    Ok(types)
}

fn element(b: &mut Bytes<'_>, strings: usize, depth: usize) -> Result<Element, JfrError> {
    if depth > MAX_ELEMENT_DEPTH {
        return Err(JfrError::Invalid(format!(
            "metadata elements nested over {MAX_ELEMENT_DEPTH} deep"
        )));
    }
    let string = |b: &mut Bytes<'_>| -> Result<usize, JfrError> {
        let i = b.int()?;
        usize::try_from(i)
            .ok()
            .filter(|&i| i < strings)
            .ok_or_else(|| JfrError::Invalid(format!("metadata string index {i} is no string")))
    };
    let name = string(b)?;
    let n = b.count("a metadata element's attribute count")?;
    let attributes = (0..n)
        .map(|_| Ok((string(b)?, string(b)?)))
        .collect::<Result<Vec<_>, JfrError>>()?;
    let n = b.count("a metadata element's child count")?;
    let children = (0..n)
        .map(|_| element(b, strings, depth + 1))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Element {
        name,
        attributes,
        children,
    })
}

fn class_of(s: &Strings, e: &Element) -> Result<(i64, Class), JfrError> {
    let name: Box<str> = s.attribute(e, "name").unwrap_or_default().into();
    let id = s.number(e, "id")?;
    let fields = e
        .children
        .iter()
        .filter(|c| s.is(c, "field"))
        .map(|f| {
            Ok(Field {
                name: s.attribute(f, "name").unwrap_or_default().into(),
                class: s.number(f, "class")?,
                pooled: s.attribute(f, "constantPool") == Some("true"),
                array: s.attribute(f, "dimension").is_some_and(|d| d != "0"),
            })
        })
        .collect::<Result<Vec<_>, JfrError>>()?;
    let layout = match &*name {
        "boolean" => Layout::Boolean,
        "byte" => Layout::Byte,
        "short" => Layout::Short,
        "char" => Layout::Char,
        "int" => Layout::Int,
        "long" => Layout::Long,
        "float" => Layout::Float,
        "double" => Layout::Double,
        "java.lang.String" => Layout::String,
        _ => Layout::Fields,
    };
    Ok((
        id,
        Class {
            name,
            layout,
            fields,
        },
    ))
}
