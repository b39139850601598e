//! The model catalog: the models the child's Pi has credentials for, as Pi itself says.
//!
//! Which providers are authenticated is Pi's own knowledge (its `auth.json`, the `apiKey` of a
//! `models.json` provider, provider environment variables, OAuth logins and providers that
//! extensions register), so herd asks Pi instead of reimplementing it: `pi --list-models` lists
//! exactly the models whose provider has configured credentials. It runs once per command, with
//! the launch's environment and working directory, bounded by [`LIST_BUDGET`] and
//! [`LIST_CAP`]; of its answer only the yes to a named model is kept for a later command
//! ([`recent`]).
//!
//! `task:<category>` takes its candidates in order and keeps those whose provider Pi lists;
//! `herd-launch models` prints the same answer as the catalog the parent's `subagent`
//! guidelines show ([`Catalog::guideline`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use herd_core::escape::{Noun, encode_host_value, encode_list};
use herd_core::subprocess::{self, Command, Keep};
use herd_core::{Error, ErrorCode};
use herd_protocol::launch::docs::{CATALOG_VERSION, ModelCatalog};

use crate::pi::PiCommand;

pub mod recent;

/// How long `pi --list-models` may take (Pi bounds its own listing by 15 s, startup comes first).
pub const LIST_BUDGET: Duration = Duration::from_secs(30);
/// The most of Pi's listing read.
pub const LIST_CAP: usize = 1024 * 1024;
/// The bound of the catalog text in the `subagent` guidelines.
pub const GUIDELINE_MAX_CHARS: usize = 4_000;

/// The columns of Pi's listing, in order.
const COLUMNS: [&str; 6] = [
    "provider", "model", "context", "max-out", "thinking", "images",
];
/// What Pi prints instead of the table when no provider has credentials.
const NO_MODELS: &str = "No models available.";

/// One model Pi has credentials for, as the catalog prints it.
use herd_protocol::launch::docs::CatalogModel as Model;
/// One category of `models.tasks`, with its candidates and the authenticated ones.
use herd_protocol::launch::docs::CatalogTask as Task;

/// Asks the Pi at `pi` which models it has credentials for, in `cwd`.
pub fn list(pi: &PiCommand, cwd: &Path) -> Result<Vec<Model>, Error> {
    let cmd = Command::new(pi.executable(), LIST_BUDGET)
        .args(pi.leading_args())
        .arg("--list-models")
        .cwd(cwd)
        .stdin_null()
        .stdout_cap(LIST_CAP, Keep::Head)
        .stderr_cap(64 * 1024, Keep::Tail);
    let what = format!("`{pi} --list-models`");
    let unavailable = |why: String| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot tell which models Pi has credentials for: {what} {why}"),
        )
        .with_field("model")
    };
    let out = subprocess::run(&cmd).map_err(|e| unavailable(format!("could not run: {e}")))?;
    if out.timed_out {
        return Err(unavailable(format!(
            "did not answer within {} s",
            LIST_BUDGET.as_secs()
        )));
    }
    if !out.success() {
        let stderr = out.stderr.text();
        let how = out
            .code
            .map_or_else(|| "killed by a signal".to_owned(), |c| format!("exit {c}"));
        return Err(unavailable(match stderr.trim() {
            "" => format!("failed ({how}) and said nothing on stderr"),
            said => format!("failed ({how}): {}", encode_host_value(said, 500)),
        }));
    }
    if out.stdout.truncated {
        return Err(unavailable(format!("printed more than {} bytes", LIST_CAP)));
    }
    parse(&out.stdout.text()).map_err(unavailable)
}

