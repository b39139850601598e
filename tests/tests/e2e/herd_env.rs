//! The caller's environment is bytes: a variable that is not UTF-8 never stops a launch, and
//! one of herd's own reaches a child in a pane as it was.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use herd_e2e::herd::{Herd, Where};
use herd_e2e::model::{ModelServer, Script, Text};
use herd_e2e::pi::PiEnv;
use herd_protocol::launch::LaunchAck;
use serde_json::json;

#[test]
fn a_variable_that_is_not_utf8_is_passed_to_a_tmux_child_as_its_bytes() {
    let model = ModelServer::start(Script::new().step(Text("unused")));
    let env = PiEnv::new(&model);
    let mut herd = Herd::new(&env, Where::Tmux);
    herd.set_var("HERD_ODD", OsString::from_vec(b"caf\xe9 \xff".to_vec()));
    herd.set_var("ODD_OTHER", OsString::from_vec(b"\xfe".to_vec()));
    let request = env.root().join("odd-request.json");
    std::fs::write(&request, json!({"name": "Odd", "task": "env"}).to_string())
        .expect("the request is written");
    let out = herd.run(
        "herd-launch",
        [
            OsString::from("spawn"),
            "--request".into(),
            request.into(),
            "--surface".into(),
            "tmux".into(),
            "--runner".into(),
            "exec".into(),
            "--json".into(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            "printf %s \"$HERD_ODD\" | od -An -tx1 > odd.txt".into(),
        ],
    );
    assert!(out.success(), "{out}");
    let run = out.doc::<LaunchAck>().run_id;
    let (code, result) = herd.wait_result(&run);
    assert_eq!(code, 0, "{result:#?}");
    let bytes = std::fs::read_to_string(env.work_dir().join("odd.txt")).expect("odd.txt");
    assert_eq!(
        bytes.split_whitespace().collect::<Vec<_>>(),
        ["63", "61", "66", "e9", "20", "ff"],
        "{bytes}"
    );
}
