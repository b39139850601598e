//! `herd-docs`: generate and check the documentation tables from the tool schemas.
//!
//! Everything generated has one source that the code or the schema files own:
//!
//! - `docs/tools.md`: the blocks `tools`, `child-tools`, `commands`, `subagent-params` and
//!   `tool-reference`, from the tool registry in `libs/herd-tools/schemas/`;
//! - `docs/pi-herd.md`: the block `pi-herd-params`, from the Pi Herd face's schema
//!   ([`PI_HERD_SCHEMA`]);
//! - `docs/exit-codes.md`: the blocks `exit-codes` and `error-codes`, from `herd_core::exit` and
//!   `herd_core::ErrorCode`;
//! - `docs/cli.md`: the block `cli`, from the clap definitions of the six binaries;
//! - `docs/sidecars.md`: the block `schemas`, the list of schema files ([`json_schemas::FILES`]);
//! - `docs/schemas/`: the JSON Schemas of sidecars and `--json` outputs ([`json_schemas::FILES`])
//!   and the tool registry itself (`tools.json`);
//! - `extension/src/generated/protocol.ts`: the formats' TypeScript types, from those schemas
//!   ([`typescript`]);
//! - `extension/src/generated/run-files.ts`: the names of the per-run files and of the files
//!   beside a session, from herd-protocol's tables ([`run_files`]).
//!
//! Pages are hand-written; only the lines between a block's markers are generated. Check mode
//! changes nothing and names every stale block, so CI (and a test) can refuse drift.

pub mod blocks;
pub mod cli_ref;
pub mod exit_codes;
pub mod json_schemas;
pub mod run_files;
pub mod tools;
pub mod typescript;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use herd_cli::Output;
use herd_core::{Error, ErrorCode, exit, sidecar};
use herd_tools::Registry;

use crate::blocks::Block;

/// The tool schemas, relative to the workspace root.
pub const SCHEMA_DIR: &str = "libs/herd-tools/schemas";

/// The Pi Herd face's `subagent` schema, relative to the workspace root: the parent
/// extension registers it as it is, and `docs/pi-herd.md` shows its parameters.
pub const PI_HERD_SCHEMA: &str = "extension/src/parent/piherd/subagent.schema.json";

/// The generated JSON files, relative to the workspace root.
pub const SCHEMAS_OUT_DIR: &str = "docs/schemas";

/// The largest page or generated file a run reads.
const MAX_PAGE_BYTES: u64 = 4 * 1024 * 1024;

/// Regenerate (or check) the generated blocks of the docs from the schemas.
#[derive(Debug, Parser)]
#[command(name = "herd-docs", version, about, long_about = None)]
pub struct Cli {
    /// Change nothing; exit 1 naming each stale block.
    #[arg(long)]
    pub check: bool,
    /// The workspace root [default: the nearest directory at or above the current one that holds
    /// libs/herd-tools/schemas].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the tool registry: every tool with its sessions, exposure, description and
    /// parameters schema, and every command.
    Schemas {
        /// Print the registry as JSON, the document a host registers its tools from.
        #[arg(long)]
        json: bool,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match self.command {
            // The registry is printed as text so the property order of the schema files survives:
            // a `serde_json::Value` would sort it, and a model reads parameters in that order.
            Some(Command::Schemas { .. }) => false,
            None => self.json,
        }
    }
}

/// The entry point of the binary (and of `cargo xtask docs`).
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        Some(Command::Schemas { json }) => schemas(json),
        None => {
            let root = match cli.root {
                Some(root) => root,
                None => find_root()?,
            };
            let mode = if cli.check { Mode::Check } else { Mode::Write };
            Ok(report_output(&generate(&root, mode)?))
        }
    }
}

fn schemas(json: bool) -> Result<Output, Error> {
    let registry = Registry::builtin()?;
    let value = serde_json::to_value(registry)
        .map_err(|err| Error::internal(format!("cannot serialize the tool registry: {err}")))?;
    let human = if json {
        registry.to_json_pretty()?
    } else {
        let mut lines = Vec::new();
        for tool in &registry.tools {
            let sessions: Vec<&str> = tool.sessions.iter().map(|s| s.as_str()).collect();
            lines.push(format!(
                "{} [{}]: {}",
                tool.name,
                sessions.join(", "),
                tool.description
            ));
        }
        for command in &registry.commands {
            let usage: Vec<&str> = command.usage.iter().map(|u| u.text.as_str()).collect();
            lines.push(format!("{}: {}", usage.join(" | "), command.description));
        }
        lines.join("\n")
    };
    Ok(Output::ok(value, human))
}