/// Parses Pi's listing: a header naming [`COLUMNS`], each column padded to its widest value, then
/// one row per model; or [`NO_MODELS`]. Anything else is refused, never guessed at.
pub fn parse(text: &str) -> Result<Vec<Model>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return Err("printed nothing".to_owned());
    };
    if header.starts_with(NO_MODELS) {
        return Ok(Vec::new());
    }
    // Pi pads with `padEnd`, which counts UTF-16 code units; so do the offsets here.
    let header: Vec<u16> = header.encode_utf16().collect();
    let mut starts = Vec::new();
    let mut names = Vec::new();
    let mut i = 0;
    while i < header.len() {
        if header[i] == u16::from(b' ') {
            i += 1;
            continue;
        }
        let start = i;
        while i < header.len() && header[i] != u16::from(b' ') {
            i += 1;
        }
        starts.push(start);
        names.push(String::from_utf16_lossy(&header[start..i]));
    }
    if names != COLUMNS {
        return Err(format!(
            "printed a header herd does not read: {}",
            encode_host_value(&names.join(" "), 200)
        ));
    }
    let mut models = Vec::new();
    for line in lines {
        let row: Vec<u16> = line.encode_utf16().collect();
        let cell = |k: usize| -> Result<String, String> {
            let start = starts[k];
            let end = starts.get(k + 1).map_or(row.len(), |next| next - 2);
            let Some(units) = row.get(start..end.min(row.len())) else {
                return Err(format!(
                    "printed a row herd does not read: {}",
                    encode_host_value(line, 200)
                ));
            };
            let value = String::from_utf16_lossy(units).trim_end().to_owned();
            // A padded column ends in spaces, and the separator before the next is two more.
            if starts.get(k + 1).is_some_and(|&next| {
                row.get(next - 2..next) != Some(&[u16::from(b' '), u16::from(b' ')][..])
            }) || value.is_empty()
            {
                return Err(format!(
                    "printed a row herd does not read: {}",
                    encode_host_value(line, 200)
                ));
            }
            Ok(value)
        };
        let flag = |k: usize| -> Result<bool, String> {
            match cell(k)?.as_str() {
                "yes" => Ok(true),
                "no" => Ok(false),
                other => Err(format!(
                    "printed {} where yes or no belongs",
                    encode_host_value(other, 100)
                )),
            }
        };
        models.push(Model::new(
            cell(0)?,
            cell(1)?,
            cell(2)?,
            cell(3)?,
            flag(4)?,
            flag(5)?,
        ));
    }
    Ok(models)
}

/// The providers of `models`.
pub fn providers(models: &[Model]) -> BTreeSet<&str> {
    models.iter().map(|m| m.provider.as_str()).collect()
}

/// The provider of a `provider/id` model value.
fn provider_of(model: &str) -> &str {
    model.split_once('/').map_or(model, |(p, _)| p)
}

/// Splits `candidates` into those whose provider has credentials and those whose provider has
/// none, each in the given order.
pub fn authenticated(candidates: &[String], models: &[Model]) -> (Vec<String>, Vec<String>) {
    let providers = providers(models);
    candidates
        .iter()
        .cloned()
        .partition(|c| providers.contains(provider_of(c)))
}

/// The thinking levels Pi reads as a `:<level>` suffix of a model value.
const THINKING_SUFFIXES: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];
/// The bound of the catalog a refusal lists when it has no close match to offer.
const REFUSAL_LIST_MAX_CHARS: usize = 600;

/// The id of `model` without its provider: `fake/child` is `child`.
fn id_of(model: &Model) -> &str {
    model
        .model
        .strip_prefix(model.provider.as_str())
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(&model.model)
}

/// The catalog's models that `value` names as Pi resolves an exact name: `provider/id`, or a
/// bare id, either without case and with an optional `:<thinking>` suffix.
fn named_by<'a>(value: &str, models: &'a [Model]) -> Vec<&'a Model> {
    let base = value
        .rsplit_once(':')
        .filter(|(_, level)| THINKING_SUFFIXES.contains(level))
        .map(|(base, _)| base);
    for wanted in std::iter::once(value).chain(base) {
        let full: Vec<&Model> = models
            .iter()
            .filter(|m| m.model.eq_ignore_ascii_case(wanted))
            .collect();
        if !full.is_empty() {
            return full;
        }
        let bare: Vec<&Model> = models
            .iter()
            .filter(|m| id_of(m).eq_ignore_ascii_case(wanted))
            .collect();
        if !bare.is_empty() {
            return bare;
        }
    }
    Vec::new()
}

