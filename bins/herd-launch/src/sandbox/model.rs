//! Where a Pi child's model answers: the `host:port`s a Pi child under `network: "off"` or an
//! allowlist may still reach, so that "off" means "the model and nothing else".
//!
//! Pi's own files say it: every provider of `<agent dir>/models.json` names its `baseUrl`, and
//! a provider Pi has built in answers at its public address. A child may use any provider it has
//! credentials for, so every provider of `models.json` is allowed, and of the built-in ones
//! those the request's models and Pi's default provider (`settings.json`) name.

use std::path::Path;

use herd_core::{Error, ErrorCode, sidecar};
use herd_sandbox::policy::Endpoint;

/// The bound of each of Pi's files read here.
const READ_LIMIT: u64 = 1024 * 1024;

/// The public addresses of Pi's built-in providers.
const BUILT_IN: &[(&str, &str)] = &[
    ("anthropic", "api.anthropic.com:443"),
    ("openai", "api.openai.com:443"),
    ("openai-codex", "chatgpt.com:443"),
    ("google", "generativelanguage.googleapis.com:443"),
    ("groq", "api.groq.com:443"),
    ("cerebras", "api.cerebras.ai:443"),
    ("xai", "api.x.ai:443"),
    ("openrouter", "openrouter.ai:443"),
    ("mistral", "api.mistral.ai:443"),
    ("zai", "api.z.ai:443"),
    ("github-copilot", "api.individual.githubcopilot.com:443"),
];

/// The addresses a Pi child with `models` (`provider/id`, in order) and Pi's files in
/// `agent_dir` answers at. A `models.json` that is there but unreadable is an error: the child
/// could not reach its model.
pub fn endpoints(agent_dir: &Path, models: &[String]) -> Result<Vec<Endpoint>, Error> {
    let mut found = Vec::new();
    let custom = read_json(&agent_dir.join("models.json"))?;
    let providers = custom
        .as_ref()
        .and_then(|json| json.get("providers"))
        .and_then(serde_json::Value::as_object);
    for (name, provider) in providers.into_iter().flatten() {
        if let Some(url) = provider.get("baseUrl").and_then(serde_json::Value::as_str) {
            found.push(from_url(url).map_err(|why| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "the model provider \"{name}\" of {} answers at {why}; nothing was launched. Ask for network \"on\"",
                        agent_dir.join("models.json").display()
                    ),
                )
                .with_field("network")
            })?);
        }
    }
    let settings = read_json(&agent_dir.join("settings.json"))?;
    let default = settings
        .as_ref()
        .and_then(|json| json.get("defaultProvider"))
        .and_then(serde_json::Value::as_str);
    let named = models
        .iter()
        .filter_map(|m| m.split_once('/').map(|(provider, _)| provider))
        .chain(default);
    for provider in named {
        if let Some((_, address)) = BUILT_IN.iter().find(|(name, _)| *name == provider) {
            found.extend(Endpoint::parse(address).ok());
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn read_json(path: &Path) -> Result<Option<serde_json::Value>, Error> {
    let unreadable = |why: String| {
        Error::new(
            ErrorCode::Unavailable,
            format!(
                "cannot tell where the child's model answers: {}: {why}",
                path.display()
            ),
        )
        .with_field("network")
    };
    match sidecar::read_bounded(path, READ_LIMIT) {
        Ok(None) => Ok(None),
        Ok(Some(bytes)) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| unreadable(e.to_string())),
        Err(e) => Err(unreadable(e.to_string())),
    }
}

/// The `host:port` of an `http://` or `https://` URL, or why it cannot be allowed.
fn from_url(url: &str) -> Result<Endpoint, String> {
    let (rest, port) = if let Some(rest) = url.strip_prefix("https://") {
        (rest, 443)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (rest, 80)
    } else {
        return Err(format!("\"{url}\", which is not an http or https URL"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let address = if authority.rsplit_once(':').is_some() {
        authority.to_owned()
    } else {
        format!("{authority}:{port}")
    };
    Endpoint::parse(&address).map_err(|why| format!("\"{url}\": {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_its_host_and_port_with_the_scheme_s_default() {
        for (url, want) in [
            ("http://127.0.0.1:8080/v1", "127.0.0.1:8080"),
            ("https://api.example.com/v1", "api.example.com:443"),
            ("http://user@Example.com", "example.com:80"),
        ] {
            assert_eq!(from_url(url).unwrap().to_string(), want, "{url}");
        }
        for url in ["ftp://x", "http://10.0.0.1:11434/v1", "http://[::1]:80"] {
            assert!(from_url(url).is_err(), "{url}");
        }
    }

    #[test]
    fn every_custom_provider_and_the_built_in_ones_named_are_allowed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("models.json"),
            r#"{"providers":{"local":{"baseUrl":"http://127.0.0.1:9999/v1"}}}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"defaultProvider":"openai"}"#,
        )
        .unwrap();
        let found = endpoints(dir.path(), &["anthropic/claude".to_owned()]).unwrap();
        let text: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "127.0.0.1:9999",
                "api.anthropic.com:443",
                "api.openai.com:443"
            ]
        );
        std::fs::write(dir.path().join("models.json"), "{").unwrap();
        let err = endpoints(dir.path(), &[]).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("network"));
    }
}