/// Finds the workspace root: the nearest directory at or above the current one holding
/// [`SCHEMA_DIR`].
fn find_root() -> Result<PathBuf, Error> {
    let cwd = std::env::current_dir().map_err(|err| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot read the current directory: {err}"),
        )
    })?;
    cwd.ancestors()
        .find(|dir| dir.join(SCHEMA_DIR).is_dir())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            Error::invalid(
                "root",
                format!("no directory at or above the current one holds {SCHEMA_DIR}; pass --root"),
            )
        })
}

/// Whether a run rewrites the docs or only compares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Write,
    Check,
}

/// What differs between the docs and what the sources generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A block, or a whole generated file, has other content.
    Stale,
    /// A generated file does not exist.
    Missing,
    /// A file in `docs/schemas/` that nothing generates.
    Orphan,
}

/// One difference, named by file (relative to the root, `/`-separated) and block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub file: String,
    pub block: Option<String>,
    pub problem: Problem,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.problem, &self.block) {
            (Problem::Stale, Some(block)) => write!(f, "{}: block `{block}` is stale", self.file),
            (Problem::Stale, None) => write!(f, "{} is stale", self.file),
            (Problem::Missing, _) => write!(f, "{} is missing", self.file),
            (Problem::Orphan, _) => write!(f, "{} is not generated from anything", self.file),
        }
    }
}

impl Finding {
    /// What write mode did about the finding.
    pub fn done(&self) -> String {
        match (&self.problem, &self.block) {
            (Problem::Stale, Some(block)) => {
                format!("regenerated block `{block}` of {}", self.file)
            }
            (Problem::Stale | Problem::Missing, None) | (Problem::Missing, Some(_)) => {
                format!("wrote {}", self.file)
            }
            (Problem::Orphan, _) => format!("removed {}", self.file),
        }
    }
}

/// The outcome of [`generate`]: in check mode what is stale, in write mode what was rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub mode: Mode,
    pub findings: Vec<Finding>,
}

impl Report {
    /// Returns whether the docs were already what the sources generate.
    pub fn is_fresh(&self) -> bool {
        self.findings.is_empty()
    }
}

fn report_output(report: &Report) -> Output {
    use herd_protocol::docs::{DocsFinding, DocsMode, DocsProblem, DocsReport};
    let findings = report
        .findings
        .iter()
        .map(|finding| DocsFinding {
            file: finding.file.clone(),
            block: finding.block.clone(),
            problem: match finding.problem {
                Problem::Stale => DocsProblem::Stale,
                Problem::Missing => DocsProblem::Missing,
                Problem::Orphan => DocsProblem::Orphan,
            },
        })
        .collect();
    let json = DocsReport {
        mode: match report.mode {
            Mode::Write => DocsMode::Write,
            Mode::Check => DocsMode::Check,
        },
        fresh: report.is_fresh(),
        findings,
    };
    match (report.mode, report.is_fresh()) {
        (_, true) => Output::ok(json, "docs are up to date"),
        (Mode::Check, false) => {
            let lines: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
            let human = format!("{}\nrun `cargo xtask docs` to regenerate", lines.join("\n"));
            Output::ok(json, human).with_exit(exit::NEGATIVE)
        }
        (Mode::Write, false) => {
            let lines: Vec<String> = report.findings.iter().map(Finding::done).collect();
            Output::ok(json, lines.join("\n"))
        }
    }
}

/// One hand-written page and the blocks it holds.
struct Page {
    path: &'static str,
    blocks: Vec<Block>,
}

fn block(name: &'static str, source: &str, body: &str) -> Block {
    Block {
        name,
        content: blocks::content(source, body),
    }
}

/// The Pi Herd face's schema, read from the workspace.
fn pi_herd_schema(root: &Path) -> Result<herd_tools::Schema, Error> {
    let text = read(&root.join(PI_HERD_SCHEMA))?
        .ok_or_else(|| Error::invalid(PI_HERD_SCHEMA, format!("{PI_HERD_SCHEMA} is missing")))?;
    herd_tools::schema::parse(&text)
        .map_err(|err| Error::invalid(PI_HERD_SCHEMA, format!("{PI_HERD_SCHEMA}: {err}")))
}

