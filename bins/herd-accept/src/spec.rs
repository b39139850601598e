//! The accept spec: the caller's check command and its limits (docs/lifecycle.md, "Accept
//! checks").
//!
//! Two JSON forms are read, and the difference is explicit:
//!
//! - the **tool form**, exactly the `accept` parameter of the `subagent` tool:
//!   `{run, maxRetries?, timeoutSec?, paths?}` — no other key;
//! - the **file form** herd writes with [`AcceptSpec::write`] (the file a child finds through
//!   `PI_SUBAGENT_ACCEPT_FILE`), [`SpecFile`]: `{version: 1, run, maxRetries, timeoutSec, paths,
//!   sha256}`.
//!   It is recognised by its `version` key; `sha256` must then be present and match `run`, so a
//!   spec edited by hand after launch is refused rather than silently run.
//!
//! Both are validated strictly: an unknown key, a wrong type or an out-of-range value is an
//! `invalid_request` naming the field. `null` for an optional field means "omitted", because
//! clients whose generated tool schema requires every property send `null` for the ones they do
//! not set.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use herd_core::{Error, ErrorCode, sidecar};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use herd_protocol::accept::{
    MAX_RETRIES_DEFAULT, MAX_RETRIES_LIMIT, PATH_MAX_BYTES, PATHS_MAX, RUN_MAX_BYTES,
    SPEC_READ_LIMIT, SPEC_VERSION, SpecFile, TIMEOUT_SEC_DEFAULT, TIMEOUT_SEC_LIMIT,
};

const TOOL_KEYS: [&str; 4] = ["run", "maxRetries", "timeoutSec", "paths"];
const FILE_KEYS: [&str; 6] = [
    "version",
    "run",
    "maxRetries",
    "timeoutSec",
    "paths",
    "sha256",
];

/// A validated accept spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptSpec {
    /// The command, run as `sh -c <run>`; exit 0 passes.
    pub run: String,
    /// Extra child turns after a failed check (0..=5).
    pub max_retries: u32,
    /// The per-run timeout in seconds (1..=3600).
    pub timeout_sec: u64,
    /// Check files such as tests, relative to the checkout, without `./` or a trailing `/`.
    pub paths: Vec<String>,
}

impl AcceptSpec {
    /// Returns a spec running `run` with the default limits (one retry, 600 s, no paths), after
    /// validating `run`.
    pub fn new(run: impl Into<String>) -> Result<AcceptSpec, Error> {
        let run = run.into();
        validate_run(&run, "run")?;
        Ok(AcceptSpec {
            run,
            max_retries: MAX_RETRIES_DEFAULT,
            timeout_sec: TIMEOUT_SEC_DEFAULT,
            paths: Vec::new(),
        })
    }

    /// Validates the tool form `{run, maxRetries?, timeoutSec?, paths?}`.
    ///
    /// `prefix` is prepended to field names in errors (`"accept"` gives `accept.timeoutSec`),
    /// so herd-launch can validate the `accept` parameter of a request with the same rules.
    pub fn from_tool_value(value: &Value, prefix: &str) -> Result<AcceptSpec, Error> {
        let object = as_object(value, prefix)?;
        reject_unknown(object, &TOOL_KEYS, prefix)?;
        parse_fields(object, prefix)
    }

