//! Telling the person at the parent that something happened, on the surface the parent runs in:
//! Herdr's `notification show`, tmux's message on the parent's client with the bell, and a
//! terminal's own desktop notification (OSC 777 or OSC 9) where the terminal is known to have
//! one. And whether the person looks at a child's pane right now, when telling is moot.
//!
//! The parent's surface is its environment's (`HERDR_ENV`/`HERDR_SOCKET_PATH`/`HERDR_PANE_ID`,
//! `TMUX`/`TMUX_PANE`, `TERM_PROGRAM`); a caller passes the parent's own environment.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::{Env, Error, Target};

/// What to show: a short title, a line of body, and whether it asks for the person (a sound of
/// its own where the surface has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub request: bool,
}

impl Notification<'_> {
    /// The one line a status line shows: `title: body`.
    pub fn line(&self) -> String {
        if self.body.is_empty() {
            self.title.to_owned()
        } else {
            format!("{}: {}", self.title, self.body)
        }
    }
}

/// What one way of telling did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    /// `herdr`, `tmux`, `osc`.
    pub via: &'static str,
    pub shown: bool,
    /// What the surface said: Herdr's reason, the tmux clients told, why nothing was shown.
    pub detail: String,
}

/// A terminal's own desktop notification, when the terminal is known to have one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Osc {
    /// `ESC ] 777 ; notify ; title ; body BEL`: urxvt's, also foot, WezTerm, Ghostty.
    Notify777,
    /// `ESC ] 9 ; text BEL`: iTerm2's, also Windows Terminal, ConEmu.
    Growl9,
}

/// The desktop notification the parent's terminal has: `TERM_PROGRAM` (or `LC_TERMINAL`, which
/// iTerm2 sets through ssh), `WT_SESSION`, `TERM`. Unknown terminals get none: an escape a
/// terminal does not know can show as garbage.
pub fn osc_of(env: Env<'_>) -> Option<Osc> {
    let program = env("TERM_PROGRAM")
        .or_else(|| env("LC_TERMINAL"))
        .unwrap_or_default()
        .to_ascii_lowercase();
    let term = env("TERM").unwrap_or_default();
    if program.contains("iterm") || env("WT_SESSION").is_some_and(|s| !s.is_empty()) {
        return Some(Osc::Growl9);
    }
    if program.contains("wezterm")
        || program.contains("ghostty")
        || term.starts_with("foot")
        || term.starts_with("rxvt-unicode")
    {
        return Some(Osc::Notify777);
    }
    None
}

/// The escape of `osc` for `n`, its texts without controls or the separator, wrapped in tmux's
/// passthrough when it goes through a tmux client (`allow-passthrough` lets it out).
pub fn osc_bytes(osc: Osc, n: &Notification<'_>, through_tmux: bool) -> Vec<u8> {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_control() && *c != ';')
            .take(200)
            .collect()
    };
    let inner = match osc {
        Osc::Notify777 => format!("\x1b]777;notify;{};{}\x07", clean(n.title), clean(n.body)),
        Osc::Growl9 => format!("\x1b]9;{}\x07", clean(&n.line())),
    };
    if through_tmux {
        format!("\x1bPtmux;{}\x1b\\", inner.replace('\x1b', "\x1b\x1b")).into_bytes()
    } else {
        inner.into_bytes()
    }
}

/// Writes `bytes` to the terminal `tty` without making it this process's controlling terminal
/// and without waiting on it.
pub(crate) fn write_tty(tty: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(tty)?;
    file.write_all(bytes)
}

/// Tells the person at the parent on every surface the parent's environment `env` names: its
/// Herdr, else its tmux client (a message, the bell, the terminal's notification), else its own
/// terminal's notification. Each way's answer is returned; none failing stops another.
pub fn tell(env: Env<'_>, n: &Notification<'_>, deadline: Instant) -> Vec<Told> {
    let mut told = Vec::new();
    let osc = osc_of(env);
    if env("HERDR_ENV").as_deref() == Some("1") {
        let herdr = crate::herdr::Herdr::from_env(env);
        told.push(match herdr.notify(n, deadline) {
            Ok((shown, reason)) => Told {
                via: "herdr",
                shown,
                detail: reason,
            },
            Err(e) => Told {
                via: "herdr",
                shown: false,
                detail: e.to_string(),
            },
        });
        // Herdr delivers to the terminal itself (its `ui.toast.delivery`).
        return told;
    }
    if env("TMUX").is_some_and(|t| !t.is_empty()) {
        let shown = crate::tmux::Tmux::from_env(env)
            .map_err(|e| Error::Unavailable {
                surface: "tmux",
                reason: e.message,
            })
            .and_then(|tmux| tmux.notify(env("TMUX_PANE").as_deref(), n, osc, deadline));
        told.push(match shown {
            Ok(clients) if clients.is_empty() => Told {
                via: "tmux",
                shown: false,
                detail: "no client is attached to the parent's session".into(),
            },
            Ok(clients) => Told {
                via: "tmux",
                shown: true,
                detail: clients.join(" "),
            },
            Err(e) => Told {
                via: "tmux",
                shown: false,
                detail: e.to_string(),
            },
        });
        return told;
    }
    if let Some(osc) = osc {
        let written = write_tty(Path::new("/dev/tty"), &osc_bytes(osc, n, false));
        told.push(Told {
            via: "osc",
            shown: written.is_ok(),
            detail: written.err().map(|e| e.to_string()).unwrap_or_default(),
        });
    }
    told
}

