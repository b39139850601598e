//! What the tests share: the workspace root, the committed schemas of `docs/schemas/`, a
//! validator that names every violation, and the decoding of a printed document as its type.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed schema `docs/schemas/<file>`, as consumers get it.
pub fn schema(file: &str) -> Value {
    let path = workspace_root().join("docs/schemas").join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("{} is not JSON: {err}", path.display()))
}

/// The violations of `instance` against the committed schema `file`, one line each.
pub fn violations(file: &str, instance: &Value) -> Vec<String> {
    let schema = schema(file);
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|err| panic!("docs/schemas/{file} does not compile: {err}"));
    validator
        .iter_errors(instance)
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect()
}

/// Panics, naming every violation and the document, unless `instance` satisfies `file`.
pub fn assert_valid(file: &str, instance: &Value) {
    let found = violations(file, instance);
    assert!(
        found.is_empty(),
        "{file} rejects the document:\n{}\n{}",
        found.join("\n"),
        serde_json::to_string_pretty(instance).unwrap_or_default()
    );
}

/// A printed document read as the herd type `T` it is, for what a test asserts of its meaning
/// (the schema is checked on the document as printed); the test fails, showing the document,
/// when it is not a `T`.
pub fn decode<T: DeserializeOwned>(doc: &Value) -> T {
    serde_json::from_value(doc.clone()).unwrap_or_else(|err| {
        panic!(
            "not a {} ({err}):\n{}",
            std::any::type_name::<T>(),
            serde_json::to_string_pretty(doc).unwrap_or_default()
        )
    })
}
