//! The scripted model speaks enough HTTP and OpenAI streaming for Pi, picks steps by model and
//! by assistant-message count, logs every request, and bounds what it reads.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use herd_e2e::model::{
    self, Fail, MAX_BODY, ModelServer, Models, Script, Stall, Text, ToolCall, request,
};
use herd_e2e::proc;
use serde_json::{Value, json};

/// A reply as the client saw it.
struct Reply {
    status: u16,
    head: String,
    body: String,
}

fn send(port: u16, raw: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server listens");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a read timeout");
    stream.write_all(raw).expect("the request is sent");
    let mut bytes = Vec::new();
    stream
        .read_to_end(&mut bytes)
        .expect("the reply ends with the connection");
    let text = String::from_utf8(bytes).expect("replies are UTF-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("a reply head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    Reply {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

fn post(port: u16, body: &Value) -> Reply {
    let body = body.to_string();
    let raw = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    send(port, raw.as_bytes())
}

/// A request as Pi sends it, with `assistants` assistant turns already in the conversation.
fn chat(model: &str, assistants: usize) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "be brief"}),
        json!({"role": "user", "content": [{"type": "text", "text": "go"}]}),
    ];
    for n in 0..assistants {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{n}_0"), "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("call_{n}_0"), "content": "(no output)"}));
    }
    json!({"model": model, "stream": true, "messages": messages, "tools": [{"type": "function", "function": {"name": "bash"}}]})
}