fn pages(registry: &Registry, pi_herd: &herd_tools::Schema) -> Result<Vec<Page>, Error> {
    let schema = "the schema";
    let params = tools::own_block_params(registry).ok_or_else(|| {
        Error::invalid(
            SCHEMA_DIR,
            format!(
                "the registry has no `{}` tool for the subagent-params block",
                tools::OWN_BLOCK_TOOL
            ),
        )
    })?;
    Ok(vec![
        Page {
            path: "docs/tools.md",
            blocks: vec![
                block("tools", schema, &tools::tools(registry)),
                block("child-tools", schema, &tools::child_tools(registry)),
                block("commands", schema, &tools::commands(registry)),
                block("subagent-params", schema, &params),
                block(
                    "subagent-acceptance-params",
                    schema,
                    &tools::acceptance_block_params(registry).unwrap_or_default(),
                ),
                block(
                    "subagent-host-params",
                    schema,
                    &tools::host_block_params(registry).unwrap_or_default(),
                ),
                block(
                    "subagent-sandbox-params",
                    schema,
                    &tools::sandbox_block_params(registry).unwrap_or_default(),
                ),
                block(
                    "worktree-remove-herd-params",
                    schema,
                    &tools::herd_block_params(registry, "worktree_remove").unwrap_or_default(),
                ),
                block("tool-reference", schema, &tools::tool_reference(registry)),
            ],
        },
        Page {
            path: "docs/pi-herd.md",
            blocks: vec![block(
                "pi-herd-params",
                PI_HERD_SCHEMA,
                &tools::params_table(pi_herd),
            )],
        },
        Page {
            path: "docs/exit-codes.md",
            blocks: vec![
                block(
                    "exit-codes",
                    "herd_core::exit::TABLE",
                    &exit_codes::exit_codes(),
                ),
                block(
                    "error-codes",
                    "herd_core::ErrorCode",
                    &exit_codes::error_codes(),
                ),
            ],
        },
        Page {
            path: "docs/sidecars.md",
            blocks: vec![block(
                "schemas",
                "bins/herd-docs/src/json_schemas.rs",
                &json_schemas::table(),
            )],
        },
        Page {
            path: "docs/cli.md",
            blocks: vec![block(
                "cli",
                "the clap definitions in bins/*/src/lib.rs",
                &cli_ref::reference(cli_ref::binaries()),
            )],
        },
    ])
}

/// The files of `docs/schemas/`, by name, with their content.
fn schema_files(registry: &Registry) -> Result<Vec<(String, String)>, Error> {
    let mut files = Vec::new();
    for file in json_schemas::FILES {
        files.push((file.file.to_owned(), json_schemas::render(file)?));
    }
    let mut registry_text = registry.to_json_pretty()?;
    registry_text.push('\n');
    files.push((json_schemas::REGISTRY_FILE.to_owned(), registry_text));
    Ok(files)
}

/// Regenerates (or, in check mode, compares) every generated part of the docs under `root`.
///
/// A malformed schema file or page marker is an `invalid_request` naming the file; nothing is
/// written then, in either mode.
pub fn generate(root: &Path, mode: Mode) -> Result<Report, Error> {
    let registry = Registry::load_dir(&root.join(SCHEMA_DIR)).map_err(|err| {
        let file = err.file().to_owned();
        herd_core::error::report(ErrorCode::InvalidRequest, &err).with_field(file)
    })?;

    // Everything is computed and checked before anything is written, so an error leaves the
    // docs as they were.
    let mut changes = Changes::default();
    let pi_herd = pi_herd_schema(root)?;
    for page in pages(&registry, &pi_herd)? {
        changes.page(root, &page)?;
    }
    let files = schema_files(&registry)?;
    for (name, content) in &files {
        changes.file(root, format!("{SCHEMAS_OUT_DIR}/{name}"), content.clone())?;
    }
    // The extensions' TypeScript types, from the same schemas, and the names of their files,
    // from herd-protocol's tables.
    let typed = typescript_formats(&files)?;
    changes.file(
        root,
        typescript::OUT_FILE.to_owned(),
        typescript::render(&typed),
    )?;
    changes.file(root, run_files::OUT_FILE.to_owned(), run_files::render())?;

    let orphans = orphans(&root.join(SCHEMAS_OUT_DIR), &files)?;
    for (name, _) in &orphans {
        changes.findings.push(Finding {
            file: format!("{SCHEMAS_OUT_DIR}/{name}"),
            block: None,
            problem: Problem::Orphan,
        });
    }

    if mode == Mode::Write {
        for (path, content) in &changes.writes {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|err| sidecar::Error::io(dir, err))?;
            }
            sidecar::write_atomic(path, content.as_bytes())?;
        }
        for (_, path) in &orphans {
            std::fs::remove_file(path).map_err(|err| sidecar::Error::io(path, err))?;
        }
    }
    Ok(Report {
        mode,
        findings: changes.findings,
    })
}

