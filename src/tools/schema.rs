//! The JSON Schema of a tool's input as the model sees it: generated from the input type by
//! schemars, then made compact without losing meaning, because every schema travels in every
//! request. Optional fields are plain (no `null` alternative, no `"default": null`: leaving a
//! field out is how the model says "none"), integer formats go (`uint32`), and a choice of
//! string constants becomes an `enum` whose descriptions join the field's description.

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The JSON Schema of an input type, in the plain form model APIs accept (no `$schema`, no
/// `title`, `definitions` inlined where schemars put them under `$defs`), made compact.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    compact(&mut value);
    value
}

/// Make `schema` (and every schema inside it) compact, in place.
pub fn compact(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    not_null(obj);
    // Doc comments wrap lines; the model needs no line breaks inside a sentence.
    if let Some(Value::String(d)) = obj.get_mut("description") {
        *d = d.replace('\n', " ");
    }
    if matches!(obj.get("minimum"), Some(m) if m == 0)
        && obj
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("uint"))
    {
        obj.remove("minimum");
    }
    if obj
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| f.starts_with("uint") || f.starts_with("int") || f == "double")
    {
        obj.remove("format");
    }
    string_choice(obj);
    for (key, value) in obj.iter_mut() {
        match key.as_str() {
            "properties" => {
                if let Some(props) = value.as_object_mut() {
                    props.values_mut().for_each(compact);
                }
            }
            "items" => {
                // An item type's own doc is about the Rust type; the field says what it holds.
                if let Some(item) = value.as_object_mut() {
                    item.remove("description");
                }
                compact(value)
            }
            "additionalProperties" => compact(value),
            "anyOf" | "oneOf" | "allOf" => {
                if let Some(list) = value.as_array_mut() {
                    list.iter_mut().for_each(compact);
                }
            }
            _ => {}
        }
    }
}

/// An optional field's schema without its `null` alternative and `"default": null`.
fn not_null(obj: &mut Map<String, Value>) {
    // `false` is what a missing boolean means anyway.
    if obj
        .get("default")
        .is_some_and(|d| d.is_null() || *d == Value::Bool(false))
    {
        obj.remove("default");
    }
    if let Some(Value::Array(types)) = obj.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if rest.len() != types.len() {
            let plain = match rest.len() {
                1 => rest[0].clone(),
                _ => Value::Array(rest),
            };
            obj.insert("type".into(), plain);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    if let Some(Value::Array(any)) = obj.get("anyOf")
        && any.len() == 2
        && any.iter().any(is_null)
        && let Some(Value::Object(inner)) = any.iter().find(|v| !is_null(v)).cloned()
    {
        obj.remove("anyOf");
        for (k, v) in inner {
            // The field's own description says more than the inner type's.
            obj.entry(k).or_insert(v);
        }
    }
}

/// `oneOf` string constants (a Rust enum) as `enum`, their descriptions folded into the
/// field's: `"<field>\n- <value>: <description>"` per value.
fn string_choice(obj: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = obj.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut lines = Vec::new();
    for v in variants {
        let (Some(c), Some("string")) = (
            v.get("const").and_then(Value::as_str),
            v.get("type").and_then(Value::as_str),
        ) else {
            return;
        };
        values.push(Value::String(c.to_string()));
        if let Some(d) = v.get("description").and_then(Value::as_str) {
            lines.push(format!("- {c}: {d}"));
        }
    }
    obj.remove("oneOf");
    obj.insert("type".into(), Value::String("string".into()));
    obj.insert("enum".into(), Value::Array(values));
    if !lines.is_empty() {
        let head = obj
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let text = if head.is_empty() {
            lines.join("\n")
        } else {
            format!("{head}\n{}", lines.join("\n"))
        };
        obj.insert("description".into(), Value::String(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Mode {
        /// Lines.
        Content,
        /// Paths.
        Files,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Input {
        /// What to find.
        pattern: String,
        /// How many.
        limit: Option<usize>,
        /// Where.
        path: Option<String>,
        /// The shape of the output.
        mode: Option<Mode>,
        list: Vec<u32>,
        /// Items.
        items: Vec<Item>,
        kind: Option<Kind>,
    }

    /// About the Rust type,
    /// over two lines.
    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Item {
        /// A name
        /// over two lines.
        name: String,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Kind {
        A,
        B,
    }

    #[test]
    fn optional_fields_are_plain_and_choices_are_enums() {
        assert_eq!(
            schema_for::<Input>(),
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "What to find."},
                    "limit": {"type": "integer", "description": "How many."},
                    "path": {"type": "string", "description": "Where."},
                    "mode": {
                        "type": "string",
                        "enum": ["content", "files"],
                        "description": "The shape of the output.\n- content: Lines.\n- files: Paths."
                    },
                    "list": {"type": "array", "items": {"type": "integer"}},
                    "items": {
                        "type": "array",
                        "description": "Items.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "description": "A name over two lines."}
                            },
                            "required": ["name"]
                        }
                    },
                    "kind": {"type": "string", "enum": ["A", "B"]}
                },
                "required": ["pattern", "list", "items"]
            })
        );
    }
}
