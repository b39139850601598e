//! What the surface tests share: the patience of every wait and the launch scripts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_surface::Surface;

/// How long a test waits for a surface, a server or a child before it fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The deadline of one surface call made now.
pub fn soon() -> Instant {
    Instant::now() + PATIENCE
}

/// Writes the launch script `<dir>/<name>.sh`: the surface's prologue, then `body`.
///
/// # Panics
///
/// When the script cannot be written.
pub fn script(dir: &Path, name: &str, surface: &dyn Surface, body: &str) -> PathBuf {
    // The name is the child's, any text: the file takes only its letters and digits.
    let file: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let path = dir.join(format!("{file}.sh"));
    let mut text = String::from("#!/bin/sh\n");
    for line in surface.script_prologue(name) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(body);
    text.push('\n');
    std::fs::write(&path, text).expect("the launch script is written");
    path
}
