//! Checking a JSON value against a [`Schema`]: the first violation, as `invalid_request` naming
//! the field.
//!
//! Fields are named by their path in the request (`accept.timeoutSec`, `worktree.branch`,
//! `accept.paths[2]`), so a caller can point at the exact value that was refused. Checks run in a
//! fixed order (type, literal, then the keywords of that type; in an object: unknown fields,
//! missing required ones, then each property in schema order), so the same request always gets
//! the same answer.

use std::cmp::Ordering;
use std::fmt::Display;

use herd_core::{Error, ErrorCode};
use serde_json::{Number, Value};

use crate::schema::{JsonType, Schema};

/// The longest piece of a caller's own field name that an error repeats.
const MAX_KEY_CHARS: usize = 64;

/// Checks `value` against `schema`; `root` names the value itself in messages ("the request").
pub(crate) fn check(schema: &Schema, value: &Value, root: Option<&str>) -> Result<(), Error> {
    Walk {
        root: root.unwrap_or("value"),
    }
    .node(schema, value, "")
}

/// Fills the `default` of every absent property, recursively, into a value that passed [`check`].
pub(crate) fn apply_defaults(schema: &Schema, value: &mut Value) {
    if let Value::Object(map) = value {
        for (name, property) in &schema.properties {
            match map.get_mut(name) {
                Some(present) => apply_defaults(property, present),
                None => {
                    if let Some(default) = &property.default {
                        map.insert(name.clone(), default.clone());
                    }
                }
            }
        }
    }
    if let (Some(items), Value::Array(values)) = (&schema.items, &mut *value) {
        for item in values {
            apply_defaults(items, item);
        }
    }
    let chosen = schema
        .alternatives()
        .iter()
        .find(|member| check(member, value, None).is_ok());
    if let Some(member) = chosen {
        apply_defaults(member, value);
    }
}

/// Compares two JSON numbers exactly when both are integers, else as floats.
pub(crate) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_i128(a), as_i128(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

struct Walk<'a> {
    root: &'a str,
}

