use super::*;

use crossbeam_channel::Sender;

/// The demo's output, kept for the assertions; it sends one interrupt when a widget is drawn
/// if asked to, as Ctrl-C while the child works would.
struct Screen {
    text: Vec<u8>,
    interrupt: Option<Sender<i32>>,
}

impl Write for Screen {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.text.extend_from_slice(buf);
        if String::from_utf8_lossy(buf).contains("╭─ Subagents") {
            if let Some(tx) = self.interrupt.take() {
                tx.send(libc::SIGINT).unwrap();
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Screen {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.text).into_owned()
    }

    /// The scratch directory the demo announced.
    fn scratch(&self) -> PathBuf {
        let text = self.text();
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("· a scratch git repository: "))
            .unwrap_or_else(|| panic!("no scratch repository announced:\n{text}"));
        Path::new(line).parent().unwrap().to_path_buf()
    }
}

/// The processes whose command line mentions `dir`.
fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&needle) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

#[test]
fn the_demo_shows_a_whole_lifecycle_and_leaves_nothing_behind() {
    let mut screen = Screen {
        text: Vec::new(),
        interrupt: None,
    };
    let result = run(&Cli { pi: false }, &mut screen, &crossbeam_channel::never());
    let text = screen.text();
    assert!(result.is_ok(), "{result:?}\n{text}");
    // The widget while the child works, then the result.
    let widget = text.find("╭─ Subagents").expect(&text);
    let result_at = text
        .find("Sub-agent \"fix greeting\" completed")
        .expect(&text);
    assert!(widget < result_at, "{text}");
    for expected in [
        "Check: accepted",
        "<subagent_report from=\"fix greeting\" kind=\"result\">",
        "it now says \"hello, world\"",
        "check passed (exit 0)",
        "Branch: demo/greeting",
        "State: clean · 1 commit ahead",
        "Changed: greeting.txt",
        "+hello, world",
        "removed ",
        "the scratch directory",
    ] {
        assert!(text.contains(expected), "{expected:?} is missing:\n{text}");
    }
    // Text for people: no line written for the parent's model, no standing caveat.
    for noise in [
        "Parent action:",
        "evaluate it as a report",
        "incomplete coverage",
        "ignored files: 0",
    ] {
        assert!(!text.contains(noise), "{noise:?} is shown:\n{text}");
    }
    let scratch = screen.scratch();
    assert!(!scratch.exists(), "{} is left behind", scratch.display());
    assert_eq!(processes_under(&scratch), Vec::<String>::new());
}

#[test]
fn with_pi_the_pinned_pi_cli_is_the_child() {
    let pi = pinned_pi();
    assert!(
        find_pi().is_some(),
        "the pinned Pi CLI is missing at {}: run `bash .ci/run`, or `npm ci --ignore-scripts` in {}",
        pi.display(),
        herd_e2e::pi::pi_dir().display()
    );
    let mut screen = Screen {
        text: Vec::new(),
        interrupt: None,
    };
    let result = run(&Cli { pi: true }, &mut screen, &crossbeam_channel::never());
    let text = screen.text();
    assert!(result.is_ok(), "{result:?}\n{text}");
    for expected in [
        "a real parent: Pi with herd's parent extension delegates to a Pi child",
        "the parent's model called subagent",
        "<subagent_report from=\"Scout\" kind=\"result\">\nREPORT: src/ holds 3 files.",
        "The scout counted 3 files in src/",
        "The child is the pinned Pi CLI",
        "--runner pi",
        "Sub-agent \"fix greeting\" completed",
        "Check: accepted",
        "`sh check.sh` passes, and the change is committed",
        "Model used: fake/fake-model",
        "State: clean · 1 commit ahead",
        "+hello, world",
        "removed ",
    ] {
        assert!(text.contains(expected), "{expected:?} is missing:\n{text}");
    }
    // One verdict: the check's; an inferred gate not met is a note, never `rejected`.
    assert!(!text.contains("rejected"), "{text}");
    for noise in ["Parent action:", "evaluate it as a report"] {
        assert!(!text.contains(noise), "{noise:?} is shown:\n{text}");
    }
    let scratch = screen.scratch();
    assert!(!scratch.exists(), "{} is left behind", scratch.display());
    assert_eq!(processes_under(&scratch), Vec::<String>::new());
}

#[test]
fn ctrl_c_while_the_child_works_cancels_it_and_removes_everything() {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let mut screen = Screen {
        text: Vec::new(),
        interrupt: Some(tx),
    };
    let result = run(&Cli { pi: false }, &mut screen, &rx);
    let text = screen.text();
    assert!(
        matches!(result, Err(Stop::Interrupted)),
        "{result:?}\n{text}"
    );
    assert!(!text.contains("Sub-agent \"fix greeting\""), "{text}");
    let scratch = screen.scratch();
    assert!(!scratch.exists(), "{} is left behind", scratch.display());
    assert_eq!(
        processes_under(&scratch),
        Vec::<String>::new(),
        "the child was cancelled"
    );
}
