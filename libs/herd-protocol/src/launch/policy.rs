//! The launch-policy sidecar `<session>.pi-herdr-subagent-policy.json` (docs/protocol.md, "The
//! launch-policy sidecar and the manifest").
//!
//! herd-launch writes it once at spawn; `herd-launch resume` reads it back and restores exactly
//! the tools the child had, so a later change of a role can never widen a resumed child. The
//! reader fails closed: a missing file, a version other than 1 or 2, an unknown key, an owner other
//! than `public` or `managed-worktree`, a malformed tool list or sandbox or a hash that does not
//! match is an error naming the file and the field, never a default.

use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use herd_core::{Error, ErrorCode};

use crate::session_file::SessionFile;

/// The version this build writes ([`SessionFile::VERSION`]).
const VERSION: u64 = <Policy as SessionFile>::VERSION;

/// Who launched the child, which decides whether it may be resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Owner {
    /// An ordinary child of the `subagent` tool.
    Public,
    /// A child in a managed worktree; resumed only in its retained workspace.
    ManagedWorktree,
}

impl Owner {
    pub fn as_str(self) -> &'static str {
        match self {
            Owner::Public => "public",
            Owner::ManagedWorktree => "managed-worktree",
        }
    }

    /// The owner spelled `name` on disk.
    pub fn named(name: &str) -> Option<Owner> {
        [Owner::Public, Owner::ManagedWorktree]
            .into_iter()
            .find(|o| o.as_str() == name)
    }
}

/// The worktree binding of a managed-worktree child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct WorktreeBinding {
    #[schemars(length(min = 1))]
    pub path: String,
    #[schemars(length(min = 1))]
    pub workspace_id: String,
    #[schemars(length(min = 1))]
    pub branch: String,
    #[schemars(length(min = 1))]
    pub base_sha: String,
}

/// A launch policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// 1 or 2; version 1 files carry no persistence, ids, hash or worktree.
    pub version: u64,
    pub owner: Owner,
    /// `None`: deliberately unrestricted (no `--tools` flag).
    pub tools: Option<Vec<String>>,
    pub denied_tools: Vec<String>,
    pub persistent: bool,
    pub logical_id: String,
    pub generation_id: String,
    pub worktree: Option<WorktreeBinding>,
    /// The child's sandbox policy as herd-launch resolved it, in the text form
    /// `HERD_SANDBOX_POLICY` carries (herd-sandbox reads it; here it is only kept). `None`: a
    /// file written before children were confined, resumed as the person's configuration says.
    pub sandbox: Option<String>,
}

/// The file as [`Policy::from_slice`] accepts it, either version; the reader checks each key in turn
/// to say which one is wrong, and the schema is derived from these two forms.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[schemars(
    title = "LaunchPolicy",
    description = "`<session>.pi-herdr-subagent-policy.json`, the launch policy herd-launch writes once at spawn (pi-herdr-agents format) and resume and send read. Anything else, an unknown key included, fails closed; `policyHash` must be the SHA-256 of the canonical JSON of the other keys in this order."
)]
pub enum PolicyFile<'a> {
    V1(PolicyFileV1<'a>),
    V2(PolicyFileV2<'a>),
}

/// A version 1 policy, which herd reads (a child of an older launcher) and never writes.
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PolicyFileV1<'a> {
    #[schemars(schema_with = "crate::version_is::<1>")]
    pub version: u64,
    pub owner: Owner,
    #[schemars(schema_with = "tools_schema")]
    pub tools: Option<&'a [String]>,
    #[schemars(schema_with = "names_schema")]
    pub denied_tools: &'a [String],
}