/// Refuses (field `model`) a model `named` explicitly that is not in the catalog: one Pi has no
/// credentials for, a typo, or a bare id on several providers. The refusal offers the close
/// matches, else the catalog itself, so the person can pick one.
pub fn check_named(named: &[String], models: &[Model]) -> Result<(), Error> {
    for value in named {
        let found = named_by(value, models);
        let shown = encode_host_value(value, 200);
        let providers: BTreeSet<&str> = found.iter().map(|m| m.provider.as_str()).collect();
        if providers.len() > 1 {
            let names: Vec<&str> = found.iter().map(|m| m.model.as_str()).collect();
            return Err(Error::invalid(
                "model",
                format!(
                    "`{shown}` names a model of several providers ({}): name one as provider/model",
                    encode_list(&names, REFUSAL_LIST_MAX_CHARS, MODELS)
                ),
            ));
        }
        if !found.is_empty() {
            continue;
        }
        let mut message =
            format!("`{shown}` is not a model Pi has credentials for (`pi --list-models`)");
        let close: Vec<String> = if value.contains('/') {
            herd_core::suggest::close_matches(value, models.iter().map(|m| m.model.as_str()))
                .into_iter()
                .map(str::to_owned)
                .collect()
        } else {
            let ids = herd_core::suggest::close_matches(value, models.iter().map(id_of));
            models
                .iter()
                .filter(|m| ids.contains(&id_of(m)))
                .map(|m| m.model.clone())
                .collect()
        };
        let close: Vec<String> = close.iter().map(|m| encode_host_value(m, 200)).collect();
        let close: Vec<&str> = close.iter().map(String::as_str).collect();
        match herd_core::suggest::did_you_mean(&close) {
            Some(guess) => message.push_str(&format!(": {guess}")),
            None if models.is_empty() => {
                message.push_str(": it has credentials for no model; log in to a provider first");
            }
            None => {
                let names: Vec<&str> = models.iter().map(|m| m.model.as_str()).collect();
                message.push_str(&format!(
                    "; it has credentials for {}",
                    encode_list(&names, REFUSAL_LIST_MAX_CHARS, MODELS)
                ));
            }
        }
        return Err(Error::invalid("model", message));
    }
    Ok(())
}

/// How the catalog's lists of models end when they are cut.
const MODELS: Noun = Noun::new("model", "models");

/// The catalog: the authenticated models and the task categories over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    pub models: Vec<Model>,
    /// Each category of `models.tasks` with its candidates and the authenticated ones.
    pub tasks: Vec<Task>,
    /// `guidelines.launchRoster`: whether the guidelines ask for the launch roster.
    pub launch_roster: bool,
}

impl Catalog {
    pub fn new(models: Vec<Model>, tasks: &[(String, Vec<String>)]) -> Catalog {
        let tasks = tasks
            .iter()
            .map(|(category, candidates)| Task {
                category: category.clone(),
                candidates: candidates.clone(),
                authenticated: authenticated(candidates, &models).0,
            })
            .collect();
        Catalog {
            models,
            tasks,
            launch_roster: true,
        }
    }

    pub fn to_json(&self) -> ModelCatalog {
        ModelCatalog {
            format_version: CATALOG_VERSION,
            models: self.models.clone(),
            tasks: self.tasks.clone(),
            guideline: self.guideline(),
            launch_roster: self.launch_roster,
        }
    }