impl Walk<'_> {
    fn fail(&self, path: &str, message: impl Display) -> Error {
        if path.is_empty() {
            Error::new(
                ErrorCode::InvalidRequest,
                format!("{} {message}", self.root),
            )
        } else {
            Error::invalid(path, format!("{path} {message}"))
        }
    }

    fn node(&self, schema: &Schema, value: &Value, path: &str) -> Result<(), Error> {
        if !schema.types.is_empty() && !schema.types.iter().any(|ty| type_matches(*ty, value)) {
            return Err(self.fail(path, format!("must be {}", describe_types(&schema.types))));
        }
        if let Some(expected) = &schema.const_value {
            if value != expected {
                return Err(self.fail(path, format!("must be {expected}")));
            }
        }
        if let Some(values) = &schema.enum_values {
            if !values.contains(value) {
                return Err(self.fail(path, format!("must be one of {}", join_literals(values))));
            }
        }
        match value {
            Value::String(text) => self.string(schema, text, path)?,
            Value::Number(number) => self.number(schema, number, path)?,
            Value::Array(items) => self.array(schema, items, path)?,
            Value::Object(map) => self.object(schema, map, path)?,
            Value::Bool(_) | Value::Null => {}
        }
        if !schema.any_of.is_empty() {
            self.alternatives(&schema.any_of, value, path, false)?;
        }
        if !schema.one_of.is_empty() {
            self.alternatives(&schema.one_of, value, path, true)?;
        }
        Ok(())
    }

    fn string(&self, schema: &Schema, text: &str, path: &str) -> Result<(), Error> {
        let count = text.chars().count() as u64;
        if let Some(min) = schema.min_length {
            if count < min {
                let message = if min == 1 {
                    "must not be empty".to_owned()
                } else {
                    format!("must be at least {min} characters (got {count})")
                };
                return Err(self.fail(path, message));
            }
        }
        if let Some(max) = schema.max_length {
            if count > max {
                return Err(self.fail(
                    path,
                    format!("must be at most {max} characters (got {count})"),
                ));
            }
        }
        if let Some(pattern) = &schema.pattern {
            if !pattern.is_match(text) {
                let message = match &schema.pattern_message {
                    Some(message) => message.clone(),
                    None => format!("must match the pattern {}", pattern.as_str()),
                };
                return Err(self.fail(path, message));
            }
        }
        Ok(())
    }

    fn number(&self, schema: &Schema, number: &Number, path: &str) -> Result<(), Error> {
        if let Some(min) = &schema.minimum {
            if compare(number, min) == Some(Ordering::Less) {
                return Err(self.fail(path, format!("must be at least {min} (got {number})")));
            }
        }
        if let Some(max) = &schema.maximum {
            if compare(number, max) == Some(Ordering::Greater) {
                return Err(self.fail(path, format!("must be at most {max} (got {number})")));
            }
        }
        Ok(())
    }

    fn array(&self, schema: &Schema, items: &[Value], path: &str) -> Result<(), Error> {
        let count = items.len() as u64;
        if let Some(min) = schema.min_items {
            if count < min {
                return Err(self.fail(path, format!("must have at least {min} {}", plural(min))));
            }
        }
        if let Some(max) = schema.max_items {
            if count > max {
                return Err(self.fail(path, format!("must have at most {max} {}", plural(max))));
            }
        }
        if let Some(item_schema) = &schema.items {
            for (idx, item) in items.iter().enumerate() {
                self.node(item_schema, item, &format!("{path}[{idx}]"))?;
            }
        }
        Ok(())
    }

    fn object(
        &self,
        schema: &Schema,
        map: &serde_json::Map<String, Value>,
        path: &str,
    ) -> Result<(), Error> {
        if schema.additional_properties == Some(false) {
            if let Some(unknown) = map.keys().find(|key| schema.property(key).is_none()) {
                let field = child(path, &display_key(unknown));
                return Err(Error::invalid(
                    &field,
                    format!("{field} is not a known field"),
                ));
            }
        }
        if let Some(missing) = schema.required.iter().find(|name| !map.contains_key(*name)) {
            let field = child(path, missing);
            return Err(Error::invalid(&field, format!("{field} is required")));
        }
        for (name, property) in &schema.properties {
            if let Some(value) = map.get(name) {
                self.node(property, value, &child(path, name))?;
            }
        }
        Ok(())
    }

    /// `anyOf` (`exactly_one` false) or `oneOf`: passes when a member (exactly one) passes,
    /// else reports the error of the member the value was evidently meant for.
    fn alternatives(
        &self,
        members: &[Schema],
        value: &Value,
        path: &str,
        exactly_one: bool,
    ) -> Result<(), Error> {
        let results: Vec<Result<(), Error>> = members
            .iter()
            .map(|member| self.node(member, value, path))
            .collect();
        let passed = results.iter().filter(|res| res.is_ok()).count();
        if exactly_one && passed > 1 {
            return Err(self.fail(path, "matches more than one allowed form"));
        }
        if passed > 0 {
            return Ok(());
        }
        // Objects told apart by a constant property (`basis.kind`): judge by that property.
        if let (Some(key), Value::Object(map)) = (discriminator(members), value) {
            let field = child(path, key);
            let Some(given) = map.get(key) else {
                return Err(Error::invalid(&field, format!("{field} is required")));
            };
            let matching = members.iter().position(|member| {
                member.property(key).and_then(|p| p.const_value.as_ref()) == Some(given)
            });
            return match matching {
                Some(idx) => results.into_iter().nth(idx).unwrap_or(Ok(())),
                None => {
                    let literals: Vec<Value> = members
                        .iter()
                        .filter_map(|member| member.property(key)?.const_value.clone())
                        .collect();
                    Err(Error::invalid(
                        &field,
                        format!("{field} must be one of {}", join_literals(&literals)),
                    ))
                }
            };
        }
        let fitting = members.iter().position(|member| fits(member, value));
        match fitting {
            Some(idx) => results.into_iter().nth(idx).unwrap_or(Ok(())),
            None => {
                let forms: Vec<String> = members.iter().map(describe_member).collect();
                Err(self.fail(path, format!("must be {}", join_or(&forms))))
            }
        }
    }
}

/// The first property every member declares as a `const`, if the members are objects.
fn discriminator(members: &[Schema]) -> Option<&str> {
    let first = members.first()?;
    first
        .properties
        .iter()
        .map(|(name, _)| name.as_str())
        .find(|name| {
            members.iter().all(|member| {
                member.types == [JsonType::Object]
                    && member
                        .property(name)
                        .is_some_and(|p| p.const_value.is_some())
            })
        })
}

