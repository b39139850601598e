//! The scripted model as a program, for shell scripts and demos:
//! `fake-model --script FILE [--port N] [--port-file F] [--log F] [--max-seconds N]`.
//!
//! It prints `PORT <n>` on stdout once it listens, writes the port to `--port-file`, appends
//! every request body to `--log`, and exits after `--max-seconds` (default 600) or on
//! SIGTERM/SIGINT.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use herd_e2e::model::{self, ModelServer};

const USAGE: &str =
    "usage: fake-model --script FILE [--port N] [--port-file F] [--log F] [--max-seconds N]";

struct Args {
    script: PathBuf,
    port: u16,
    port_file: Option<PathBuf>,
    log: Option<PathBuf>,
    max_seconds: u64,
}

fn parse(mut raw: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut script = None;
    let mut args = Args {
        script: PathBuf::new(),
        port: 0,
        port_file: None,
        log: None,
        max_seconds: 600,
    };
    while let Some(flag) = raw.next() {
        let mut value = || raw.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--script" => script = Some(PathBuf::from(value()?)),
            "--port" => {
                args.port = value()?
                    .parse()
                    .map_err(|_| "--port must be a port number".to_owned())?
            }
            "--port-file" => args.port_file = Some(PathBuf::from(value()?)),
            "--log" => args.log = Some(PathBuf::from(value()?)),
            "--max-seconds" => {
                args.max_seconds = value()?
                    .parse()
                    .map_err(|_| "--max-seconds must be a number".to_owned())?;
            }
            "--help" | "-h" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    args.script = script.ok_or_else(|| format!("--script is required\n{USAGE}"))?;
    Ok(args)
}

fn run() -> Result<(), String> {
    let args = parse(std::env::args().skip(1))?;
    let models = model::read_models(&args.script)?;
    let stop = signal_flag()?;
    let server = ModelServer::spawn(models, args.port, args.log.as_deref())
        .map_err(|err| format!("cannot start the scripted model: {err}"))?;
    if let Some(path) = &args.port_file {
        std::fs::write(path, format!("{}\n", server.port()))
            .map_err(|err| format!("cannot write {}: {err}", path.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "PORT {}", server.port())
        .and_then(|()| stdout.flush())
        .map_err(|err| format!("cannot write stdout: {err}"))?;
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    while Instant::now() < deadline && !stop.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server);
    Ok(())
}

fn signal_flag() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>, String> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, std::sync::Arc::clone(&flag))
            .map_err(|err| format!("cannot watch signals: {err}"))?;
    }
    Ok(flag)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "fake-model: {message}");
            ExitCode::from(2)
        }
    }
}