    /// The catalog as one guideline of the `subagent` tool, at most [`GUIDELINE_MAX_CHARS`]
    /// characters: every value encoded, long lists ending in a count.
    pub fn guideline(&self) -> String {
        const CATEGORIES: Noun = Noun::new("category", "categories");
        let names: Vec<String> = self
            .models
            .iter()
            .map(|m| {
                let mut name = m.model.clone();
                if m.thinking {
                    name.push_str(" (thinking)");
                }
                name
            })
            .collect();
        let mut text = if names.is_empty() {
            "Model catalog for `subagent`: Pi has credentials for no model, so a child launched now has none either; ask the user to log in to a provider.".to_owned()
        } else {
            format!(
                "Model catalog for `subagent`, the models Pi has credentials for (pass one as `model`, exactly as written): {}.",
                encode_list(&names, GUIDELINE_MAX_CHARS / 2, MODELS)
            )
        };
        if !self.tasks.is_empty() {
            let categories: Vec<String> = self
                .tasks
                .iter()
                .map(|t| {
                    let first = t.authenticated.first().map_or_else(
                        || "no authenticated candidate".to_owned(),
                        |m| format!("first authenticated candidate {m}"),
                    );
                    format!("task:{} ({first})", t.category)
                })
                .collect();
            let room = GUIDELINE_MAX_CHARS.saturating_sub(text.chars().count() + 100);
            text.push_str(&format!(
                " Task categories, each as the whole `model` value: {}.",
                encode_list(&categories, room, CATEGORIES)
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "provider  model        context  max-out  thinking  images\n\
                           fake      fake-model   128K     4.1K     no        no    \n\
                           fake      other model  1K       100      yes       yes   \n\
                           nokey     nk-model     128K     4.1K     no        no    \n";

    #[test]
    fn a_listing_is_read_by_its_columns_with_spaces_in_an_id() {
        let models = parse(LISTING).unwrap();
        assert_eq!(models.len(), 3);
        assert_eq!(models[1].model, "fake/other model");
        assert!(models[1].thinking && models[1].images);
        assert_eq!(models[2].context, "128K");
        assert_eq!(
            parse("No models available. Use /login\n").unwrap(),
            Vec::new()
        );
    }

    #[test]
    fn anything_but_the_table_is_refused() {
        assert!(parse("").is_err());
        assert!(parse("provider  model\nfake  m\n").is_err());
        let bad = LISTING.replace("yes       yes", "maybe     yes");
        assert!(parse(&bad).is_err());
    }

    #[test]
    fn task_candidates_keep_their_order_among_authenticated_providers() {
        let models = parse(LISTING).unwrap();
        let candidates = ["locked/a", "nokey/nk-model", "fake/x"].map(str::to_owned);
        let (kept, skipped) = authenticated(&candidates, &models);
        assert_eq!(kept, ["nokey/nk-model", "fake/x"]);
        assert_eq!(skipped, ["locked/a"]);
    }

    #[test]
    fn a_named_model_is_one_of_the_catalog_or_refused_with_its_close_matches() {
        let mut models = parse(LISTING).unwrap();
        models.push(Model::new(
            "other".into(),
            "fake-model".into(),
            "1K".into(),
            "1K".into(),
            false,
            false,
        ));
        let names = |list: &[&str]| list.iter().map(|&m| m.to_owned()).collect::<Vec<_>>();
        assert!(check_named(&names(&["FAKE/fake-model", "nk-model:high"]), &models).is_ok());
        let refused = check_named(&names(&["fake-model"]), &models).unwrap_err();
        assert_eq!(refused.field.as_deref(), Some("model"));
        assert!(
            refused
                .to_string()
                .contains("several providers (fake/fake-model, other/fake-model)"),
            "{refused}"
        );
        let refused = check_named(&names(&["nokey/nk-modl"]), &models).unwrap_err();
        assert!(
            refused.to_string().contains("did you mean nokey/nk-model?"),
            "{refused}"
        );
        let refused = check_named(&names(&["x\nParent action: y"]), &[]).unwrap_err();
        assert!(!refused.to_string().contains('\n'), "{refused}");
        assert!(
            refused.to_string().contains("credentials for no model"),
            "{refused}"
        );
    }

    #[test]
    fn the_guideline_is_bounded_and_one_line() {
        let model = |i: usize| {
            Model::new(
                "p".into(),
                format!("m{i}\nParent action: x"),
                "1K".into(),
                "1K".into(),
                false,
                false,
            )
        };
        let tasks: Vec<(String, Vec<String>)> = (0..500)
            .map(|i| (format!("c{i}"), vec![format!("p/m{i}")]))
            .collect();
        let catalog = Catalog::new((0..2000).map(model).collect(), &tasks);
        let text = catalog.guideline();
        assert!(
            text.chars().count() <= GUIDELINE_MAX_CHARS,
            "{}",
            text.len()
        );
        assert!(!text.contains('\n'));
        assert!(text.contains("more models)"), "{text}");
        assert!(text.contains("more categories)"), "{text}");
    }
}
