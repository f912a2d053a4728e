//! Tool input schemas that generic MCP clients can fill. schemars describes an optional
//! integer as `["integer", "null"]`, an optional enum as `anyOf` of a `$ref` and `null`, and
//! an enum with documented variants as a `oneOf` of constants; form-building clients (the MCP
//! Inspector among them) send text for the first and cannot render the others. [`flatten`]
//! rewrites a schema into the plain form that says the same: no `$ref`/`$defs`, no `null`
//! alternatives or `null` defaults (an omitted argument is the absent value), enums as one flat `enum` whose
//! values' meanings join the description, and no non-standard numeric `format`s.

use serde_json::{Map, Value};

/// The plain form of an object schema made by schemars (see the module documentation).
pub fn flatten(mut schema: Map<String, Value>) -> Map<String, Value> {
    let defs = match schema.remove("$defs") {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    let mut root = Value::Object(schema);
    walk(&mut root, &defs);
    match root {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Numeric formats schemars adds that JSON Schema does not define; `minimum` says the rest.
const NUMERIC_FORMATS: [&str; 9] = [
    "uint", "uint8", "uint16", "uint32", "uint64", "int32", "int64", "double", "float",
];

fn walk(node: &mut Value, defs: &Map<String, Value>) {
    match node {
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, defs)),
        Value::Object(m) => {
            drop_null_alternative(m, "anyOf");
            drop_null_alternative(m, "oneOf");
            inline_ref(m, defs);
            drop_null_type(m);
            flat_enum(m);
            if m.get("default") == Some(&Value::Null) {
                m.remove("default");
            }
            if m.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| NUMERIC_FORMATS.contains(&f))
            {
                m.remove("format");
            }
            for v in m.values_mut() {
                walk(v, defs);
            }
        }
        _ => {}
    }
}

/// Merges `from` into `into`; keys `into` already has win (a property's own description is
/// more specific than its type's).
fn merge_into(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (k, v) in from {
        into.entry(k).or_insert(v);
    }
}

fn inline_ref(m: &mut Map<String, Value>, defs: &Map<String, Value>) {
    // A definition may itself refer to another; a few rounds cover any nesting schemars makes.
    for _ in 0..8 {
        let Some(Value::String(r)) = m.get("$ref") else {
            return;
        };
        let Some(def) = r.strip_prefix("#/$defs/").and_then(|n| defs.get(n)) else {
            return;
        };
        let def = def.clone();
        m.remove("$ref");
        if let Value::Object(d) = def {
            merge_into(m, d);
        }
    }
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
}

fn drop_null_alternative(m: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(alts)) = m.get_mut(key) else {
        return;
    };
    if !alts.iter().any(is_null_schema) {
        return;
    }
    alts.retain(|v| !is_null_schema(v));
    if alts.len() == 1 {
        if let Some(Value::Object(only)) = alts.pop() {
            m.remove(key);
            merge_into(m, only);
        }
    }
}

fn drop_null_type(m: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = m.get_mut("type") else {
        return;
    };
    types.retain(|t| t.as_str() != Some("null"));
    if types.len() == 1 {
        let only = types.remove(0);
        m.insert("type".into(), only);
    }
}

/// `oneOf` of string constants (each with its own description) becomes one `enum`, the
/// constants' descriptions appended to the schema's.
fn flat_enum(m: &mut Map<String, Value>) {
    let Some(Value::Array(alts)) = m.get("oneOf") else {
        return;
    };
    let mut names = Vec::new();
    let mut meanings = Vec::new();
    for alt in alts {
        let Some(name) = alt.get("const").and_then(Value::as_str) else {
            return;
        };
        names.push(Value::String(name.to_string()));
        meanings.push(match alt.get("description").and_then(Value::as_str) {
            Some(d) => format!("{name} ({})", d.trim().trim_end_matches('.')),
            None => name.to_string(),
        });
    }
    m.remove("oneOf");
    m.insert("type".into(), Value::String("string".into()));
    m.insert("enum".into(), Value::Array(names));
    let own = m
        .get("description")
        .and_then(Value::as_str)
        .map(|d| d.trim().trim_end_matches('.').to_string());
    let listed = format!("one of: {}", meanings.join("; "));
    let description = match own {
        Some(d) if !d.is_empty() => format!("{d}; {listed}"),
        _ => listed,
    };
    m.insert("description".into(), Value::String(description));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test input is an object"),
        }
    }

    #[test]
    fn optional_integers_are_plain_integers_without_formats() {
        let s = flatten(obj(json!({
            "type": "object",
            "properties": {"limit": {
                "type": ["integer", "null"], "format": "uint", "minimum": 0, "default": null
            }}
        })));
        assert_eq!(
            s["properties"]["limit"],
            json!({"type": "integer", "minimum": 0})
        );
    }

    #[test]
    fn optional_enum_refs_become_one_flat_enum() {
        let s = flatten(obj(json!({
            "type": "object",
            "$defs": {"Mode": {"description": "How.", "oneOf": [
                {"type": "string", "const": "a", "description": "First."},
                {"type": "string", "const": "b"}
            ]}},
            "properties": {"mode": {
                "anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}],
                "description": "The mode"
            }}
        })));
        assert!(s.get("$defs").is_none());
        assert_eq!(
            s["properties"]["mode"],
            json!({
                "type": "string",
                "enum": ["a", "b"],
                "description": "The mode; one of: a (First); b"
            })
        );
    }

    #[test]
    fn a_oneof_that_is_not_constants_is_left_alone() {
        let mixed = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
        let s = flatten(obj(
            json!({"type": "object", "properties": {"x": mixed.clone()}}),
        ));
        assert_eq!(s["properties"]["x"], mixed);
    }
}
