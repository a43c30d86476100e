//! The nodes of a moatless-tree-search dump read in one pass over its text, without recursion:
//! a tree of any depth (a whole tree parsed as one value stopped at serde_json's 128 levels,
//! about 63 nodes deep). The depth is bounded only by the document's size (`MAX_DOCUMENT`) and
//! costs a frame of a few words per level; a node's own fields (`action`, `observation`,
//! `message`, `node_id`) are parsed each on its own, within serde_json's 128 levels.
//!
//! The text has been parsed once already (`RawValue`), so it is valid JSON here: the pass
//! follows strings and brackets, and hands each own field's text to serde_json; every byte is
//! looked at once by the pass and once by the parse of the field holding it.

use serde_json::Value;

/// One node: its own fields and its children (their indices), in the order of the text.
#[derive(Debug, Default)]
pub struct Node {
    pub id: Option<i64>,
    pub action: Value,
    pub observation: Value,
    pub message: Value,
    pub children: Vec<usize>,
}

const FIELDS: [&str; 5] = ["node_id", "action", "observation", "message", "children"];

/// An open object or array: the node it is (an object), or whose children it lists (an array).
struct Frame {
    object: bool,
    node: Option<usize>,
    children_of: Option<usize>,
    /// In an object: the next string is a key; the last key read, when it is one of [`FIELDS`].
    key_next: bool,
    key: Option<usize>,
    /// In a node: the own field whose value is being read, and where its text starts.
    field: Option<(usize, usize)>,
}

/// The nodes of the tree whose root is the object `text` (node 0 is the root).
pub fn nodes(text: &str) -> Result<Vec<Node>, serde_json::Error> {
    let bytes = text.as_bytes();
    let mut nodes: Vec<Node> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i + 1);
                if let Some(top) = stack.last_mut().filter(|f| f.key_next) {
                    let key = text.get(i + 1..end).unwrap_or_default();
                    top.key = FIELDS.iter().position(|f| *f == key);
                    top.key_next = false;
                }
                i = end + 1;
                continue;
            }
            b':' => {
                if let Some(top) = stack.last_mut().filter(|f| f.node.is_some()) {
                    top.field = top.key.filter(|k| FIELDS[*k] != "children").map(|k| (k, i + 1));
                }
            }
            open @ (b'{' | b'[') => {
                let parent = stack.last();
                let listing = parent.and_then(|p| p.children_of);
                let node = match (open, parent) {
                    (b'{', None) => Some(0),
                    (b'{', Some(_)) if listing.is_some() => Some(nodes.len()),
                    _ => None,
                };
                let children_of = parent
                    .filter(|p| open == b'[' && p.field.is_none() && p.key.is_some_and(|k| FIELDS[k] == "children"))
                    .and_then(|p| p.node);
                if let Some(n) = node {
                    if let Some(p) = listing.and_then(|p| nodes.get_mut(p)) {
                        p.children.push(n);
                    }
                    nodes.push(Node::default());
                }
                let object = open == b'{';
                stack.push(Frame { object, node, children_of, key_next: object, key: None, field: None });
            }
            b',' | b'}' | b']' => {
                if let Some(top) = stack.last_mut() {
                    if let (Some(n), Some((k, start))) = (top.node, top.field.take()) {
                        let value: Value = serde_json::from_str(text.get(start..i).unwrap_or_default())?;
                        if let Some(node) = nodes.get_mut(n) {
                            set(node, FIELDS[k], value);
                        }
                    }
                    top.key_next = top.object;
                    top.key = None;
                }
                if bytes[i] != b',' {
                    stack.pop();
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(nodes)
}

fn set(node: &mut Node, field: &str, value: Value) {
    match field {
        "node_id" => node.id = value.as_i64().or_else(|| value.as_f64().map(|f| f as i64)),
        "action" => node.action = value,
        "observation" => node.observation = value,
        _ => node.message = value,
    }
}

/// The index of the quote that ends the string whose text starts at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> usize {
    loop {
        match memchr::memchr2(b'"', b'\\', bytes.get(from..).unwrap_or_default()) {
            Some(k) if bytes[from + k] == b'\\' => from += k + 2,
            Some(k) => return from + k,
            None => return bytes.len(),
        }
    }
}
