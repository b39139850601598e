//! The subset of JSON Schema the tool files use, parsed strictly and kept in file order.
//!
//! The tool schemas are hand-written files, and one of them is the source of truth for both the
//! generated docs and request validation. A keyword this subset does not implement would be
//! silently ignored by the validator, so an unknown keyword is a load error instead. Properties
//! keep the order of the file: the docs tables and the registry a host registers list them in
//! that order (serde_json's own map would sort them).
//!
//! The subset: `type` (one name or a list), `description`, `properties`, `required`,
//! `additionalProperties` (must be `false` on every object), `items`, `enum`, `const`,
//! `minimum`/`maximum`, `minLength`/`maxLength` (in characters), `minItems`/`maxItems`,
//! `pattern` (ECMA-262 syntax that `regex-lite` shares: classes, `\uXXXX` escapes, anchors,
//! repetition), `anyOf`, `oneOf`, `default`, and one annotation of herd's own,
//! `x-pattern-message`, the text an error shows when `pattern` does not match.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// A JSON type name as `type` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    String,
    Integer,
    Number,
    Boolean,
    Object,
    Array,
    Null,
}

impl JsonType {
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::Null => "null",
        }
    }

    fn parse(name: &str) -> Option<JsonType> {
        Some(match name {
            "string" => JsonType::String,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "boolean" => JsonType::Boolean,
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            "null" => JsonType::Null,
            _ => return None,
        })
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A compiled `pattern`, with the source it was written as.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    regex: regex_lite::Regex,
}

impl Pattern {
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Returns whether `text` matches; like ECMA-262, the pattern is searched, not anchored.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.source == other.source
    }
}

/// One schema node of the subset.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// The allowed types; empty means "any" (a node that only has `anyOf`, `const`, …).
    pub types: Vec<JsonType>,
    pub description: Option<String>,
    /// Object properties in file order.
    pub properties: Vec<(String, Schema)>,
    pub required: Vec<String>,
    pub additional_properties: Option<bool>,
    pub items: Option<Box<Schema>>,
    pub enum_values: Option<Vec<Value>>,
    pub const_value: Option<Value>,
    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub pattern: Option<Pattern>,
    pub pattern_message: Option<String>,
    pub any_of: Vec<Schema>,
    pub one_of: Vec<Schema>,
    pub default: Option<Value>,
}

impl Schema {
    /// Returns the schema of property `name`, if the node declares it.
    pub fn property(&self, name: &str) -> Option<&Schema> {
        self.properties
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, schema)| schema)
    }

    /// Returns whether property `name` is in `required`.
    pub fn requires(&self, name: &str) -> bool {
        self.required.iter().any(|key| key == name)
    }

    /// The literal values the node allows (`const` or `enum`), if it is a literal node.
    pub fn literals(&self) -> Option<Vec<&Value>> {
        if let Some(value) = &self.const_value {
            return Some(vec![value]);
        }
        self.enum_values
            .as_ref()
            .map(|values| values.iter().collect())
    }

    /// The alternatives of `anyOf` or `oneOf`, whichever the node has.
    pub fn alternatives(&self) -> &[Schema] {
        if self.any_of.is_empty() {
            &self.one_of
        } else {
            &self.any_of
        }
    }
}

/// What is wrong with a schema file, and where in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", if at.is_empty() { "(root)" } else { at.as_str() })]
pub struct SchemaError {
    /// The path of the node inside the file, e.g. `properties.accept.properties.run`; empty for
    /// the root.
    pub at: String,
    pub message: String,
}

/// Parses one schema document from JSON text.
pub fn parse(text: &str) -> Result<Schema, ParseError> {
    let raw: RawSchema = serde_json::from_str(text).map_err(ParseError::Json)?;
    convert(raw, "").map_err(ParseError::Schema)
}

