//! The schemas of `docs/schemas/` against hand-made documents: every schema is a valid
//! draft 2020-12 schema, accepts each fixture of `fixtures/sidecars/valid/<name>/` and rejects
//! each of `fixtures/sidecars/invalid/<name>/`, and every schema has at least one of each.

use std::fs;
use std::path::{Path, PathBuf};

use herd_docs::json_schemas::FILES;
use serde_json::Value;

use crate::support;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sidecars")
}

/// The schema's name: its file name without `.schema.json`.
fn name_of(file: &str) -> &str {
    file.strip_suffix(".schema.json").unwrap_or(file)
}

/// The fixtures of `kind` (`valid` or `invalid`) for the schema `name`, sorted.
fn fixtures(kind: &str, name: &str) -> Vec<(PathBuf, Value)> {
    let dir = fixtures_dir().join(kind).join(name);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| entry.map(|e| e.path()).unwrap_or_default())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
            let value = serde_json::from_str(&text)
                .unwrap_or_else(|err| panic!("{} is not JSON: {err}", path.display()));
            (path, value)
        })
        .collect()
}

#[test]
fn every_schema_is_a_valid_draft_2020_12_schema() {
    for file in FILES {
        let schema = support::schema(file.file);
        if let Err(err) = jsonschema::meta::validate(&schema) {
            panic!("docs/schemas/{} is not a valid schema: {err}", file.file);
        }
        assert_eq!(
            schema.get("$schema").and_then(Value::as_str),
            Some("https://json-schema.org/draft/2020-12/schema"),
            "docs/schemas/{} names its draft",
            file.file
        );
    }
}

#[test]
fn fixtures_are_accepted_or_rejected_as_their_directory_says() {
    let mut missing = Vec::new();
    for file in FILES {
        let name = name_of(file.file);
        let valid = fixtures("valid", name);
        let invalid = fixtures("invalid", name);
        if valid.is_empty() || invalid.is_empty() {
            missing.push(name.to_owned());
        }
        for (path, value) in &valid {
            let found = support::violations(file.file, value);
            assert!(
                found.is_empty(),
                "{} is rejected by {}:\n{}",
                path.display(),
                file.file,
                found.join("\n")
            );
        }
        for (path, value) in &invalid {
            assert!(
                !support::violations(file.file, value).is_empty(),
                "{} is accepted by {}",
                path.display(),
                file.file
            );
        }
    }
    assert!(
        missing.is_empty(),
        "these schemas need at least one valid and one invalid fixture: {}",
        missing.join(", ")
    );
}

#[test]
fn every_fixture_directory_names_a_schema() {
    for kind in ["valid", "invalid"] {
        let dir = fixtures_dir().join(kind);
        for entry in fs::read_dir(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display())) {
            let name = entry
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .unwrap_or_default();
            assert!(
                FILES.iter().any(|f| name_of(f.file) == name),
                "fixtures/sidecars/{kind}/{name} names no schema of docs/schemas/"
            );
        }
    }
}