/// The file herd writes: the canonical part, its hash, then the worktree (key order as
/// pi-herdr-agents). Without the hash it is the canonical form the hash is defined over.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PolicyFileV2<'a> {
    #[schemars(schema_with = "version_two")]
    pub version: u64,
    pub owner: Owner,
    #[schemars(schema_with = "tools_schema")]
    pub tools: Option<&'a [String]>,
    #[schemars(schema_with = "names_schema")]
    pub denied_tools: &'a [String],
    pub persistent: bool,
    #[schemars(length(min = 1))]
    pub logical_id: &'a str,
    #[schemars(length(min = 1))]
    pub generation_id: &'a str,
    /// Absent only from the canonical form the hash is taken over.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", pattern("^[0-9a-f]{64}$"))]
    pub policy_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "WorktreeBinding")]
    pub worktree: Option<&'a WorktreeBinding>,
    /// The sandbox policy the child was launched under, as `HERD_SANDBOX_POLICY` carries it
    /// (`<mode>,<network>`, docs/sandbox.md); a resume is never wider. Absent from a file of a
    /// launcher that did not confine its children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1))]
    pub sandbox: Option<&'a str>,
}

fn version_two(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"const": VERSION})
}

// What `validate_names` checks, which serde cannot say: each name is one token without a comma
// or white space, and no name is listed twice.
fn names_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "string", "pattern": "^[^,\\s]+$"},
        "uniqueItems": true
    })
}

// `null` (no `--tools` flag) is deliberate; a list is never empty.
fn tools_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names = names_schema(generator);
    schemars::json_schema!({
        "description": "`null`: deliberately unrestricted (no `--tools` flag); else a non-empty list.",
        "anyOf": [{"type": "null"}, {"allOf": [names], "minItems": 1}]
    })
}

impl Policy {
    /// A version 2 policy.
    pub fn new(
        owner: Owner,
        tools: Option<Vec<String>>,
        denied_tools: Vec<String>,
        persistent: bool,
        logical_id: String,
        generation_id: String,
        worktree: Option<WorktreeBinding>,
    ) -> Policy {
        Policy {
            version: VERSION,
            owner,
            tools,
            denied_tools,
            persistent,
            logical_id,
            generation_id,
            worktree,
            sandbox: None,
        }
    }

    /// The same policy with the child's sandbox policy (`HERD_SANDBOX_POLICY`'s text form).
    pub fn with_sandbox(mut self, sandbox: String) -> Policy {
        self.sandbox = Some(sandbox);
        self
    }