/// Why a schema document could not be parsed.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("not a schema of the supported subset: {0}")]
    Json(#[source] serde_json::Error),
    #[error("{0}")]
    Schema(#[source] SchemaError),
}

/// The file form of a node; unknown keywords are refused here.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSchema {
    #[serde(rename = "type")]
    types: Option<OneOrMany>,
    description: Option<String>,
    properties: Option<OrderedProperties>,
    required: Option<Vec<String>>,
    #[serde(rename = "additionalProperties")]
    additional_properties: Option<bool>,
    items: Option<Box<RawSchema>>,
    #[serde(rename = "enum")]
    enum_values: Option<Vec<Value>>,
    // `Some(Value::Null)` must survive: `"const": null` is a constraint, not an absence.
    #[serde(rename = "const", default, deserialize_with = "present")]
    const_value: Option<Value>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    #[serde(rename = "minLength")]
    min_length: Option<u64>,
    #[serde(rename = "maxLength")]
    max_length: Option<u64>,
    #[serde(rename = "minItems")]
    min_items: Option<u64>,
    #[serde(rename = "maxItems")]
    max_items: Option<u64>,
    pattern: Option<String>,
    #[serde(rename = "x-pattern-message")]
    pattern_message: Option<String>,
    #[serde(rename = "anyOf")]
    any_of: Option<Vec<RawSchema>>,
    #[serde(rename = "oneOf")]
    one_of: Option<Vec<RawSchema>>,
    #[serde(default, deserialize_with = "present")]
    default: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// `properties` as written: an object whose keys keep their order and may not repeat.
pub(crate) struct OrderedProperties(Vec<(String, RawSchema)>);

impl<'de> Deserialize<'de> for OrderedProperties {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PropertiesVisitor;

        impl<'de> Visitor<'de> for PropertiesVisitor {
            type Value = OrderedProperties;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of property schemas")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, RawSchema)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if out.iter().any(|(existing, _)| *existing == key) {
                        return Err(de::Error::custom(format!("property `{key}` appears twice")));
                    }
                    let value = map.next_value::<RawSchema>()?;
                    out.push((key, value));
                }
                Ok(OrderedProperties(out))
            }
        }

        deserializer.deserialize_map(PropertiesVisitor)
    }
}

fn invalid(at: &str, message: impl Into<String>) -> SchemaError {
    SchemaError {
        at: at.to_owned(),
        message: message.into(),
    }
}

fn convert(raw: RawSchema, at: &str) -> Result<Schema, SchemaError> {
    let types = convert_types(raw.types, at)?;
    let allows = |ty: JsonType| types.is_empty() || types.contains(&ty);

    let mut properties = Vec::new();
    if let Some(OrderedProperties(raw_properties)) = raw.properties {
        for (name, raw_property) in raw_properties {
            let child_at = nested(at, &format!("properties.{name}"));
            properties.push((name, convert(raw_property, &child_at)?));
        }
    }
    let required = raw.required.unwrap_or_default();
    check_required(&required, &properties, at)?;
    // Requests are strict (unknown fields are refused), so every object must say so; a schema
    // that forgot would let any field through.
    if types.contains(&JsonType::Object) && raw.additional_properties != Some(false) {
        return Err(invalid(
            at,
            "an object must set `\"additionalProperties\": false`",
        ));
    }
    if (!properties.is_empty() || raw.additional_properties.is_some()) && !allows(JsonType::Object)
    {
        return Err(invalid(at, "`properties` needs `type` to allow object"));
    }

    let items = convert_items(raw.items, &types, at)?;

    if let Some(values) = &raw.enum_values {
        if values.is_empty() {
            return Err(invalid(at, "`enum` lists no value"));
        }
    }
    check_range(
        at,
        "minimum",
        "maximum",
        raw.minimum.as_ref(),
        raw.maximum.as_ref(),
    )?;
    check_bounds(at, "minLength", "maxLength", raw.min_length, raw.max_length)?;
    check_bounds(at, "minItems", "maxItems", raw.min_items, raw.max_items)?;

    let pattern = convert_pattern(raw.pattern, raw.pattern_message.is_some(), at)?;

    let alternatives = |raw: Option<Vec<RawSchema>>, keyword: &str| {
        let mut out = Vec::new();
        for (idx, member) in raw.unwrap_or_default().into_iter().enumerate() {
            out.push(convert(member, &nested(at, &format!("{keyword}[{idx}]")))?);
        }
        Ok::<_, SchemaError>(out)
    };
    let any_of = alternatives(raw.any_of, "anyOf")?;
    let one_of = alternatives(raw.one_of, "oneOf")?;
    if !any_of.is_empty() && !one_of.is_empty() {
        return Err(invalid(at, "use `anyOf` or `oneOf`, not both"));
    }

    let schema = Schema {
        types,
        description: raw.description,
        properties,
        required,
        additional_properties: raw.additional_properties,
        items,
        enum_values: raw.enum_values,
        const_value: raw.const_value,
        minimum: raw.minimum,
        maximum: raw.maximum,
        min_length: raw.min_length,
        max_length: raw.max_length,
        min_items: raw.min_items,
        max_items: raw.max_items,
        pattern,
        pattern_message: raw.pattern_message,
        any_of,
        one_of,
        default: raw.default,
    };
    // A default the schema itself refuses would be filled into every request and then fail it.
    if let Some(default) = &schema.default {
        if let Err(err) = crate::validate::check(&schema, default, None) {
            return Err(invalid(
                at,
                format!("`default` is not valid here: {}", err.message),
            ));
        }
    }
    Ok(schema)
}