/// The fixtures of the derived sidecar types also parse as those types, so a fixture cannot
/// describe a file the code would refuse.
#[test]
fn valid_sidecar_fixtures_parse_as_their_rust_types() {
    fn parses<T: serde::de::DeserializeOwned>(name: &str) {
        for (path, value) in fixtures("valid", name) {
            if let Err(err) = serde_json::from_value::<T>(value) {
                panic!("{} does not parse: {err}", path.display());
            }
        }
    }
    parses::<herd_protocol::run::RunRecord>("run-record");
    parses::<herd_protocol::result::RunResult>("run-result");
    parses::<herd_protocol::intents::CancelIntent>("cancel-intent");
    parses::<herd_protocol::intents::SteerQueue>("steer-queue");
    parses::<herd_protocol::intents::SteeringLedger>("steering");
    parses::<herd_protocol::intents::Interrupt>("interrupt");
    parses::<herd_protocol::intents::Expiry>("timeout");
    parses::<herd_protocol::intents::BudgetStop>("budget-stop");
    parses::<herd_protocol::watch::RunEvent>("run-event");
    parses::<herd_protocol::result::LedgerLine>("outcome");
    parses::<herd_protocol::result::Ledgered>("ledgered");
    parses::<herd_protocol::run::Superseded>("superseded");
    parses::<herd_protocol::run::Predecessor>("predecessor");
    parses::<herd_protocol::child::CompletionFile>("completion");
    parses::<herd_protocol::child::Activity>("activity");
    parses::<herd_protocol::launch::LaunchSend>("launch-send");
    parses::<herd_protocol::launch::resurrect::ResurrectDoc>("launch-resurrect");
    parses::<herd_protocol::launch::resurrect::Resurrected>("resurrected");
    parses::<herd_protocol::launch::docs::ModelCatalog>("launch-models");
    parses::<herd_protocol::launch::docs::RolesListing>("launch-roles");
    parses::<herd_protocol::launch::docs::ModelsWritten>("launch-write-task-models");
    parses::<herd_protocol::launch::docs::HandoffDoc>("launch-handoff");
    parses::<herd_remote::host::HostAdded>("launch-host-add");
    parses::<herd_remote::host::HostListing>("launch-host-list");
    parses::<herd_remote::host::HostRemoved>("launch-host-remove");
    parses::<herd_remote::HostRecord>("host-record");
    parses::<herd_protocol::relay::RelayState>("relay-state");
    parses::<herd_protocol::watch::WatchAck>("watch-ack");
    parses::<herd_protocol::worktree::TrustApproved>("worktree-trust");
    parses::<herd_protocol::docs::DocsReport>("docs-report");
    parses::<herd_protocol::accept::RunGate>("run-acceptance");
    parses::<herd_protocol::accept::ReviewRecord>("review");
    parses::<herd_protocol::accept::VerdictDetails>("accept-verdict");
    parses::<herd_protocol::accept::Ledger>("accept-report");
    parses::<herd_protocol::accept::Memo>("verify-memo");
    for (path, _) in fixtures("valid", "process-identity") {
        let bytes = fs::read(&path).unwrap_or_default();
        if let Err(err) = herd_core::identity::Record::from_slice(&bytes, &path) {
            panic!("{} is refused: {err}", path.display());
        }
    }
    for (path, value) in fixtures("valid", "accept-spec") {
        if let Err(err) = herd_accept::AcceptSpec::from_value(&value) {
            panic!("{} is refused: {}", path.display(), err.message);
        }
    }
    for (path, value) in fixtures("invalid", "accept-spec") {
        assert!(
            herd_accept::AcceptSpec::from_value(&value).is_err(),
            "{} is accepted by AcceptSpec::from_value",
            path.display()
        );
    }
    for (path, _) in fixtures("invalid", "process-identity") {
        let bytes = fs::read(&path).unwrap_or_default();
        assert!(
            herd_core::identity::Record::from_slice(&bytes, &path).is_err(),
            "{} is accepted by identity::Record::from_slice",
            path.display()
        );
    }
    for (kind, accepted) in [("valid", true), ("invalid", false)] {
        for (path, _) in fixtures(kind, "launch-policy") {
            let bytes = fs::read(&path).unwrap_or_default();
            let read = herd_protocol::launch::policy::Policy::from_slice(&bytes, &path);
            assert_eq!(
                read.is_ok(),
                accepted,
                "{}: Policy::from_slice says {read:?}",
                path.display()
            );
        }
    }
    for (path, value) in fixtures("valid", "worktree-manifest") {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let art = herd_protocol::layout::Artifacts::new(dir.path());
        let id = value
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        fs::create_dir_all(art.worktree_runs_dir()).unwrap_or_else(|err| panic!("{err}"));
        fs::copy(&path, art.worktree_manifest(&id)).unwrap_or_else(|err| panic!("{err}"));
        if let Err(err) = herd_protocol::worktree::manifest::Manifest::load(&art, &id) {
            panic!("{} is refused: {err}", path.display());
        }
    }
}
