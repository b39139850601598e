//! Whether Herdr shows herd's notices: its `[ui.toast] delivery`, read from Herdr's own
//! configuration file as Herdr reads it. Herdr's default is `off`, and then every notice herd
//! sends is answered `disabled` and shown nowhere but in Pi.
//!
//! Herdr's file is `$HERDR_CONFIG_PATH`, else `$XDG_CONFIG_HOME/herdr/config.toml`, else
//! `~/.config/herdr/config.toml`. `delivery` is `off`, `herdr` (its own toast), `terminal` (the
//! terminal's notification) or `system` (the desktop's); without it, the older `enabled = true`
//! means `herdr`. A file Herdr cannot read leaves it at its defaults: off. A running Herdr reads
//! the file at its start and on `herdr server reload-config`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use herd_protocol::cleanup::Check;
use serde::Deserialize;

use crate::inspect::{shown, shown_path};

/// The check's name.
const NAME: &str = "herdr notifications";

/// What turns them on, and what makes a running Herdr read it.
const TURN_ON: &str = "delivery = \"herdr\"";
const RELOAD: &str = "`herdr server reload-config`";

/// Herdr's configuration file in environment `env`, as Herdr finds it.
pub fn config_path(env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    if let Some(path) = env("HERDR_CONFIG_PATH") {
        return PathBuf::from(path);
    }
    let dir = match (env("XDG_CONFIG_HOME"), env("HOME")) {
        (Some(dir), _) => PathBuf::from(dir).join("herdr"),
        (None, Some(home)) => PathBuf::from(home).join(".config/herdr"),
        (None, None) => std::env::temp_dir().join("herdr"),
    };
    dir.join("config.toml")
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct File {
    ui: Ui,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Ui {
    toast: Option<Toast>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Toast {
    delivery: Option<Delivery>,
    enabled: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Delivery {
    Off,
    Herdr,
    Terminal,
    System,
}

/// The check of Herdr's notifications, from the text of its configuration file at `path`
/// (`Ok(None)`: there is none).
pub fn check(path: &Path, text: std::io::Result<Option<String>>) -> Check {
    let at = shown_path(path);
    let off = |detail: String| Check {
        name: NAME.into(),
        ok: false,
        needed: false,
        detail,
    };
    let file: File = match text {
        Ok(None) => {
            return off(format!(
                "off (Herdr's default), so herd's notices show only in Pi; to turn them on, create {at} with the lines `[ui.toast]` and `{TURN_ON}`, then run {RELOAD}"
            ));
        }
        Err(e) => {
            return off(format!(
                "{at} cannot be read ({}), so Herdr uses its defaults: notifications off",
                shown(&e.to_string())
            ));
        }
        Ok(Some(text)) => match toml::from_str(&text) {
            Ok(file) => file,
            Err(e) => {
                let first = e.message().lines().next().unwrap_or_default().to_owned();
                return off(format!(
                    "{at} is not valid for Herdr ({}), so it uses its defaults: notifications off; `herdr config check` says more",
                    shown(&first)
                ));
            }
        },
    };
    let toast = file.ui.toast;
    let delivery = toast.as_ref().and_then(|t| {
        t.delivery.or(t
            .enabled
            .map(|on| if on { Delivery::Herdr } else { Delivery::Off }))
    });
    let shown_as = match delivery {
        Some(Delivery::Herdr) => "Herdr's own toast",
        Some(Delivery::Terminal) => "the terminal's notification",
        Some(Delivery::System) => "the desktop's notification",
        Some(Delivery::Off) | None => {
            let how = if toast.is_some() {
                format!("set `{TURN_ON}` under `[ui.toast]` in {at}")
            } else {
                format!("add the lines `[ui.toast]` and `{TURN_ON}` to {at}")
            };
            let why = if delivery.is_some() {
                "off (`[ui.toast] delivery = \"off\"`)"
            } else {
                "off (Herdr's default)"
            };
            return off(format!(
                "{why}, so herd's notices show only in Pi; to turn them on, {how}, then run {RELOAD}"
            ));
        }
    };
    Check {
        name: NAME.into(),
        ok: true,
        needed: false,
        detail: format!("on: Herdr shows herd's notices as {shown_as} ({at})"),
    }
}

/// Reads Herdr's configuration file: its text, `None` when there is none.
pub fn read(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(text: Option<&str>) -> (bool, String) {
        let c = check(
            Path::new("/home/you/.config/herdr/config.toml"),
            Ok(text.map(str::to_owned)),
        );
        assert!(!c.needed);
        (c.ok, c.detail)
    }

    #[test]
    fn herdrs_file_is_found_where_herdr_looks() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            config_path(env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")])),
            Path::new("/x/herdr/config.toml")
        );
        assert_eq!(
            config_path(env(&[("HOME", "/h")])),
            Path::new("/h/.config/herdr/config.toml")
        );
        assert_eq!(
            config_path(env(&[("HOME", "/h"), ("HERDR_CONFIG_PATH", "/c.toml")])),
            Path::new("/c.toml")
        );
    }

    #[test]
    fn toasts_off_are_said_with_the_line_that_turns_them_on() {
        let at = "/home/you/.config/herdr/config.toml";
        assert_eq!(
            detail(None),
            (
                false,
                format!(
                    "off (Herdr's default), so herd's notices show only in Pi; to turn them on, create {at} with the lines `[ui.toast]` and `delivery = \"herdr\"`, then run `herdr server reload-config`"
                )
            )
        );
        assert_eq!(
            detail(Some("[ui]\nmouse_scroll_lines = 3\n")),
            (
                false,
                format!(
                    "off (Herdr's default), so herd's notices show only in Pi; to turn them on, add the lines `[ui.toast]` and `delivery = \"herdr\"` to {at}, then run `herdr server reload-config`"
                )
            )
        );
        let (ok, said) = detail(Some("[ui.toast]\ndelivery = \"off\"\n"));
        assert!(!ok);
        assert!(
            said.starts_with("off (`[ui.toast] delivery = \"off\"`)")
                && said.contains("set `delivery = \"herdr\"` under `[ui.toast]` in"),
            "{said}"
        );
        let (ok, said) = detail(Some("[ui.toast]\ndelivery = \"loud\"\n"));
        assert!(!ok && said.contains("is not valid for Herdr"), "{said}");
    }

    #[test]
    fn toasts_on_are_said_with_how_herdr_shows_them() {
        for (text, how) in [
            ("[ui.toast]\ndelivery = \"herdr\"\n", "Herdr's own toast"),
            ("[ui.toast]\nenabled = true\n", "Herdr's own toast"),
            (
                "[ui.toast]\nenabled = false\ndelivery = \"system\"\n",
                "the desktop's notification",
            ),
            (
                "[ui]\ntoast = { delivery = \"terminal\" }\n",
                "the terminal's notification",
            ),
        ] {
            let (ok, said) = detail(Some(text));
            assert!(ok, "{text}: {said}");
            assert!(said.contains(how), "{text}: {said}");
        }
    }
}
