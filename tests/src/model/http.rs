//! The little HTTP the scripted model needs: one request per connection, read with size caps
//! and a deadline, and close-delimited replies (JSON errors, or an OpenAI chat-completions
//! event stream).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::script::ToolCall;

/// The largest request head (request line and headers) accepted.
pub const MAX_HEAD: usize = 64 * 1024;

/// The largest request body accepted; Pi sends the whole conversation every turn.
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// The time one request may take to arrive, in total.
pub const READ_BUDGET: Duration = Duration::from_secs(30);

/// A request that was read.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub body: Vec<u8>,
}

/// Why a request was not read; the status to answer with, if the peer can still be answered.
#[derive(Debug)]
pub struct Rejected {
    pub status: u16,
    pub message: String,
}

impl Rejected {
    fn new(status: u16, message: impl Into<String>) -> Rejected {
        Rejected {
            status,
            message: message.into(),
        }
    }
}

impl From<io::Error> for Rejected {
    fn from(err: io::Error) -> Rejected {
        Rejected::new(408, format!("cannot read the request: {err}"))
    }
}

/// Reads one request from `stream` within [`READ_BUDGET`].
pub fn read_request(stream: &mut TcpStream) -> Result<Request, Rejected> {
    let deadline = Instant::now() + READ_BUDGET;
    let mut reader = Bounded { stream, deadline };
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD {
            return Err(Rejected::new(
                431,
                format!("the request head is larger than {MAX_HEAD} bytes"),
            ));
        }
        if reader.read_some(&mut buf, MAX_HEAD + 4)? == 0 {
            return Err(Rejected::new(
                400,
                "the connection closed inside the request head",
            ));
        }
    };
    let head = std::str::from_utf8(&buf[..head_end])
        .map_err(|_| Rejected::new(400, "the request head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let mut parts = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Err(Rejected::new(400, "malformed request line"));
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut content_length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let len: usize = value
                .parse()
                .map_err(|_| Rejected::new(400, "malformed content-length"))?;
            content_length = Some(len);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        }
    }
    let mut rest = buf.split_off(head_end + 4);
    let body = if chunked {
        read_chunked(&mut reader, rest)?
    } else {
        let len = content_length.unwrap_or(0);
        if len > MAX_BODY {
            return Err(Rejected::new(
                413,
                format!("the request body is larger than {MAX_BODY} bytes"),
            ));
        }
        while rest.len() < len {
            if reader.read_some(&mut rest, len)? == 0 {
                return Err(Rejected::new(
                    400,
                    "the connection closed inside the request body",
                ));
            }
        }
        rest.truncate(len);
        rest
    };
    Ok(Request { method, path, body })
}

/// Decodes a chunked body whose first bytes are `pending`.
fn read_chunked(reader: &mut Bounded<'_>, mut pending: Vec<u8>) -> Result<Vec<u8>, Rejected> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(pos) = find(&pending, b"\r\n") {
                break pos;
            }
            if pending.len() > 1024 || reader.read_some(&mut pending, 2048)? == 0 {
                return Err(Rejected::new(400, "malformed chunk size"));
            }
        };
        let size_text = std::str::from_utf8(&pending[..line_end]).unwrap_or_default();
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| Rejected::new(400, "malformed chunk size"))?;
        if body.len() + size > MAX_BODY {
            return Err(Rejected::new(
                413,
                format!("the request body is larger than {MAX_BODY} bytes"),
            ));
        }
        pending.drain(..line_end + 2);
        while pending.len() < size + 2 {
            if reader.read_some(&mut pending, size + 2)? == 0 {
                return Err(Rejected::new(400, "the connection closed inside a chunk"));
            }
        }
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&pending[..size]);
        pending.drain(..size + 2);
    }
}

/// A stream whose reads all end by one deadline.
struct Bounded<'a> {
    stream: &'a mut TcpStream,
    deadline: Instant,
}

impl Bounded<'_> {
    /// Appends what arrives next to `buf`, reading at most up to `limit` bytes in total.
    fn read_some(&mut self, buf: &mut Vec<u8>, limit: usize) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request took too long",
            ));
        }
        self.stream.set_read_timeout(Some(left))?;
        let want = limit.saturating_sub(buf.len()).clamp(1, 64 * 1024);
        let start = buf.len();
        buf.resize(start + want, 0);
        let res = self.stream.read(&mut buf[start..]);
        let n = *res.as_ref().unwrap_or(&0);
        buf.truncate(start + n);
        res
    }
}