/// The `type` keyword: one type or a list of distinct ones; none when absent.
fn convert_types(raw: Option<OneOrMany>, at: &str) -> Result<Vec<JsonType>, SchemaError> {
    match raw {
        None => Ok(Vec::new()),
        Some(OneOrMany::One(name)) => Ok(vec![type_named(&name, at)?]),
        Some(OneOrMany::Many(names)) => {
            let mut types = Vec::new();
            for name in &names {
                let ty = type_named(name, at)?;
                if types.contains(&ty) {
                    return Err(invalid(at, format!("type `{name}` is listed twice")));
                }
                types.push(ty);
            }
            if types.is_empty() {
                return Err(invalid(at, "`type` lists no type"));
            }
            Ok(types)
        }
    }
}

/// Every required property is declared, and named once.
fn check_required(
    required: &[String],
    properties: &[(String, Schema)],
    at: &str,
) -> Result<(), SchemaError> {
    for (idx, name) in required.iter().enumerate() {
        if !properties.iter().any(|(key, _)| key == name) {
            return Err(invalid(
                at,
                format!("required property `{name}` is not declared"),
            ));
        }
        if required[..idx].contains(name) {
            return Err(invalid(
                at,
                format!("required property `{name}` is listed twice"),
            ));
        }
    }
    Ok(())
}

/// The `items` keyword, which an array needs and only an array may have.
fn convert_items(
    raw: Option<Box<RawSchema>>,
    types: &[JsonType],
    at: &str,
) -> Result<Option<Box<Schema>>, SchemaError> {
    let array = types.contains(&JsonType::Array);
    match raw {
        Some(_) if !array => Err(invalid(at, "`items` needs `type` to allow array")),
        Some(item) => Ok(Some(Box::new(convert(*item, &nested(at, "items"))?))),
        None if array => Err(invalid(at, "an array must describe its `items`")),
        None => Ok(None),
    }
}

/// The `pattern` keyword compiled; its message needs it.
fn convert_pattern(
    source: Option<String>,
    has_message: bool,
    at: &str,
) -> Result<Option<Pattern>, SchemaError> {
    match source {
        Some(source) => {
            let regex = regex_lite::Regex::new(&source)
                .map_err(|err| invalid(at, format!("`pattern` does not compile: {err}")))?;
            Ok(Some(Pattern { source, regex }))
        }
        None if has_message => Err(invalid(at, "`x-pattern-message` without `pattern`")),
        None => Ok(None),
    }
}

fn nested(at: &str, step: &str) -> String {
    if at.is_empty() {
        step.to_owned()
    } else {
        format!("{at}.{step}")
    }
}

fn type_named(name: &str, at: &str) -> Result<JsonType, SchemaError> {
    JsonType::parse(name).ok_or_else(|| invalid(at, format!("unknown type `{name}`")))
}

fn check_range(
    at: &str,
    low_name: &str,
    high_name: &str,
    low: Option<&Number>,
    high: Option<&Number>,
) -> Result<(), SchemaError> {
    if let (Some(low), Some(high)) = (low, high) {
        if crate::validate::compare(low, high) == Some(std::cmp::Ordering::Greater) {
            return Err(invalid(
                at,
                format!("`{low_name}` {low} exceeds `{high_name}` {high}"),
            ));
        }
    }
    Ok(())
}

fn check_bounds(
    at: &str,
    low_name: &str,
    high_name: &str,
    low: Option<u64>,
    high: Option<u64>,
) -> Result<(), SchemaError> {
    if let (Some(low), Some(high)) = (low, high) {
        if low > high {
            return Err(invalid(
                at,
                format!("`{low_name}` {low} exceeds `{high_name}` {high}"),
            ));
        }
    }
    Ok(())
}