/// Herdr's answers that mean "not now": it shows one notice at a time (`busy`, for as long as
/// the one on screen stays, its own included) and one a second (`rate_limited`).
const HERDR_NOT_NOW: [&str; 2] = ["busy", "rate_limited"];

/// The first pause before asking Herdr again, doubled each time up to [`RETRY_STEP_MAX`].
const RETRY_STEP: Duration = Duration::from_millis(100);
const RETRY_STEP_MAX: Duration = Duration::from_millis(500);

/// Asks (`ask`, Herdr's `(shown, reason)`) until Herdr shows the notice or answers something
/// other than "not now", pausing a little longer each time; the last answer when the next
/// pause would pass `deadline`. An error ends the asking.
pub(crate) fn until_not_busy<E>(
    deadline: Instant,
    mut ask: impl FnMut() -> Result<(bool, String), E>,
) -> Result<(bool, String), E> {
    let mut step = RETRY_STEP;
    loop {
        let (shown, reason) = ask()?;
        if shown || !HERDR_NOT_NOW.contains(&reason.as_str()) || Instant::now() + step >= deadline {
            return Ok((shown, reason));
        }
        std::thread::sleep(step);
        step = (step * 2).min(RETRY_STEP_MAX);
    }
}

/// Whether a person looks at `target` now: the pane is the active one of the window a client
/// shows (tmux), the focused pane of the focused workspace (Herdr). A process child has no pane
/// to look at; an unanswered question is not looking.
pub fn looking_at(surface: &dyn crate::Surface, target: &Target, deadline: Instant) -> bool {
    let Target::Pane(pane) = target else {
        return false;
    };
    let _ = deadline;
    match surface.kind() {
        herd_protocol::run::SurfaceKind::Tmux => match pane.socket.as_deref() {
            Some(socket) => crate::tmux::find_program().is_ok_and(|program| {
                crate::tmux::Tmux::with_socket(program, socket.into(), None)
                    .looking_at(&pane.pane_id, deadline)
            }),
            None => false,
        },
        herd_protocol::run::SurfaceKind::Herdr => {
            crate::herdr::Herdr::for_pane(pane).is_ok_and(|h| h.looking_at(&pane.pane_id))
        }
        herd_protocol::run::SurfaceKind::Process => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_known_terminal_gets_its_escape_and_tmux_passes_it_through() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(
            osc_of(&env(&[("TERM_PROGRAM", "iTerm.app")])),
            Some(Osc::Growl9)
        );
        assert_eq!(
            osc_of(&env(&[("TERM_PROGRAM", "WezTerm")])),
            Some(Osc::Notify777)
        );
        assert_eq!(osc_of(&env(&[("TERM", "foot")])), Some(Osc::Notify777));
        assert_eq!(osc_of(&env(&[("TERM", "xterm-256color")])), None);
        let n = Notification {
            title: "herd",
            body: "\"Scout\" is waiting; for\u{1b} input",
            request: true,
        };
        assert_eq!(
            osc_bytes(Osc::Notify777, &n, false),
            b"\x1b]777;notify;herd;\"Scout\" is waiting for input\x07"
        );
        assert_eq!(
            osc_bytes(Osc::Growl9, &n, true),
            b"\x1bPtmux;\x1b\x1b]9;herd: \"Scout\" is waiting for input\x07\x1b\\"
        );
    }

    /// Answers in the shape of Herdr's `notification_show` result (its API schema).
    const BUSY: &str =
        r#"{"id":"1","result":{"type":"notification_show","shown":false,"reason":"busy"}}"#;
    const SHOWN: &str =
        r#"{"id":"1","result":{"type":"notification_show","shown":true,"reason":"shown"}}"#;
    const DISABLED: &str =
        r#"{"id":"1","result":{"type":"notification_show","shown":false,"reason":"disabled"}}"#;

    fn answer(reply: &str) -> Result<(bool, String), String> {
        let v: serde_json::Value = serde_json::from_str(reply).map_err(|e| e.to_string())?;
        let r = &v["result"];
        Ok((
            r["shown"].as_bool().ok_or("no shown")?,
            r["reason"].as_str().unwrap_or_default().to_owned(),
        ))
    }

    #[test]
    fn a_busy_herdr_is_asked_again_until_it_shows_the_notice_or_the_deadline_passes() {
        // Busy twice (its own notice on screen), then shown: asked three times.
        let mut replies = [BUSY, BUSY, SHOWN].into_iter();
        let mut asked = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        let got = until_not_busy(deadline, || {
            asked += 1;
            answer(replies.next().unwrap())
        });
        assert_eq!(got, Ok((true, "shown".to_owned())));
        assert_eq!(asked, 3);
        // Turned off: said at once, never asked again.
        let mut asked = 0;
        let got = until_not_busy(deadline, || {
            asked += 1;
            answer(DISABLED)
        });
        assert_eq!(got, Ok((false, "disabled".to_owned())));
        assert_eq!(asked, 1);
        // Busy throughout: the last answer by the deadline, not later.
        let start = Instant::now();
        let got = until_not_busy(start + Duration::from_millis(700), || answer(BUSY));
        assert_eq!(got, Ok((false, "busy".to_owned())));
        assert!(
            start.elapsed() < Duration::from_millis(700),
            "{:?}",
            start.elapsed()
        );
    }
}