/// What generation found out of date and would write, gathered before anything is written.
#[derive(Default)]
struct Changes {
    findings: Vec<Finding>,
    writes: Vec<(PathBuf, String)>,
}

impl Changes {
    /// The generated file `rel` (under `root`) compared with `content`.
    fn file(&mut self, root: &Path, rel: String, content: String) -> Result<(), Error> {
        let path = root.join(&rel);
        if let Some(problem) = compare(&path, &content)? {
            self.findings.push(Finding {
                file: rel,
                block: None,
                problem,
            });
            self.writes.push((path, content));
        }
        Ok(())
    }

    /// The hand-written page of `page`, its generated blocks spliced in.
    fn page(&mut self, root: &Path, page: &Page) -> Result<(), Error> {
        let path = root.join(page.path);
        let Some(text) = read(&path)? else {
            return Err(Error::invalid(
                page.path,
                format!(
                    "{} is missing; it is a hand-written page that holds generated blocks",
                    page.path
                ),
            ));
        };
        let spliced = blocks::splice(&text, &page.blocks)
            .map_err(|err| Error::invalid(page.path, format!("{}: {err}", page.path)))?;
        for name in &spliced.stale {
            self.findings.push(Finding {
                file: page.path.to_owned(),
                block: Some((*name).to_owned()),
                problem: Problem::Stale,
            });
        }
        if !spliced.stale.is_empty() {
            self.writes.push((path, spliced.text));
        }
        Ok(())
    }
}

/// The schemas of the formats the extensions read, by name, from the generated schema files.
fn typescript_formats(
    files: &[(String, String)],
) -> Result<Vec<(&'static str, serde_json::Value)>, Error> {
    typescript::FORMATS
        .iter()
        .map(|format| {
            let Some((_, content)) = files.iter().find(|(name, _)| name == format) else {
                return Err(Error::internal(format!(
                    "{format} is a format of the extensions but no schema file"
                )));
            };
            let schema = serde_json::from_str(content)
                .map_err(|e| Error::internal(format!("{format}: {e}")))?;
            Ok((*format, schema))
        })
        .collect()
}

/// The schema files in `out_dir` that no schema generates any more, sorted.
fn orphans(out_dir: &Path, files: &[(String, String)]) -> Result<Vec<(String, PathBuf)>, Error> {
    let mut orphans = Vec::new();
    if out_dir.is_dir() {
        let entries = std::fs::read_dir(out_dir).map_err(|err| sidecar::Error::io(out_dir, err))?;
        for entry in entries {
            let entry = entry.map_err(|err| sidecar::Error::io(out_dir, err))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") && !files.iter().any(|(known, _)| *known == name) {
                orphans.push((name, entry.path()));
            }
        }
    }
    orphans.sort();
    Ok(orphans)
}

/// How the generated file at `path` differs from `content`, if it does.
fn compare(path: &Path, content: &str) -> Result<Option<Problem>, Error> {
    Ok(match read(path)? {
        None => Some(Problem::Missing),
        Some(old) if old.replace("\r\n", "\n") != content => Some(Problem::Stale),
        Some(_) => None,
    })
}

fn read(path: &Path) -> Result<Option<String>, Error> {
    let Some(bytes) = sidecar::read_given(path, MAX_PAGE_BYTES)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        Error::invalid(
            path.display().to_string(),
            format!("{} is not UTF-8", path.display()),
        )
    })
}