    /// Validates either form: the file form when `version` is present, else the tool form.
    pub fn from_value(value: &Value) -> Result<AcceptSpec, Error> {
        let object = as_object(value, "")?;
        if !object.contains_key("version") {
            return AcceptSpec::from_tool_value(value, "");
        }
        reject_unknown(object, &FILE_KEYS, "")?;
        let version = object
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::invalid("version", "must be a positive integer"))?;
        if version == 0 {
            return Err(Error::invalid("version", "must be a positive integer"));
        }
        if version > SPEC_VERSION {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!("accept spec version {version} is newer than the supported {SPEC_VERSION}"),
            )
            .with_field("version"));
        }
        let spec = parse_fields(object, "")?;
        let recorded = match object.get("sha256") {
            Some(Value::String(s)) => s,
            Some(_) => return Err(Error::invalid("sha256", "must be a string")),
            None => {
                return Err(Error::invalid(
                    "sha256",
                    "is required in a versioned accept spec",
                ));
            }
        };
        if !recorded.eq_ignore_ascii_case(&spec.sha256()) {
            return Err(Error::invalid(
                "sha256",
                "does not match the SHA-256 of `run`; the spec was changed after it was written",
            ));
        }
        Ok(spec)
    }

    /// Reads and validates a spec file of either form.
    pub fn load(path: &Path) -> Result<AcceptSpec, Error> {
        let bytes = match sidecar::read_bounded(path, SPEC_READ_LIMIT) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                return Err(Error::not_found(format!(
                    "accept spec {} does not exist",
                    path.display()
                ))
                .with_field("spec"));
            }
            Err(err) => return Err(Error::from(err).with_field("spec")),
        };
        let value: Value = serde_json::from_slice(&bytes).map_err(|err| {
            Error::invalid(
                "spec",
                format!("accept spec {} is not valid JSON: {err}", path.display()),
            )
        })?;
        AcceptSpec::from_value(&value)
    }

    /// The file form `{version, run, maxRetries, timeoutSec, paths, sha256}`.
    pub fn to_file(&self) -> SpecFile {
        SpecFile {
            version: SpecFile::FORMAT_VERSION,
            run: self.run.clone(),
            max_retries: Some(self.max_retries),
            timeout_sec: Some(self.timeout_sec),
            paths: Some(self.paths.clone()),
            sha256: self.sha256(),
        }
    }

    /// Writes the file form atomically with mode 0600: the command is the caller's and may
    /// carry secrets, so no other user may read it.
    pub fn write(&self, path: &Path) -> Result<(), Error> {
        let mut bytes = serde_json::to_vec_pretty(&self.to_file())
            .map_err(|err| Error::internal(format!("cannot serialise the accept spec: {err}")))?;
        bytes.push(b'\n');
        // The temporary file behind `write_atomic` is created 0600 and renamed into place, so
        // the command is never readable by others, not even for an instant; the explicit chmod
        // keeps that true should the writer ever change.
        sidecar::write_atomic(path, &bytes)?;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .map_err(|err| Error::from(sidecar::Error::io(path, err)))
    }

    /// The lowercase hex SHA-256 of `run`: how results name the command without repeating it.
    pub fn sha256(&self) -> String {
        sha256_hex(self.run.as_bytes())
    }

    /// The per-run timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_sec)
    }

    /// How many times the child runs the check at most: once plus one per retry.
    pub fn max_tries(&self) -> u32 {
        self.max_retries + 1
    }

    /// Returns the files of `changed` that lie under one of `paths`, in the order given.
    ///
    /// A file is under a path when it equals it or lies below it as a directory (`test` covers
    /// `test` and `test/a.js`, not `tests/a.js`); `.` covers every file.
    pub fn check_files_changed(&self, changed: &[String]) -> Vec<String> {
        // A file can be both committed and changed again in the worktree, or listed as changed
        // and untracked: it is named once, where it first appears.
        let mut seen = std::collections::HashSet::new();
        changed
            .iter()
            .filter(|file| {
                let file = normalise_relative(file);
                self.paths.iter().any(|path| is_under(&file, path)) && seen.insert(file)
            })
            .cloned()
            .collect()
    }
}

/// Returns the lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
    }
    out
}

fn field(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

fn as_object<'a>(value: &'a Value, prefix: &str) -> Result<&'a Map<String, Value>, Error> {
    value.as_object().ok_or_else(|| {
        let name = if prefix.is_empty() { "spec" } else { prefix };
        Error::invalid(name, format!("must be an object; got {}", kind(value)))
    })
}