/// Whether `value` has the shape of `member` (its type and, for a literal member, its value).
fn fits(member: &Schema, value: &Value) -> bool {
    let type_fits =
        member.types.is_empty() || member.types.iter().any(|ty| type_matches(*ty, value));
    let literal_fits = member
        .literals()
        .is_none_or(|literals| literals.contains(&value));
    type_fits && literal_fits
}

fn type_matches(ty: JsonType, value: &Value) -> bool {
    match (ty, value) {
        (JsonType::String, Value::String(_)) => true,
        (JsonType::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
        (JsonType::Number, Value::Number(_)) => true,
        (JsonType::Boolean, Value::Bool(_)) => true,
        (JsonType::Object, Value::Object(_)) => true,
        (JsonType::Array, Value::Array(_)) => true,
        (JsonType::Null, Value::Null) => true,
        _ => false,
    }
}

fn describe_types(types: &[JsonType]) -> String {
    let names: Vec<String> = types
        .iter()
        .map(|ty| {
            match ty {
                JsonType::String => "a string",
                JsonType::Integer => "an integer",
                JsonType::Number => "a number",
                JsonType::Boolean => "a boolean",
                JsonType::Object => "an object",
                JsonType::Array => "an array",
                JsonType::Null => "null",
            }
            .to_owned()
        })
        .collect();
    join_or(&names)
}

fn describe_member(member: &Schema) -> String {
    match member.literals() {
        Some(literals) => literals
            .iter()
            .map(|value| value.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
        None if member.types.is_empty() => "a value".to_owned(),
        None => describe_types(&member.types),
    }
}

fn join_or(parts: &[String]) -> String {
    match parts {
        [] => "nothing".to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn join_literals(values: &[Value]) -> String {
    values
        .iter()
        .map(|value| value.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "item" } else { "items" }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// A caller's field name as an error repeats it: controls, separators and bidi controls as
/// `\u{…}`, and bounded, so the error stays one honest line.
fn display_key(key: &str) -> String {
    let mut out = String::new();
    for (idx, c) in key.chars().enumerate() {
        if idx == MAX_KEY_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || is_invisible_format(c) {
            out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> Schema {
        crate::schema::parse(&value.to_string()).unwrap()
    }

    fn check_err(schema: &Schema, value: Value) -> (Option<String>, String) {
        let err = check(schema, &value, Some("the request")).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        (err.field, err.message)
    }

    #[test]
    fn unknown_keys_are_shown_escaped_and_bounded() {
        let s = schema(json!({"type": "object", "properties": {}, "additionalProperties": false}));
        let (field, _) = check_err(&s, json!({"a\u{202e}b\n": 1}));
        assert_eq!(field.as_deref(), Some("a\\u{202e}b\\u{000a}"));
        let long = "k".repeat(500);
        let (field, _) = check_err(&s, json!({ long: 1 }));
        assert_eq!(field.unwrap().chars().count(), MAX_KEY_CHARS + 1);
    }

    #[test]
    fn integers_are_compared_exactly() {
        let s = schema(json!({"type": "integer", "maximum": 9007199254740993u64}));
        assert!(check(&s, &json!(9007199254740993u64), None).is_ok());
        assert!(check(&s, &json!(9007199254740994u64), None).is_err());
        assert!(check(&s, &json!(1.5), None).is_err());
    }

    #[test]
    fn one_of_refuses_two_matches() {
        let s = schema(json!({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 1}]}));
        let err = check(&s, &json!("x"), None).unwrap_err();
        assert_eq!(err.message, "value matches more than one allowed form");
        assert!(check(&s, &json!(""), None).is_ok());
    }

    #[test]
    fn defaults_fill_absent_properties_only() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {
                    "n": {"type": "integer", "default": 1},
                    "m": {"type": "integer", "default": 2}
                }, "additionalProperties": false}
            },
            "additionalProperties": false
        }));
        let mut value = json!({"a": {"m": 7}});
        apply_defaults(&s, &mut value);
        assert_eq!(value, json!({"a": {"n": 1, "m": 7}}));
        let mut empty = json!({});
        apply_defaults(&s, &mut empty);
        assert_eq!(empty, json!({}));
    }
}