impl Serialize for Schema {
    /// Writes the node back as JSON Schema, properties in file order and keywords in one fixed
    /// order, so the registry a host reads is stable.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self.types.as_slice() {
            [] => {}
            [one] => map.serialize_entry("type", one.as_str())?,
            many => {
                let names: Vec<&str> = many.iter().map(|ty| ty.as_str()).collect();
                map.serialize_entry("type", &names)?;
            }
        }
        if let Some(description) = &self.description {
            map.serialize_entry("description", description)?;
        }
        if !self.properties.is_empty() || self.types.contains(&JsonType::Object) {
            map.serialize_entry("properties", &OrderedSchemas(&self.properties))?;
        }
        if !self.required.is_empty() {
            map.serialize_entry("required", &self.required)?;
        }
        if let Some(additional) = self.additional_properties {
            map.serialize_entry("additionalProperties", &additional)?;
        }
        if let Some(items) = &self.items {
            map.serialize_entry("items", items)?;
        }
        if let Some(values) = &self.enum_values {
            map.serialize_entry("enum", values)?;
        }
        if let Some(value) = &self.const_value {
            map.serialize_entry("const", value)?;
        }
        if let Some(minimum) = &self.minimum {
            map.serialize_entry("minimum", minimum)?;
        }
        if let Some(maximum) = &self.maximum {
            map.serialize_entry("maximum", maximum)?;
        }
        if let Some(min) = self.min_length {
            map.serialize_entry("minLength", &min)?;
        }
        if let Some(max) = self.max_length {
            map.serialize_entry("maxLength", &max)?;
        }
        if let Some(min) = self.min_items {
            map.serialize_entry("minItems", &min)?;
        }
        if let Some(max) = self.max_items {
            map.serialize_entry("maxItems", &max)?;
        }
        if let Some(pattern) = &self.pattern {
            map.serialize_entry("pattern", pattern.as_str())?;
        }
        if let Some(message) = &self.pattern_message {
            map.serialize_entry("x-pattern-message", message)?;
        }
        if !self.any_of.is_empty() {
            map.serialize_entry("anyOf", &self.any_of)?;
        }
        if !self.one_of.is_empty() {
            map.serialize_entry("oneOf", &self.one_of)?;
        }
        if let Some(default) = &self.default {
            map.serialize_entry("default", default)?;
        }
        map.end()
    }
}

impl schemars::JsonSchema for Schema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ParameterSchema".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "description": "A JSON Schema of the subset herd-tools reads: type, description, properties, required, additionalProperties, items, enum, const, minimum, maximum, minLength, maxLength, minItems, maxItems, pattern, x-pattern-message, anyOf, oneOf, default"
        })
    }
}

struct OrderedSchemas<'a>(&'a [(String, Schema)]);

impl Serialize for OrderedSchemas<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, schema) in self.0 {
            map.serialize_entry(name, schema)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn properties_keep_file_order() {
        let schema = parse(
            r#"{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"additionalProperties":false}"#,
        )
        .unwrap();
        let names: Vec<&str> = schema.properties.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        let written = serde_json::to_string(&schema).unwrap();
        assert!(
            written.find("zeta").unwrap() < written.find("alpha").unwrap(),
            "{written}"
        );
    }

    #[test]
    fn round_trips_through_serialize() {
        let text = r#"{"type":"object","description":"d","properties":{"a":{"description":"x","anyOf":[{"type":"object","properties":{"b":{"type":"string","minLength":1,"pattern":"\\S","x-pattern-message":"m"}},"required":["b"],"additionalProperties":false},{"type":"null"}]},"n":{"type":"integer","minimum":0,"maximum":5,"default":1},"e":{"type":"string","enum":["x","y"]},"l":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["n"],"additionalProperties":false}"#;
        let schema = parse(text).unwrap();
        let again = parse(&serde_json::to_string(&schema).unwrap()).unwrap();
        assert_eq!(schema, again);
    }

    #[test]
    fn refuses_what_the_validator_would_ignore() {
        assert!(error_of(r#"{"type":"string","format":"uri"}"#).contains("unknown field `format`"));
        assert!(error_of(r#"{"type":"strng"}"#).contains("unknown type `strng`"));
        assert_eq!(
            error_of(r#"{"type":"object","properties":{}}"#),
            "(root): an object must set `\"additionalProperties\": false`"
        );
        assert_eq!(
            error_of(
                r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["b"],"additionalProperties":false}"#
            ),
            "(root): required property `b` is not declared"
        );
        assert!(
            error_of(r#"{"type":"string","pattern":"("}"#).contains("`pattern` does not compile")
        );
        assert_eq!(
            error_of(r#"{"type":"integer","minimum":5,"maximum":1}"#),
            "(root): `minimum` 5 exceeds `maximum` 1"
        );
        assert_eq!(
            error_of(r#"{"type":"integer","maximum":3,"default":4}"#),
            "(root): `default` is not valid here: value must be at most 3 (got 4)"
        );
        assert!(
            error_of(r#"{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"string"}},"additionalProperties":false}"#)
                .contains("property `a` appears twice")
        );
        assert_eq!(
            error_of(
                r#"{"type":"object","properties":{"a":{"type":"array"}},"additionalProperties":false}"#
            ),
            "properties.a: an array must describe its `items`"
        );
    }

    #[test]
    fn const_null_is_kept() {
        let schema = parse(r#"{"const":null}"#).unwrap();
        assert_eq!(schema.const_value, Some(Value::Null));
    }

    #[test]
    fn patterns_take_ecma_unicode_escapes() {
        let schema =
            parse(r#"{"type":"string","pattern":"^[^\\u0000-\\u0020\\u2028]+$"}"#).unwrap();
        let pattern = schema.pattern.unwrap();
        assert!(pattern.is_match("abc"));
        assert!(!pattern.is_match("a b"));
        assert!(!pattern.is_match("a\u{2028}b"));
    }
}