fn reject_unknown(
    object: &Map<String, Value>,
    allowed: &[&str],
    prefix: &str,
) -> Result<(), Error> {
    match object.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(Error::invalid(
            field(prefix, key),
            format!(
                "is not a field of the accept spec (allowed: {})",
                allowed.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

fn parse_fields(object: &Map<String, Value>, prefix: &str) -> Result<AcceptSpec, Error> {
    let run = match object.get("run") {
        Some(Value::String(run)) => run.clone(),
        Some(Value::Null) | None => {
            return Err(Error::invalid(field(prefix, "run"), "is required"));
        }
        Some(other) => {
            return Err(Error::invalid(
                field(prefix, "run"),
                format!("must be a string; got {}", kind(other)),
            ));
        }
    };
    validate_run(&run, &field(prefix, "run"))?;
    let max_retries = optional_integer(
        object,
        prefix,
        "maxRetries",
        0,
        u64::from(MAX_RETRIES_LIMIT),
    )?
    .map_or(MAX_RETRIES_DEFAULT, |n| {
        u32::try_from(n).unwrap_or(MAX_RETRIES_LIMIT)
    });
    let timeout_sec = optional_integer(object, prefix, "timeoutSec", 1, TIMEOUT_SEC_LIMIT)?
        .unwrap_or(TIMEOUT_SEC_DEFAULT);
    let paths = match object.get("paths") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            if items.len() > PATHS_MAX {
                return Err(Error::invalid(
                    field(prefix, "paths"),
                    format!(
                        "has {} entries; at most {PATHS_MAX} are allowed",
                        items.len()
                    ),
                ));
            }
            let mut paths = Vec::with_capacity(items.len());
            for (idx, item) in items.iter().enumerate() {
                let name = field(prefix, &format!("paths[{idx}]"));
                let Value::String(path) = item else {
                    return Err(Error::invalid(
                        name,
                        format!("must be a string; got {}", kind(item)),
                    ));
                };
                paths.push(validate_path(path, &name)?);
            }
            paths
        }
        Some(other) => {
            return Err(Error::invalid(
                field(prefix, "paths"),
                format!("must be an array of strings; got {}", kind(other)),
            ));
        }
    };
    Ok(AcceptSpec {
        run,
        max_retries,
        timeout_sec,
        paths,
    })
}

fn optional_integer(
    object: &Map<String, Value>,
    prefix: &str,
    name: &str,
    min: u64,
    max: u64,
) -> Result<Option<u64>, Error> {
    let value = match object.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let name = field(prefix, name);
    let Value::Number(number) = value else {
        return Err(Error::invalid(
            name,
            format!("must be an integer; got {}", kind(value)),
        ));
    };
    let n = match number.as_u64() {
        Some(n) => n,
        // A float with no fractional part (`2.0`) is still not an integer in the tool schema.
        None if number.is_f64() => {
            return Err(Error::invalid(
                name,
                format!("must be an integer; got {number}"),
            ));
        }
        None => {
            return Err(Error::invalid(
                name,
                format!("must be at least {min}; got {number}"),
            ));
        }
    };
    if n < min {
        return Err(Error::invalid(
            name,
            format!("must be at least {min}; got {n}"),
        ));
    }
    if n > max {
        return Err(Error::invalid(
            name,
            format!("must be at most {max}; got {n}"),
        ));
    }
    Ok(Some(n))
}

fn validate_run(run: &str, name: &str) -> Result<(), Error> {
    if run.trim().is_empty() {
        return Err(Error::invalid(name, "must not be empty"));
    }
    if run.len() > RUN_MAX_BYTES {
        return Err(Error::invalid(
            name,
            format!(
                "is {} bytes long; at most {RUN_MAX_BYTES} are allowed",
                run.len()
            ),
        ));
    }
    if run.contains('\0') {
        return Err(Error::invalid(name, "must not contain a NUL character"));
    }
    Ok(())
}

fn validate_path(path: &str, name: &str) -> Result<String, Error> {
    if path.len() > PATH_MAX_BYTES {
        return Err(Error::invalid(
            name,
            format!(
                "is {} bytes long; at most {PATH_MAX_BYTES} are allowed",
                path.len()
            ),
        ));
    }
    if path.contains('\0') {
        return Err(Error::invalid(name, "must not contain a NUL character"));
    }
    if path.starts_with('/') {
        return Err(Error::invalid(name, "must be relative to the checkout"));
    }
    // A `..` component names a file outside the checkout, which no changed file can be.
    if path.split('/').any(|part| part == "..") {
        return Err(Error::invalid(name, "must not contain a `..` component"));
    }
    let normalised = normalise_relative(path);
    if normalised.is_empty() {
        return Err(Error::invalid(name, "must not be empty"));
    }
    Ok(normalised)
}

/// Drops `./` components, repeated and trailing slashes: `./test//unit/` becomes `test/unit`;
/// `.` alone stays `.`.
fn normalise_relative(path: &str) -> String {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.is_empty() && path.split('/').any(|part| part == ".") {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

fn is_under(file: &str, path: &str) -> bool {
    path == "."
        || file == path
        || (file.len() > path.len()
            && file.starts_with(path)
            && file.as_bytes()[path.len()] == b'/')
}

/// Names the JSON type of `value` for an error message.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err_field(value: Value) -> (String, String) {
        let err = AcceptSpec::from_value(&value).unwrap_err();
        (err.field.unwrap_or_default(), err.message)
    }

    #[test]
    fn tool_form_takes_the_seed_defaults() {
        let spec = AcceptSpec::from_value(&json!({"run": "npm test"})).unwrap();
        assert_eq!(
            spec,
            AcceptSpec {
                run: "npm test".into(),
                max_retries: 1,
                timeout_sec: 600,
                paths: vec![]
            }
        );
        assert_eq!(spec.max_tries(), 2);
        let spec = AcceptSpec::from_value(
            &json!({"run": "x", "maxRetries": null, "timeoutSec": null, "paths": null}),
        )
        .unwrap();
        assert_eq!((spec.max_retries, spec.timeout_sec), (1, 600));
    }

    #[test]
    fn limits_are_inclusive() {
        let spec = AcceptSpec::from_value(
            &json!({"run": "x", "maxRetries": 5, "timeoutSec": 3600, "paths": ["./test/", "src//a.rs"]}),
        )
        .unwrap();
        assert_eq!((spec.max_retries, spec.timeout_sec), (5, 3600));
        assert_eq!(spec.paths, ["test", "src/a.rs"]);
        let spec =
            AcceptSpec::from_value(&json!({"run": "x", "maxRetries": 0, "timeoutSec": 1})).unwrap();
        assert_eq!((spec.max_retries, spec.timeout_sec), (0, 1));
    }

    #[test]
    fn every_invalid_field_is_named() {
        let cases = [
            (
                json!({"run": "x", "maxRetries": 6}),
                "maxRetries",
                "at most 5",
            ),
            (
                json!({"run": "x", "maxRetries": -1}),
                "maxRetries",
                "at least 0",
            ),
            (
                json!({"run": "x", "maxRetries": 1.5}),
                "maxRetries",
                "integer",
            ),
            (
                json!({"run": "x", "maxRetries": "1"}),
                "maxRetries",
                "integer",
            ),
            (
                json!({"run": "x", "timeoutSec": 3601}),
                "timeoutSec",
                "at most 3600",
            ),
            (
                json!({"run": "x", "timeoutSec": 0}),
                "timeoutSec",
                "at least 1",
            ),
            (
                json!({"run": "x", "timeoutSec": 2.0}),
                "timeoutSec",
                "integer",
            ),
            (json!({"run": "x", "paths": "test"}), "paths", "array"),
            (json!({"run": "x", "paths": ["a", 1]}), "paths[1]", "string"),
            (
                json!({"run": "x", "paths": ["/abs"]}),
                "paths[0]",
                "relative",
            ),
            (json!({"run": "x", "paths": ["a/../b"]}), "paths[0]", ".."),
            (json!({"run": "x", "paths": [""]}), "paths[0]", "empty"),
            (json!({"run": "x", "extra": 1}), "extra", "not a field"),
            (json!({"run": ""}), "run", "empty"),
            (json!({"run": "  "}), "run", "empty"),
            (json!({"run": 3}), "run", "string"),
            (json!({"maxRetries": 1}), "run", "required"),
            (json!(["run"]), "spec", "object"),
            (json!({"version": 1, "run": "x"}), "sha256", "required"),
            (
                json!({"version": 1, "run": "x", "sha256": "00"}),
                "sha256",
                "does not match",
            ),
            (json!({"version": 0, "run": "x"}), "version", "positive"),
            (
                json!({"version": 1, "run": "x", "sha256": sha256_hex(b"x"), "more": 1}),
                "more",
                "not a field",
            ),
        ];
        for (value, want_field, want_message) in cases {
            let (field, message) = err_field(value.clone());
            assert_eq!(field, want_field, "{value}");
            assert!(message.contains(want_message), "{value}: {message}");
        }
    }

    #[test]
    fn a_newer_version_is_refused_as_a_conflict() {
        let err =
            AcceptSpec::from_value(&json!({"version": 2, "run": "x", "sha256": sha256_hex(b"x")}))
                .unwrap_err();
        assert_eq!(
            (err.code, err.field.as_deref()),
            (ErrorCode::Conflict, Some("version"))
        );
    }

    #[test]
    fn the_tool_form_keys_are_prefixed_for_requests() {
        let err = AcceptSpec::from_tool_value(&json!({"run": "x", "timeoutSec": 4000}), "accept")
            .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("accept.timeoutSec"));
        // The file form's keys are not part of the tool parameter.
        let err =
            AcceptSpec::from_tool_value(&json!({"run": "x", "version": 1}), "accept").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("accept.version"));
    }

    #[test]
    fn write_then_load_round_trips_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("accept").join("run-1.json");
        let spec = AcceptSpec {
            run: "cargo test -- --nocapture 'a b'".into(),
            max_retries: 3,
            timeout_sec: 30,
            paths: vec!["tests".into()],
        };
        spec.write(&path).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(AcceptSpec::load(&path).unwrap(), spec);
        let on_disk: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(on_disk["version"], 1);
        assert_eq!(on_disk["sha256"], spec.sha256());
    }

    #[test]
    fn load_reports_missing_and_malformed_files() {
        let dir = tempfile::tempdir().unwrap();
        let err = AcceptSpec::load(&dir.path().join("nope.json")).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\"run\":").unwrap();
        let err = AcceptSpec::load(&bad).unwrap_err();
        assert_eq!(
            (err.code, err.field.as_deref()),
            (ErrorCode::InvalidRequest, Some("spec"))
        );
        let big = dir.path().join("big.json");
        fs::write(&big, vec![b' '; SPEC_READ_LIMIT as usize + 1]).unwrap();
        let err = AcceptSpec::load(&big).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
    }

    #[test]
    fn sha256_is_of_the_command_bytes() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn check_files_are_matched_by_directory_prefix() {
        let spec = AcceptSpec {
            run: "x".into(),
            max_retries: 1,
            timeout_sec: 1,
            paths: vec!["test".into(), "src/lib.rs".into()],
        };
        let changed: Vec<String> = [
            "test/a.js",
            "tests/b.js",
            "test",
            "src/lib.rs",
            "src/lib.rs.bak",
            "./test/c.js",
            "src/main.rs",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            spec.check_files_changed(&changed),
            ["test/a.js", "test", "src/lib.rs", "./test/c.js"]
        );
        let all = AcceptSpec {
            paths: vec![".".into()],
            ..spec
        };
        assert_eq!(all.check_files_changed(&changed).len(), changed.len());
    }

    #[test]
    fn a_check_file_changed_twice_is_named_once() {
        let spec = AcceptSpec {
            run: "x".into(),
            max_retries: 1,
            timeout_sec: 1,
            paths: vec!["test".into()],
        };
        // Committed, then changed again in the worktree: the handoff lists it twice.
        let changed: Vec<String> = ["test/t.sh", "src/a.rs", "test/t.sh", "./test/t.sh"]
            .map(String::from)
            .to_vec();
        assert_eq!(spec.check_files_changed(&changed), ["test/t.sh"]);
    }
}