    /// The file's form; without `policy_hash`, the canonical form the hash is taken over.
    fn file(&self, policy_hash: Option<String>) -> PolicyFileV2<'_> {
        PolicyFileV2 {
            version: self.version,
            owner: self.owner,
            tools: self.tools.as_deref(),
            denied_tools: &self.denied_tools,
            persistent: self.persistent,
            logical_id: &self.logical_id,
            generation_id: &self.generation_id,
            policy_hash,
            worktree: self.worktree.as_ref(),
            sandbox: self.sandbox.as_deref(),
        }
    }
    /// The lower-case hex SHA-256 of the canonical JSON of the policy.
    ///
    /// The canonical JSON is compact, keys in the order `version, owner, tools, deniedTools,
    /// persistent, logicalId, generationId[, worktree][, sandbox]`, as `JSON.stringify` writes it.
    pub fn hash(&self) -> String {
        // Serialising plain strings, booleans and integers cannot fail.
        let json = serde_json::to_vec(&self.file(None)).unwrap_or_default();
        hex(&Sha256::digest(&json))
    }

    /// The file content: compact JSON and a newline.
    pub fn to_json(&self) -> Vec<u8> {
        let wire = PolicyFileV2 {
            version: VERSION,
            ..self.file(Some(self.hash()))
        };
        let mut bytes = serde_json::to_vec(&wire).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// The file's bytes ([`SessionFile::encode`]): the policy checked, then [`Policy::to_json`].
    pub(crate) fn encode(&self) -> Result<Vec<u8>, Error> {
        let origin = Path::new(<Policy as SessionFile>::SUFFIX);
        validate_names(&self.tools.clone().unwrap_or_default(), origin, "tools")?;
        validate_names(&self.denied_tools, origin, "deniedTools")?;
        Ok(self.to_json())
    }

    /// Writes the policy at `path`, a session's [`crate::layout::SessionFiles::policy`]: the
    /// first policy of a session is never replaced, a second one is a conflict.
    pub fn write(&self, path: &Path) -> Result<(), Error> {
        if crate::session_file::create_once_at(path, self)? {
            Ok(())
        } else {
            Err(Error::new(
                ErrorCode::Conflict,
                format!("{} already exists", path.display()),
            )
            .with_field("session"))
        }
    }

    /// The policy beside the session of `files`; a missing file is an error, since resume fails
    /// closed.
    pub fn read_required(files: &crate::layout::SessionFiles) -> Result<Policy, Error> {
        files.read::<Policy>()?.ok_or_else(|| {
            Error::not_found(format!("{} is missing", files.policy().display()))
                .with_field("policy")
        })
    }

    /// Parses and validates a policy file; `origin` names it in errors.
    pub fn from_slice(bytes: &[u8], origin: &Path) -> Result<Policy, Error> {
        let bad = |field: &str, reason: &str| {
            Error::invalid(field, format!("{}: `{field}` {reason}", origin.display()))
        };
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
            Error::invalid(
                "policy",
                format!("{} is not valid JSON: {e}", origin.display()),
            )
        })?;
        let object = value
            .as_object()
            .ok_or_else(|| bad("policy", "is not a JSON object"))?;
        let version = object
            .get("version")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| bad("version", "is missing or not an integer"))?;
        let allowed = keys_of(version).ok_or_else(|| {
            bad(
                "version",
                &format!("is {version}; only 1 and 2 are supported"),
            )
        })?;
        if let Some(key) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(bad(key, "is not a known key"));
        }
        let owner = match object.get("owner").and_then(serde_json::Value::as_str) {
            Some(name) => Owner::named(name).ok_or_else(|| {
                bad(
                    "owner",
                    &format!("is {name:?}, not an owner herd can resume"),
                )
            })?,
            None => return Err(bad("owner", "is missing or not a string")),
        };
        let tools = tools_of(object.get("tools"), origin)?;
        let denied_tools = object
            .get("deniedTools")
            .and_then(string_array)
            .ok_or_else(|| bad("deniedTools", "is missing or not an array of strings"))?;
        validate_names(&denied_tools, origin, "deniedTools")?;
        if version == 1 {
            return Ok(Policy {
                version,
                owner,
                tools,
                denied_tools,
                persistent: false,
                logical_id: String::new(),
                generation_id: String::new(),
                worktree: None,
                sandbox: None,
            });
        }
        let persistent = object
            .get("persistent")
            .and_then(serde_json::Value::as_bool)
            .ok_or_else(|| bad("persistent", "is missing or not a boolean"))?;
        let text = |key: &str| -> Result<String, Error> {
            match object.get(key).and_then(serde_json::Value::as_str) {
                Some("") => Err(bad(key, "is empty")),
                Some(s) => Ok(s.to_owned()),
                None => Err(bad(key, "is missing or not a string")),
            }
        };
        let logical_id = text("logicalId")?;
        let generation_id = text("generationId")?;
        let policy_hash = text("policyHash")?;
        let worktree = match object.get("worktree") {
            None => None,
            Some(value) => Some(worktree_binding(value).ok_or_else(|| {
                bad(
                    "worktree",
                    "is not exactly {path, workspaceId, branch, baseSha} of non-empty strings",
                )
            })?),
        };
        // Checked before the hash, so a malformed one is named as such.
        let sandbox = match object.get("sandbox") {
            None => None,
            Some(serde_json::Value::String(text)) if !text.is_empty() => Some(text.clone()),
            Some(_) => return Err(bad("sandbox", "is not a non-empty string")),
        };
        let policy = Policy {
            version,
            owner,
            tools,
            denied_tools,
            persistent,
            logical_id,
            generation_id,
            worktree,
            sandbox,
        };
        if policy.hash() != policy_hash {
            return Err(bad("policyHash", "does not match the policy"));
        }
        Ok(policy)
    }
}

