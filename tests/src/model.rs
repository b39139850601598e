//! A scripted model on 127.0.0.1 that speaks the OpenAI chat-completions streaming protocol,
//! so the real Pi CLI can run against it with no network.
//!
//! ```no_run
//! use herd_e2e::model::{ModelServer, Script, Text, ToolCall};
//! let model = ModelServer::start(Script::new().step(ToolCall::bash("echo hi > out.txt")).step(Text("DONE")));
//! assert_eq!(model.requests().len(), 0);
//! ```
//!
//! Each model id has a [`Script`]; the request's `model` field picks the script, and the number
//! of assistant messages already in the request picks the step. Every request body is kept (and
//! optionally appended to a file as one JSON line) for the tests to assert on.

mod http;
mod script;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use self::http::{MAX_BODY, MAX_HEAD};
pub use self::script::{
    DEFAULT_MODEL, Fail, Models, REPORTED_SESSION, Said, Script, ScriptError, Stall, Step, Text,
    ToolCall, Usage,
};

/// The provider name the server is registered under in Pi's models.json.
pub const PROVIDER: &str = "fake";

/// The most connections served at once; more are refused with 503.
const MAX_CONNECTIONS: usize = 64;

/// How often the accept loop looks at the stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(10);

/// How long a stopping server waits for connections still being answered.
const DRAIN_BUDGET: Duration = Duration::from_secs(5);

/// A running scripted model; dropping it stops the server.
pub struct ModelServer {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

struct Shared {
    models: Models,
    stop: AtomicBool,
    active: AtomicUsize,
    log: Mutex<Vec<Value>>,
    /// When each request of `log` had arrived whole.
    arrivals: Mutex<Vec<Instant>>,
    log_file: Option<Mutex<File>>,
}

impl ModelServer {
    /// Starts a server for one model, [`DEFAULT_MODEL`], answering with `script`.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub fn start(script: Script) -> ModelServer {
        ModelServer::start_models(Models::from(script))
    }

    /// Starts a server for several models, each answering with its own script.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound or no model is given.
    pub fn start_models(models: Models) -> ModelServer {
        ModelServer::spawn(models, 0, None)
            .unwrap_or_else(|err| panic!("cannot start the scripted model: {err}"))
    }

    /// Starts a server on `port` (0: any free port) that also appends every request body to
    /// `log` as one JSON line.
    ///
    /// # Errors
    ///
    /// When the port cannot be bound, the log cannot be opened, or no model is given.
    pub fn spawn(models: Models, port: u16, log: Option<&Path>) -> io::Result<ModelServer> {
        if models.ids().next().is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no model is scripted",
            ));
        }
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let log_file = match log {
            Some(path) => Some(Mutex::new(
                OpenOptions::new().create(true).append(true).open(path)?,
            )),
            None => None,
        };
        let shared = Arc::new(Shared {
            models,
            stop: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
            arrivals: Mutex::new(Vec::new()),
            log_file,
        });
        let accept = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name(format!("fake-model-{port}"))
                .spawn(move || accept_loop(&listener, &shared))?
        };
        Ok(ModelServer {
            port,
            shared,
            accept: Some(accept),
        })
    }

    /// Returns the port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Returns the base URL for Pi's models.json, `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Returns the scripted models.
    pub fn models(&self) -> &Models {
        &self.shared.models
    }

    /// Returns the id of the first (default) model.
    pub fn default_model(&self) -> &str {
        self.shared.models.ids().next().unwrap_or(DEFAULT_MODEL)
    }

    /// Returns every request body received so far, in arrival order (a body that is not JSON
    /// is kept as `{"unparsed": "<text>"}`).
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.log).clone()
    }

    /// Returns when each request of [`ModelServer::requests`] had arrived whole, in the same
    /// order: what a benchmark of the time to a child's first request reads.
    pub fn arrivals(&self) -> Vec<Instant> {
        lock(&self.shared.arrivals).clone()
    }

    /// Returns the request bodies for model `id`.
    pub fn requests_for(&self, id: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|body| body["model"] == id)
            .collect()
    }

    /// Waits until at least `n` requests have arrived and returns them all.
    ///
    /// # Panics
    ///
    /// When they do not arrive within `budget`.
    pub fn wait_for_requests(&self, n: usize, budget: Duration) -> Vec<Value> {
        crate::wait::wait_for(
            &format!("{n} requests to the scripted model"),
            budget,
            || {
                let requests = self.requests();
                (requests.len() >= n).then_some(requests)
            },
        )
    }

    /// Stops accepting, lets answers in progress end (stalls end at once), and waits for them
    /// for a few seconds at most.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        let deadline = Instant::now() + DRAIN_BUDGET;
        while self.shared.active.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            thread::sleep(ACCEPT_POLL);
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a request body says about itself, for assertions.
pub mod request {
    use serde_json::Value;

    /// Returns the number of assistant messages in the request: the step it was answered with.
    pub fn assistant_count(body: &Value) -> usize {
        messages(body).filter(|m| m["role"] == "assistant").count()
    }