/// The chunks of an event stream, checking it ends with `[DONE]`.
fn events(body: &str) -> Vec<Value> {
    let records: Vec<&str> = body.split("\n\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(records.last(), Some(&"data: [DONE]"), "{body}");
    records[..records.len() - 1]
        .iter()
        .map(|r| {
            serde_json::from_str(r.strip_prefix("data: ").expect("data records"))
                .expect("JSON chunks")
        })
        .collect()
}

fn joined_text(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect()
}

fn finish_reasons(chunks: &[Value]) -> Vec<String> {
    chunks
        .iter()
        .filter_map(|c| c["choices"][0]["finish_reason"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn steps_follow_the_number_of_assistant_messages() {
    let server = ModelServer::start(
        Script::new()
            .step(ToolCall::bash("echo héllo > out.txt"))
            .step(Text("DONE: wrote out.txt, ünïcode ok")),
    );
    let first = post(server.port(), &chat("fake-model", 0));
    assert_eq!(first.status, 200, "{}", first.head);
    assert!(first.head.contains("text/event-stream"), "{}", first.head);
    let chunks = events(&first.body);
    assert_eq!(finish_reasons(&chunks), ["tool_calls"]);
    let pieces: Vec<&Value> = chunks
        .iter()
        .flat_map(|c| {
            c["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .collect();
    assert_eq!(pieces[0]["id"], "call_0_0");
    assert_eq!(pieces[0]["function"]["name"], "bash");
    let arguments: String = pieces
        .iter()
        .filter_map(|p| p["function"]["arguments"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"command": "echo héllo > out.txt"})
    );
    assert!(
        chunks
            .iter()
            .any(|c| c["usage"]["total_tokens"].is_number()),
        "a usage record"
    );

    // The same conversation asked twice gets the same answer: retries are harmless.
    for _ in 0..2 {
        let second = post(server.port(), &chat("fake-model", 1));
        let chunks = events(&second.body);
        assert_eq!(joined_text(&chunks), "DONE: wrote out.txt, ünïcode ok");
        assert_eq!(finish_reasons(&chunks), ["stop"]);
    }

    let exhausted = post(server.port(), &chat("fake-model", 2));
    assert_eq!(exhausted.status, 400);
    let error: Value = serde_json::from_str(&exhausted.body).unwrap();
    assert_eq!(
        error["error"]["message"],
        "the script of model fake-model has 2 steps and the request has 2 assistant messages"
    );

    let log = server.requests();
    assert_eq!(log.len(), 4);
    assert_eq!(
        log.iter().map(request::assistant_count).collect::<Vec<_>>(),
        [0, 1, 1, 2]
    );
    assert_eq!(request::tool_names(&log[0]), ["bash"]);
    assert_eq!(request::user_texts(&log[0]), ["go"]);
    assert_eq!(request::tool_results(&log[1]), ["(no output)"]);
    assert_eq!(request::system_prompt(&log[0]), "be brief");
}

#[test]
fn each_model_answers_with_its_own_script() {
    let server = ModelServer::start_models(
        Models::new()
            .model("model-a", Script::new().step(Fail(500, "model a is down")))
            .model("model-b", Script::new().step(Text("B answered"))),
    );
    assert_eq!(server.default_model(), "model-a");
    let a = post(server.port(), &chat("model-a", 0));
    assert_eq!(a.status, 500);
    let error: Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(error["error"]["message"], "model a is down");
    let b = post(server.port(), &chat("model-b", 0));
    assert_eq!(joined_text(&events(&b.body)), "B answered");
    let unknown = post(server.port(), &chat("model-c", 0));
    assert_eq!(unknown.status, 404);
    assert!(
        unknown.body.contains("model model-c is not scripted"),
        "{}",
        unknown.body
    );
    assert_eq!(server.requests_for("model-b").len(), 1);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn oversized_and_malformed_requests_are_refused_without_reading_them() {
    let server = ModelServer::start(Script::new().step(Text("unused")));
    let big = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        MAX_BODY + 1
    );
    assert_eq!(send(server.port(), big.as_bytes()).status, 413);
    let mut head = b"POST /v1/chat/completions HTTP/1.1\r\nX-Filler: ".to_vec();
    head.resize(model::MAX_HEAD + 100, b'x');
    assert_eq!(send(server.port(), &head).status, 431);
    assert_eq!(
        send(server.port(), b"GET /v1/models HTTP/1.1\r\n\r\n").status,
        404
    );
    assert_eq!(
        send(server.port(), b"GET /v1/chat/completions HTTP/1.1\r\n\r\n").status,
        405
    );
    let not_json = send(
        server.port(),
        b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
    );
    assert_eq!(not_json.status, 400);
    assert_eq!(server.requests(), [json!({"unparsed": "hello"})]);
}

#[test]
fn chunked_request_bodies_are_decoded() {
    let server = ModelServer::start(Script::new().step(Text("chunked ok")));
    let body = chat("fake-model", 0).to_string();
    let (a, b) = body.split_at(body.len() / 2);
    let raw = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    );
    let reply = send(server.port(), raw.as_bytes());
    assert_eq!(joined_text(&events(&reply.body)), "chunked ok");
    assert_eq!(server.requests()[0]["model"], "fake-model");
}

#[test]
fn a_stalled_answer_ends_when_the_server_stops() {
    let server = ModelServer::start(Script::new().step(Stall(Duration::from_secs(300))));
    let port = server.port();
    let client = std::thread::spawn(move || post(port, &chat("fake-model", 0)));
    server.wait_for_requests(1, Duration::from_secs(20));
    drop(server);
    let reply = client.join().expect("the client thread ends");
    assert_eq!(reply.status, 200);
    assert!(reply.body.contains("working"), "{}", reply.body);
    assert!(
        !reply.body.contains("[DONE]"),
        "a stalled answer never completes: {}",
        reply.body
    );
}

#[test]
fn the_fake_model_binary_serves_a_script_file_and_logs_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    model::write_models(
        &script,
        &Models::new().model("m", Script::new().step(Text("from the binary"))),
    )
    .unwrap();
    let port_file = dir.path().join("port");
    let log = dir.path().join("requests.jsonl");

    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the helper binary in the background and signals it"
    )]
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fake-model"))
        .args([
            "--script".as_ref(),
            script.as_os_str(),
            "--port".as_ref(),
            "0".as_ref(),
            "--port-file".as_ref(),
            port_file.as_os_str(),
        ])
        .args([
            "--log".as_ref(),
            log.as_os_str(),
            "--max-seconds".as_ref(),
            "60".as_ref(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fake-model starts");
    let port: u16 = herd_e2e::wait::wait_for("the port file", Duration::from_secs(20), || {
        std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
    });
    let reply = post(port, &chat("m", 0));
    assert_eq!(joined_text(&events(&reply.body)), "from the binary");

    proc::signal_pid(child.id(), libc::SIGTERM);
    let status = herd_e2e::wait::wait_for("fake-model to exit", Duration::from_secs(20), || {
        child.try_wait().ok().flatten()
    });
    assert!(status.success(), "{status}");
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(stdout, format!("PORT {port}\n"));
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, [chat("m", 0)]);
}

#[test]
fn a_bad_script_file_is_a_usage_error_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"[{"text": "ok"}, {"tool_calls": []}]"#).unwrap();
    #[expect(clippy::disallowed_methods, reason = "the test runs the helper binary")]
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_fake-model"));
    cmd.arg("--script").arg(&script);
    let out = proc::run(cmd, Duration::from_secs(20));
    assert_eq!(out.code(), Some(2), "{out}");
    assert!(
        out.stderr
            .contains("invalid script at script[1].tool_calls: expected at least one call"),
        "{out}"
    );
}