fn string_array(value: &serde_json::Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn worktree_binding(value: &serde_json::Value) -> Option<WorktreeBinding> {
    let object = value.as_object()?;
    if object.len() != 4 {
        return None;
    }
    let text = |key: &str| {
        object
            .get(key)?
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Some(WorktreeBinding {
        path: text("path")?,
        workspace_id: text("workspaceId")?,
        branch: text("branch")?,
        base_sha: text("baseSha")?,
    })
}

/// Tool names: non-empty, no commas or whitespace, no duplicates.
fn validate_names(names: &[String], origin: &Path, field: &str) -> Result<(), Error> {
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() || name.chars().any(|c| c == ',' || c.is_whitespace()) {
            return Err(Error::invalid(
                field,
                format!(
                    "{}: `{field}` has {name:?}, not a tool name",
                    origin.display()
                ),
            ));
        }
        if names[..i].contains(name) {
            return Err(Error::invalid(
                field,
                format!("{}: `{field}` lists {name:?} twice", origin.display()),
            ));
        }
    }
    Ok(())
}

/// The lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// A policy's `tools`: `null` (every tool) or a non-empty list of valid names.
fn tools_of(
    value: Option<&serde_json::Value>,
    origin: &Path,
) -> Result<Option<Vec<String>>, Error> {
    let bad =
        |reason: &str| Error::invalid("tools", format!("{}: `tools` {reason}", origin.display()));
    match value {
        Some(serde_json::Value::Null) => Ok(None),
        Some(value) => {
            let names =
                string_array(value).ok_or_else(|| bad("is not null or an array of strings"))?;
            if names.is_empty() {
                return Err(bad("is an empty list"));
            }
            validate_names(&names, origin, "tools")?;
            Ok(Some(names))
        }
        None => Err(bad("is missing")),
    }
}

/// The keys a policy of `version` has; `None` for a version this build does not read.
fn keys_of(version: u64) -> Option<&'static [&'static str]> {
    match version {
        1 => Some(&["version", "owner", "tools", "deniedTools"]),
        2 => Some(&[
            "version",
            "owner",
            "tools",
            "deniedTools",
            "persistent",
            "logicalId",
            "generationId",
            "policyHash",
            "worktree",
            "sandbox",
        ]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy::new(
            Owner::Public,
            Some(vec!["read".into(), "bash".into()]),
            vec!["subagent".into()],
            false,
            "ab12cd34".into(),
            "gen-1".into(),
            None,
        )
    }

    #[test]
    fn hash_is_over_the_canonical_json_in_key_order() {
        let p = policy();
        let canonical = r#"{"version":2,"owner":"public","tools":["read","bash"],"deniedTools":["subagent"],"persistent":false,"logicalId":"ab12cd34","generationId":"gen-1"}"#;
        assert_eq!(p.hash(), hex(&Sha256::digest(canonical.as_bytes())));
        let text = String::from_utf8(p.to_json()).unwrap();
        assert!(
            text.starts_with(r#"{"version":2,"owner":"public","tools":["read","bash"]"#),
            "{text}"
        );
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn round_trip_with_worktree_and_unrestricted_tools() {
        let mut p = policy();
        p.tools = None;
        p.owner = Owner::ManagedWorktree;
        p.worktree = Some(WorktreeBinding {
            path: "/w".into(),
            workspace_id: "w3".into(),
            branch: "feat/x".into(),
            base_sha: "abc".into(),
        });
        let back = Policy::from_slice(&p.to_json(), Path::new("p.json")).unwrap();
        assert_eq!(back, p);
        let p = p.with_sandbox("read-only,on".into());
        let text = String::from_utf8(p.to_json()).unwrap();
        assert!(
            text.ends_with("\"baseSha\":\"abc\"},\"sandbox\":\"read-only,on\"}\n"),
            "{text}"
        );
        assert_eq!(
            Policy::from_slice(&p.to_json(), Path::new("p.json")).unwrap(),
            p
        );
        let json: serde_json::Value = serde_json::from_slice(&p.to_json()).unwrap();
        assert_eq!(json["tools"], serde_json::Value::Null);
    }

    #[test]
    fn reader_fails_closed_naming_the_field() {
        let good: serde_json::Value = serde_json::from_slice(&policy().to_json()).unwrap();
        let check = |edit: &dyn Fn(&mut serde_json::Value), field: &str| {
            let mut v = good.clone();
            edit(&mut v);
            let err = Policy::from_slice(&serde_json::to_vec(&v).unwrap(), Path::new("p.json"))
                .unwrap_err();
            assert_eq!(err.field.as_deref(), Some(field), "{err}");
            assert_eq!(err.code, ErrorCode::InvalidRequest);
        };
        check(&|v| v["version"] = 3.into(), "version");
        check(&|v| v["owner"] = "workflow".into(), "owner");
        check(&|v| v["extra"] = 1.into(), "extra");
        check(&|v| v["tools"] = serde_json::json!([]), "tools");
        check(&|v| v["tools"] = serde_json::json!(["a b"]), "tools");
        check(&|v| v["tools"] = serde_json::json!(["a", "a"]), "tools");
        check(
            &|v| v["deniedTools"] = serde_json::Value::Null,
            "deniedTools",
        );
        check(&|v| v["persistent"] = true.into(), "policyHash");
        check(
            &|v| v["worktree"] = serde_json::json!({"path": "/w"}),
            "worktree",
        );
        check(&|v| v["logicalId"] = "".into(), "logicalId");
        check(&|v| v["sandbox"] = "".into(), "sandbox");
        check(&|v| v["sandbox"] = 7.into(), "sandbox");
        // A sandbox changed after the launch is a policy that does not match.
        let boxed: serde_json::Value =
            serde_json::from_slice(&policy().with_sandbox("read-only,on".into()).to_json())
                .unwrap();
        let mut widened = boxed.clone();
        widened["sandbox"] = "off,on".into();
        let err = Policy::from_slice(&serde_json::to_vec(&widened).unwrap(), Path::new("p.json"))
            .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("policyHash"), "{err}");
        let mut removed = boxed;
        removed.as_object_mut().unwrap().remove("sandbox");
        let err = Policy::from_slice(&serde_json::to_vec(&removed).unwrap(), Path::new("p.json"))
            .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("policyHash"), "{err}");
        let err = Policy::from_slice(b"not json", Path::new("p.json")).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("policy"));
    }

    #[test]
    fn version_one_is_read_as_non_persistent() {
        let v1 = br#"{"version":1,"owner":"public","tools":null,"deniedTools":[]}"#;
        let p = Policy::from_slice(v1, Path::new("p.json")).unwrap();
        assert_eq!(p.version, 1);
        assert!(!p.persistent && p.tools.is_none());
    }

    #[test]
    fn written_once_and_missing_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let files = crate::layout::SessionFiles::new(dir.path().join("s.jsonl"));
        let path = files.policy();
        assert_eq!(
            Policy::read_required(&files).unwrap_err().code,
            ErrorCode::NotFound
        );
        policy().write(&path).unwrap();
        assert_eq!(policy().write(&path).unwrap_err().code, ErrorCode::Conflict);
        assert_eq!(Policy::read_required(&files).unwrap(), policy());
        let mut bad = policy();
        bad.denied_tools = vec!["a b".into()];
        assert!(!matches!(files.create_once(&bad), Ok(true)), "not replaced");
        assert!(bad.write(&dir.path().join("other")).is_err(), "checked");
    }
}