    /// Returns the names of the tools offered to the model.
    pub fn tool_names(body: &Value) -> Vec<String> {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// Returns the text of every user message, in order (text parts joined).
    pub fn user_texts(body: &Value) -> Vec<String> {
        messages(body)
            .filter(|m| m["role"] == "user")
            .map(|m| content_text(&m["content"]))
            .collect()
    }

    /// Returns the text of every tool-result message, in order.
    pub fn tool_results(body: &Value) -> Vec<String> {
        messages(body)
            .filter(|m| m["role"] == "tool")
            .map(|m| content_text(&m["content"]))
            .collect()
    }

    /// Returns the system prompt.
    pub fn system_prompt(body: &Value) -> String {
        messages(body)
            .filter(|m| m["role"] == "system" || m["role"] == "developer")
            .map(|m| content_text(&m["content"]))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn messages(body: &Value) -> impl Iterator<Item = &Value> {
        body["messages"].as_array().into_iter().flatten()
    }

    fn content_text(content: &Value) -> String {
        match content {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the log lock cannot leave it half-written: pushes are atomic.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                if shared.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    shared.active.fetch_sub(1, Ordering::SeqCst);
                    let mut stream = stream;
                    let _ = http::write_error(&mut stream, 503, "too many connections");
                    continue;
                }
                let spawned = thread::Builder::new()
                    .name("fake-model-conn".into())
                    .spawn({
                        let shared = Arc::clone(shared);
                        move || {
                            serve(stream, &shared);
                            shared.active.fetch_sub(1, Ordering::SeqCst);
                        }
                    });
                if spawned.is_err() {
                    shared.active.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(_) => thread::sleep(ACCEPT_POLL),
        }
    }
}

fn serve(mut stream: TcpStream, shared: &Shared) {
    if stream.set_nonblocking(false).is_err()
        || stream.set_write_timeout(Some(http::READ_BUDGET)).is_err()
    {
        return;
    }
    match http::read_request(&mut stream) {
        Ok(request) => {
            let _ = answer(&mut stream, shared, &request);
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        Err(rejected) => {
            let _ = http::write_error(&mut stream, rejected.status, &rejected.message);
            // Closing with unread input would reset the connection and could lose the reply,
            // so the rest of the request is read (a bounded amount) and dropped first.
            let _ = stream.shutdown(std::net::Shutdown::Write);
            http::discard_input(&mut stream);
        }
    }
}

fn answer(stream: &mut TcpStream, shared: &Shared, request: &http::Request) -> io::Result<()> {
    if !request.path.ends_with("/chat/completions") {
        return http::write_error(stream, 404, &format!("no such endpoint {}", request.path));
    }
    if request.method != "POST" {
        return http::write_error(stream, 405, "chat completions take POST");
    }
    let body = serde_json::from_slice::<Value>(&request.body)
        .unwrap_or_else(|_| json!({ "unparsed": String::from_utf8_lossy(&request.body) }));
    record(shared, &body);
    let Some(model) = body["model"].as_str() else {
        return http::write_error(stream, 400, "the request names no model");
    };
    let Some(script) = shared.models.script(model) else {
        return http::write_error(stream, 404, &format!("model {model} is not scripted"));
    };
    let idx = request::assistant_count(&body);
    let Some(step) = script.steps().get(idx) else {
        // 400 and not 500: a client error is never retried, so an exhausted script fails fast.
        let message = format!(
            "the script of model {model} has {} steps and the request has {idx} assistant messages",
            script.steps().len()
        );
        return http::write_error(stream, 400, &message);
    };
    let id = format!("chatcmpl-{model}-{idx}");
    let usage = shared.models.usage(model).to_json();
    match step {
        Step::Error { status, message } => http::write_error(stream, *status, message),
        Step::Text(text) => {
            let mut events = http::EventStream::start(stream, id, model)?;
            events.text(text)?;
            events.finish_with(&usage)
        }
        Step::ToolCalls(calls) => {
            let calls: Vec<ToolCall> = calls.iter().map(|c| c.resolved(&body)).collect();
            let mut events = http::EventStream::start(stream, id, model)?;
            events.tool_calls(idx, &calls)?;
            events.finish_with(&usage)
        }
        Step::TextAndCalls(text, calls) => {
            let calls: Vec<ToolCall> = calls.iter().map(|c| c.resolved(&body)).collect();
            let mut events = http::EventStream::start(stream, id, model)?;
            events.text_then_tool_calls(idx, text, &calls)?;
            events.finish_with(&usage)
        }
        Step::Stall(duration) => {
            let mut events = http::EventStream::start(stream, id, model)?;
            events.text_piece("working")?;
            let end = Instant::now() + *duration;
            while Instant::now() < end && !shared.stop.load(Ordering::SeqCst) {
                thread::sleep(ACCEPT_POLL);
            }
            // Dropping the connection mid-stream: the turn fails if nobody acted on it first.
            Ok(())
        }
    }
}

fn record(shared: &Shared, body: &Value) {
    let arrived = Instant::now();
    let mut log = lock(&shared.log);
    log.push(body.clone());
    lock(&shared.arrivals).push(arrived);
    drop(log);
    if let Some(file) = &shared.log_file {
        let mut line = body.to_string();
        line.push('\n');
        // The log is evidence for a test; a failed append shows up as a missing line there.
        let _ = lock(file).write_all(line.as_bytes());
    }
}

/// Reads a models script file (see [`Models::from_json`]).
///
/// # Errors
///
/// When the file cannot be read, is larger than 16 MiB, or is not a valid script.
pub fn read_models(path: &Path) -> Result<Models, String> {
    let meta =
        std::fs::metadata(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    if meta.len() > 16 * 1024 * 1024 {
        return Err(format!("{} is larger than 16 MiB", path.display()));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|err| format!("{} is not JSON: {err}", path.display()))?;
    Models::from_json(&value).map_err(|err| format!("{}: {err}", path.display()))
}

/// Writes `models` as a script file that [`read_models`] (and the `fake-model` binary) reads.
///
/// # Errors
///
/// When the file cannot be written.
pub fn write_models(path: &Path, models: &Models) -> io::Result<()> {
    std::fs::write(
        path,
        serde_json::to_vec_pretty(&models.to_json()).map_err(io::Error::other)?,
    )
}
