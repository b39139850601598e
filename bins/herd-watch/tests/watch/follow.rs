//! `follow`: acknowledged results, results emitted again when never acknowledged, and a
//! follower's own runs.

use std::time::{Duration, Instant};

use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::watch::WatchEvent;

use crate::support::{Env, result_events, watch_bin};

/// `follow --ack` with its stdin and stdout piped, as a Pi parent runs it.
struct AckedFollow {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<WatchEvent>,
}

impl AckedFollow {
    fn start(env: &Env) -> AckedFollow {
        use std::io::BufRead;
        #[expect(
            clippy::disallowed_methods,
            reason = "the test talks to the follower over its pipes, which the bounded runner does not offer"
        )]
        let mut child = std::process::Command::new(watch_bin())
            .arg("--artifacts")
            .arg(env.art())
            .args(["follow", "--json", "--ack"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(event) = serde_json::from_str::<WatchEvent>(&line) {
                    if tx.send(event).is_err() {
                        return;
                    }
                }
            }
        });
        AckedFollow { child, lines }
    }

    /// The next `result` line: its run id and the key it is acknowledged by.
    fn next_result(&self) -> (String, String) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .expect("a result line in time");
            if let WatchEvent::Result { run_id, key, .. } = line {
                return (run_id, key);
            }
        }
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn wait_exit(&mut self) -> std::process::ExitStatus {
        wait_for("the follower to exit", Duration::from_secs(30), || {
            self.child.try_wait().unwrap()
        })
    }
}

impl Drop for AckedFollow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_acknowledged_follow_marks_a_result_delivered_only_when_its_key_comes_back() {
    let env = Env::new();
    let id = env.spawn("Acked", "echo the report");
    let marker = env.art().join("runs").join(format!("{id}.delivered"));
    let mut follow = AckedFollow::start(&env);
    let (run_id, key) = follow.next_result();
    assert_eq!((run_id.as_str(), key.as_str()), (id.as_str(), id.as_str()));
    assert!(!marker.exists(), "emitted is not delivered before the ack");
    // What is not an acknowledgement of a settled result changes nothing.
    follow.send("not json");
    follow.send(r#"{"ack":"../escape"}"#);
    follow.send(r#"{"ack":"ffffffff"}"#);
    follow.send(&format!(r#"{{"ack":"{id}"}}"#));
    wait_for("the delivered marker", Duration::from_secs(30), || {
        marker.exists().then_some(())
    });
    // Nothing is left to deliver or acknowledge: it ends by itself.
    assert!(follow.wait_exit().success());
    let (code, _, out) = env.watch(&["follow", "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(result_events(&out, &id), 0, "delivered once: {out}");
}

#[test]
fn a_result_never_acknowledged_is_emitted_again_by_the_next_follower() {
    let env = Env::new();
    let id = env.spawn("Dropped", "echo the report");
    let marker = env.art().join("runs").join(format!("{id}.delivered"));
    let mut follow = AckedFollow::start(&env);
    assert_eq!(follow.next_result().0, id);
    // The consumer goes away without acknowledging: the follower stops, the result waits.
    drop(follow.child.stdin.take());
    assert!(follow.wait_exit().success());
    assert!(
        !marker.exists(),
        "an unacknowledged result stays undelivered"
    );
    let mut again = AckedFollow::start(&env);
    assert_eq!(again.next_result().0, id, "emitted again");
    again.send(&format!(r#"{{"ack":"{id}"}}"#));
    assert!(again.wait_exit().success());
    assert!(marker.exists());
}

#[test]
fn a_follower_takes_on_only_the_runs_its_launcher_launched() {
    let env = Env::new();
    let top = env.spawn("Top", "echo top report");
    // A child's own child: herd-launch records the launching child from `PI_SUBAGENT_ID`.
    let out = env.launch(
        &serde_json::json!({"name": "Own", "task": "the task"}),
        &["--runner", "exec", "--", "sh", "-c", "echo own report"],
        &[("PI_SUBAGENT_ID", "abc123")],
    );
    let ack: LaunchAck = serde_json::from_str(&out.stdout).unwrap();
    let own = ack.run_id;
    assert_eq!(
        env.run_record(&own).parent_run_id.as_deref(),
        Some("abc123")
    );

    let (code, _, parent) = env.watch(&["follow", "--json", "--top-level"]);
    assert_eq!(code, 0, "{parent}");
    assert_eq!(result_events(&parent, &top), 1, "{parent}");
    assert_eq!(result_events(&parent, &own), 0, "{parent}");
    let (code, _, child) = env.watch(&["follow", "--json", "--launched-by", "abc123"]);
    assert_eq!(code, 0, "{child}");
    assert_eq!(result_events(&child, &own), 1, "{child}");
    assert_eq!(result_events(&child, &top), 0, "{child}");
}
