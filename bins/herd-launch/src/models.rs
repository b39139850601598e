//! `herd-launch write-task-models`: the task-model writer behind `subagents_write_task_models`.
//!
//! It validates the proposal (the tool's schema, then: `basis.kind` equals `tasksMeta.method`,
//! no category names a model twice), compares `expectedConfigRevision` with the configuration
//! file as it is now (`sha256:` of its exact bytes, or `missing`), and replaces `models.tasks`
//! and `models.tasksMeta` atomically, keeping every other setting byte for byte as JSON. The
//! `basis` is checked, never saved. Writers of the same file are serialised by
//! `<config>.lock`, and the revision is compared under that lock.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::{Error, ErrorCode, sidecar};
use herd_tools::WriteTaskModelsRequest;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::roles::READ_LIMIT;

/// How long a writer waits for another one.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The revision of a configuration that does not exist.
pub const MISSING_REVISION: &str = "missing";

/// The revision of a configuration: `sha256:<hex of its exact bytes>`, or `missing`.
pub fn revision(bytes: Option<&[u8]>) -> String {
    match bytes {
        Some(bytes) => format!(
            "sha256:{}",
            herd_protocol::launch::policy::hex(&Sha256::digest(bytes))
        ),
        None => MISSING_REVISION.to_owned(),
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub file: PathBuf,
    pub previous_revision: String,
    pub revision: String,
}

impl Written {
    pub fn to_json(&self) -> herd_protocol::launch::docs::ModelsWritten {
        herd_protocol::launch::docs::ModelsWritten {
            status: herd_protocol::launch::docs::WrittenStatus::Written,
            file: self.file.to_string_lossy().into_owned(),
            previous_revision: self.previous_revision.clone(),
            revision: self.revision.clone(),
        }
    }

    pub fn human(&self) -> String {
        format!(
            "wrote models.tasks and models.tasksMeta to {} (revision {}, was {})",
            self.file.display(),
            self.revision,
            self.previous_revision
        )
    }
}

/// The configuration file of `agent_dir`.
pub fn config_file(agent_dir: &Path) -> PathBuf {
    agent_dir.join("herdr-agents").join("config.json")
}

/// Validates `request` and writes it into the configuration of `agent_dir`.
pub fn write(agent_dir: &Path, request: &WriteTaskModelsRequest) -> Result<Written, Error> {
    let tasks = serde_json::to_value(&request.tasks)
        .map_err(|e| Error::internal(format!("cannot encode the tasks: {e}")))?;
    if let Some(categories) = tasks.as_object() {
        for (category, list) in categories {
            let models: Vec<&str> = list
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (i, model) in models.iter().enumerate() {
                if models[..i].contains(model) {
                    return Err(Error::invalid(
                        format!("tasks.{category}[{i}]"),
                        format!("{model:?} is already a candidate of {category}"),
                    ));
                }
            }
        }
    }
    let meta = serde_json::to_value(&request.tasks_meta)
        .map_err(|e| Error::internal(format!("cannot encode tasksMeta: {e}")))?;

    let file = config_file(agent_dir);
    let mut lock = file.clone().into_os_string();
    lock.push(".lock");
    let _lock = herd_core::lock::exclusive(Path::new(&lock), Instant::now() + LOCK_WAIT)?;
    let current = sidecar::read_bounded(&file, READ_LIMIT)?;
    let previous_revision = revision(current.as_deref());
    if let Some(expected) = &request.expected_config_revision {
        if *expected != previous_revision {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "the configuration changed since the proposal read it (it is {previous_revision}, the proposal expected {expected}); nothing was written: re-read it, re-propose, and ask for approval again"
                ),
            )
            .with_field("expectedConfigRevision"));
        }
    }
    let bad = |what: &str| {
        Error::new(
            ErrorCode::InvalidRequest,
            format!("{}: {what}; nothing was written", file.display()),
        )
    };
    let mut config: Map<String, Value> = match &current {
        None => Map::new(),
        Some(bytes) => match serde_json::from_slice(bytes) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(bad("is not a JSON object")),
            Err(e) => return Err(bad(&format!("is not JSON ({e})"))),
        },
    };
    let models = config
        .entry("models")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(models) = models.as_object_mut() else {
        return Err(bad("models is not an object"));
    };
    models.insert("tasks".into(), tasks);
    models.insert("tasksMeta".into(), meta);
    let mut bytes = serde_json::to_vec_pretty(&Value::Object(config))
        .map_err(|e| Error::internal(format!("cannot encode the configuration: {e}")))?;
    bytes.push(b'\n');
    sidecar::write_atomic(&file, &bytes)?;
    Ok(Written {
        file,
        previous_revision,
        revision: revision(Some(&bytes)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(expected: Option<&str>) -> WriteTaskModelsRequest {
        let mut value = json!({
            "tasks": {"coding": ["fake/a", "fake/b"], "review": ["fake/b"]},
            "tasksMeta": {"generatedAt": "2026-12-01T00:00:00Z", "method": "registry-only"},
            "basis": {"kind": "registry-only"},
        });
        if let Some(expected) = expected {
            value["expectedConfigRevision"] = expected.into();
        }
        herd_tools::parse("subagents_write_task_models", &value).unwrap()
    }

    #[test]
    fn a_write_keeps_every_other_setting_and_saves_no_basis() {
        let dir = tempfile::tempdir().unwrap();
        let file = config_file(dir.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let before = br#"{"models":{"default":"fake/x","tasks":{"docs":["fake/old"]}},"persistent":{"maxAgents":2}}"#;
        std::fs::write(&file, before).unwrap();
        let written = write(dir.path(), &request(Some(&revision(Some(before))))).unwrap();
        let after: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(after["models"]["default"], "fake/x");
        assert_eq!(after["persistent"]["maxAgents"], 2);
        assert_eq!(
            after["models"]["tasks"],
            json!({"coding": ["fake/a", "fake/b"], "review": ["fake/b"]})
        );
        assert_eq!(after["models"]["tasksMeta"]["method"], "registry-only");
        assert!(after.get("basis").is_none() && after["models"].get("basis").is_none());
        assert_eq!(
            written.revision,
            revision(Some(&std::fs::read(&file).unwrap()))
        );
    }

    #[test]
    fn a_stale_revision_writes_nothing_and_missing_names_an_absent_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = config_file(dir.path());
        let stale = write(dir.path(), &request(Some(&revision(Some(b"{}"))))).unwrap_err();
        assert_eq!(stale.code, ErrorCode::Conflict);
        assert!(!file.exists());
        write(dir.path(), &request(Some("missing"))).unwrap();
        let again = write(dir.path(), &request(Some("missing"))).unwrap_err();
        assert_eq!(again.code, ErrorCode::Conflict, "{}", again.message);
    }

    #[test]
    fn a_model_named_twice_in_a_category_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let value = json!({
            "tasks": {"qa": ["fake/a", "fake/a"]},
            "tasksMeta": {"generatedAt": "2026-12-01T00:00:00Z", "method": "research"},
        });
        let request: WriteTaskModelsRequest =
            herd_tools::parse("subagents_write_task_models", &value).unwrap();
        let err = write(dir.path(), &request).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("tasks.qa[1]"));
    }

    #[test]
    fn a_configuration_that_is_not_an_object_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let file = config_file(dir.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"[1,2]").unwrap();
        assert!(write(dir.path(), &request(None)).is_err());
        assert_eq!(std::fs::read(&file).unwrap(), b"[1,2]");
    }
}