/// Reads and drops what the peer still sends, at most 1 MiB and for at most one second.
pub fn discard_input(stream: &mut TcpStream) {
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut buf = [0_u8; 16 * 1024];
    let mut total = 0;
    while total < 1024 * 1024 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => total += n,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Writes a complete JSON reply with `status` and closes the write side.
pub fn write_json(stream: &mut TcpStream, status: u16, body: &Value) -> io::Result<()> {
    let body = body.to_string();
    write!(
        stream,
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        reason(status),
        body.len()
    )?;
    stream.flush()
}

/// Writes an OpenAI-style error reply.
pub fn write_error(stream: &mut TcpStream, status: u16, message: &str) -> io::Result<()> {
    let kind = if status >= 500 {
        "server_error"
    } else {
        "invalid_request_error"
    };
    write_json(
        stream,
        status,
        &json!({ "error": { "message": message, "type": kind, "code": null } }),
    )
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Scripted",
    }
}

/// Writes chat-completion chunks as server-sent events, close-delimited.
pub struct EventStream<'a> {
    stream: &'a mut TcpStream,
    id: String,
    model: String,
}

impl<'a> EventStream<'a> {
    /// Writes the reply head and returns the stream for the chunks.
    pub fn start(
        stream: &'a mut TcpStream,
        id: String,
        model: &str,
    ) -> io::Result<EventStream<'a>> {
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )?;
        Ok(EventStream {
            stream,
            id,
            model: model.to_owned(),
        })
    }

    fn chunk(&mut self, delta: Value, finish_reason: Option<&str>) -> io::Result<()> {
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        self.event(&json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
        }))
    }

    fn event(&mut self, value: &Value) -> io::Result<()> {
        write!(self.stream, "data: {value}\n\n")?;
        self.stream.flush()
    }

    /// Sends the first delta of an assistant message with a text piece.
    pub fn text_piece(&mut self, piece: &str) -> io::Result<()> {
        self.chunk(json!({ "role": "assistant", "content": piece }), None)
    }

    /// Sends a text answer in a few pieces, then the finish reason `stop`.
    pub fn text(&mut self, text: &str) -> io::Result<()> {
        self.chunk(json!({ "role": "assistant", "content": "" }), None)?;
        for piece in split3(text) {
            self.chunk(json!({ "content": piece }), None)?;
        }
        self.chunk(json!({}), Some("stop"))
    }

    /// Sends tool calls, each call's arguments in two pieces, then the finish reason
    /// `tool_calls`. Call ids are `call_<step>_<n>`, unique within a conversation.
    pub fn tool_calls(&mut self, step: usize, calls: &[ToolCall]) -> io::Result<()> {
        self.chunk(json!({ "role": "assistant", "content": null }), None)?;
        self.calls(step, calls)
    }

    /// Sends a text in a few pieces and then tool calls, in one message, then the finish
    /// reason `tool_calls`.
    pub fn text_then_tool_calls(
        &mut self,
        step: usize,
        text: &str,
        calls: &[ToolCall],
    ) -> io::Result<()> {
        self.chunk(json!({ "role": "assistant", "content": "" }), None)?;
        for piece in split3(text) {
            self.chunk(json!({ "content": piece }), None)?;
        }
        self.calls(step, calls)
    }

    fn calls(&mut self, step: usize, calls: &[ToolCall]) -> io::Result<()> {
        for (idx, call) in calls.iter().enumerate() {
            let arguments = call.arguments.to_string();
            let (head, tail) = arguments.split_at(char_boundary(&arguments, arguments.len() / 2));
            self.chunk(
                json!({ "tool_calls": [{
                    "index": idx,
                    "id": format!("call_{step}_{idx}"),
                    "type": "function",
                    "function": { "name": call.name, "arguments": head },
                }]}),
                None,
            )?;
            self.chunk(
                json!({ "tool_calls": [{ "index": idx, "function": { "arguments": tail } }] }),
                None,
            )?;
        }
        self.chunk(json!({}), Some("tool_calls"))
    }

    /// Sends `usage` as the usage record, and the end marker.
    pub fn finish_with(mut self, usage: &Value) -> io::Result<()> {
        self.event(&json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "model": self.model,
            "choices": [],
            "usage": usage,
        }))?;
        write!(self.stream, "data: [DONE]\n\n")?;
        self.stream.flush()
    }
}

/// Splits `text` into three pieces at character boundaries (some may be empty).
fn split3(text: &str) -> impl Iterator<Item = &str> {
    let a = char_boundary(text, text.len() / 3);
    let b = char_boundary(text, text.len() * 2 / 3).max(a);
    [&text[..a], &text[a..b], &text[b..]]
        .into_iter()
        .filter(|p| !p.is_empty())
}

fn char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
