//! What a run cost: the `usage` Pi records on the entries of a child's session, summed per model
//! as Pi's own cost breakdown sums them (assistant messages by `provider/model`, cache warming,
//! and tool and summary usage as `Tools/summaries`), with the run's nested children rolled up.
//!
//! The session is read incrementally: the cursor `runs/<run-id>.usage.json` keeps the byte
//! offset after the last whole line counted and the tally up to there, so each read costs only
//! what was appended since, however large the session grew. A torn last line is left for the
//! next read; another file at the path, or one rewritten below the offset, is read again from its
//! start. Every line read is bounded ([`LINE_MAX`]): a longer one is counted as unread, and the
//! cost stays unknown while there is one.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::{Duration, Instant};

use herd_core::{Error, ErrorCode, sidecar};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{RunRecord, Runner};
use herd_protocol::session::{self, Entry, qualified};
use herd_protocol::usage::{
    CURSOR_VERSION, Figures, NestedUsage, RunUsage, RunUsageRow, Tally, TaskMark, TaskUsage,
    Unlisted, UsageCursor, UsageReport, Usd, plus,
};

use crate::delivery;

/// The longest session line read for its usage; a longer one is skipped and counted unread.
pub const LINE_MAX: usize = 16 * 1024 * 1024;
/// How much of a session is read at a time.
const CHUNK: usize = 1024 * 1024;
/// The least a call of [`advance`] may read: more than a line, so that every call gets on.
pub const READ_MIN: u64 = LINE_MAX as u64 + CHUNK as u64;
/// How much of a session a status or a widget reads in one call; the next call goes on from
/// there, so a session of any size costs each call at most this.
pub const READ_PER_LOOK: u64 = 64 * 1024 * 1024;
/// How many bytes before the offset the cursor keeps to recognise the file.
const TAIL_KEPT: u64 = 64;
/// How many task marks a cursor keeps (a specialist's most recent tasks).
const TASK_MARKS: usize = 500;
/// How deep nested children are rolled up.
const NESTING_MAX: usize = 8;
/// How long a reader waits for another reader of the same run's cursor.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// How long before its parent's creation a child's record may seem written (clock steps).
const CLOCK_SLACK_MS: u64 = 5_000;

/// Reads `session` from where `cursor` stopped (from its start without a cursor, or when the
/// cursor is of another file or of a file rewritten since) towards its current end, at most
/// `budget` bytes (at least [`READ_MIN`]): a call stops there and the next one goes on. `Ok(None)`
/// when the session does not exist (yet: Pi creates it lazily).
pub fn advance(
    session: &Path,
    cursor: Option<UsageCursor>,
    budget: u64,
) -> Result<Option<UsageCursor>, Error> {
    let io = |e: std::io::Error| {
        Error::new(
            ErrorCode::Unavailable,
            format!("{}: {e}", session.display()),
        )
    };
    let Some(mut file) = sidecar::open_file(session)? else {
        return Ok(None);
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!("{} is not a regular file", session.display()),
        ));
    }
    let len = meta.len();
    let session_name = session.display().to_string();
    let fresh = || UsageCursor {
        format_version: CURSOR_VERSION,
        session: session_name.clone(),
        device: meta.dev(),
        inode: meta.ino(),
        offset: 0,
        in_long_line: false,
        tail_hex: String::new(),
        tally: Tally::new(),
        unlisted: Vec::new(),
        tasks: Vec::new(),
    };
    let mut cursor = match cursor {
        Some(c)
            if c.session == session_name
                && c.device == meta.dev()
                && c.inode == meta.ino()
                && c.offset <= len
                && tail_hex(&file, c.offset).ok().as_deref() == Some(c.tail_hex.as_str()) =>
        {
            c
        }
        // Another file, or this one rewritten: its tasks' marks no longer describe it.
        _ => fresh(),
    };
    if cursor.offset == len {
        return Ok(Some(cursor));
    }
    file.seek(SeekFrom::Start(cursor.offset)).map_err(io)?;
    let budget = budget.max(READ_MIN).min(len - cursor.offset);
    let mut reader = file.by_ref().take(budget);
    let mut chunk = vec![0u8; CHUNK];
    let mut line: Vec<u8> = Vec::new();
    // Whether the line being read is already longer than the bound (its bytes are dropped):
    // a line the last call found too long goes on being dropped from where that call stopped.
    let mut overlong = cursor.in_long_line;
    let mut at = cursor.offset;
    loop {
        let n = reader.read(&mut chunk).map_err(io)?;
        if n == 0 {
            break;
        }
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            match rest.iter().position(|b| *b == b'\n') {
                Some(end) => {
                    if !overlong && line.len() + end <= LINE_MAX {
                        line.extend_from_slice(&rest[..end]);
                        count_line(&mut cursor.tally, &mut cursor.unlisted, &line);
                    } else {
                        cursor.tally.unread_lines = cursor.tally.unread_lines.saturating_add(1);
                        cursor.tally.total.cost = None;
                    }
                    at += (end + 1) as u64;
                    cursor.offset = at;
                    line.clear();
                    overlong = false;
                    rest = &rest[end + 1..];
                }
                None => {
                    if !overlong && line.len() + rest.len() <= LINE_MAX {
                        line.extend_from_slice(rest);
                    } else {
                        overlong = true;
                        line.clear();
                    }
                    at += rest.len() as u64;
                    rest = &[];
                }
            }
        }
    }
    // What is left without its newline is a line still being written: the next read has it,
    // unless it is already too long to count, when the next read goes on dropping it from here
    // rather than read it all again.
    cursor.in_long_line = overlong;
    if overlong {
        cursor.offset = at;
    }
    cursor.tail_hex = tail_hex(&file, cursor.offset).map_err(io)?;
    Ok(Some(cursor))
}

/// The last bytes before `offset`, hex.
fn tail_hex(file: &std::fs::File, offset: u64) -> std::io::Result<String> {
    let start = offset.saturating_sub(TAIL_KEPT);
    let mut buf = vec![0u8; (offset - start) as usize];
    file.read_exact_at(&mut buf, start)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Counts the usage of one session line, if it has one.
fn count_line(tally: &mut Tally, unlisted: &mut Unlisted, line: &[u8]) {
    let Ok(text) = std::str::from_utf8(line) else {
        return;
    };
    // Most lines (tool results, user messages) carry no usage: they are not parsed.
    if !text.contains("\"usage\"") {
        return;
    }
    let Some(entry) = session::parse_line(text) else {
        return;
    };
    if let Some((model, figures)) = entry_usage(&entry) {
        // An entry that used nothing (a request refused at once) changes nothing.
        if figures.total_tokens != Some(0) || figures.cost != Some(Usd(0.0)) {
            tally.count_once(&model, &figures, Some(unlisted));
        }
    }
}

/// The model an entry's usage is Pi's (`provider/model`, or `Tools/summaries`) and its figures,
/// as Pi's own cost breakdown reads them.
fn entry_usage(entry: &Entry) -> Option<(String, Figures)> {
    let known = |s: &Option<String>| s.clone().unwrap_or_else(|| "unknown".into());
    let (model, usage) = match entry {
        Entry::Message { message } if message.is_assistant() => {
            let model = message.response_model.as_ref().or(message.model.as_ref());
            (
                qualified(&known(&message.provider), &known(&model.cloned())),
                message.usage.as_ref()?,
            )
        }
        Entry::Message { message } if message.is_tool_result() => {
            ("Tools/summaries".to_owned(), message.usage.as_ref()?)
        }
        Entry::Usage {
            provider,
            model,
            usage,
        } => (qualified(&known(provider), &known(model)), usage.as_ref()?),
        Entry::BranchSummary { usage } | Entry::Compaction { usage } => {
            ("Tools/summaries".to_owned(), usage.as_ref()?)
        }
        _ => return None,
    };
    Some((model, figures_of(usage)?))
}

/// A `usage` object's figures. Its cost is unknown when it has none, or a zero for tokens used
/// that its provider did not report (Pi's zero for a model it has no price for).
fn figures_of(usage: &serde_json::Value) -> Option<Figures> {
    usage.as_object()?;
    // A count that is absent is none; one that is not a whole number this reader can hold
    // (negative, a fraction, past the largest integer) is unknown.
    let n = |key: &str| match usage.get(key) {
        None | Some(serde_json::Value::Null) => Some(0),
        Some(value) => value.as_u64(),
    };
    let (input, output, cache_read, cache_write) =
        (n("input"), n("output"), n("cacheRead"), n("cacheWrite"));
    let total_tokens = match n("totalTokens") {
        Some(0) => plus(plus(input, output), plus(cache_read, cache_write)),
        total => total,
    };
    let cost = usage.get("cost");
    let total_cost = cost
        .and_then(|c| c.get("total"))
        .and_then(serde_json::Value::as_f64)
        .and_then(Usd::new);
    let from_provider = cost
        .and_then(|c| c.get("totalFromProvider"))
        .and_then(serde_json::Value::as_bool)
        == Some(true);
    let cost = match total_cost {
        Some(Usd(c)) if c == 0.0 && total_tokens != Some(0) && !from_provider => None,
        None if total_tokens == Some(0) => Some(Usd(0.0)),
        other => other,
    };
    Some(Figures {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens,
        cost,
        messages: 1,
    })
}

/// Reads the cursor of `run_id`; `None` when there is none or it cannot be read.
fn read_cursor(artifacts: &Artifacts, run_id: &str) -> Option<UsageCursor> {
    artifacts.run(run_id).read().ok().flatten()
}

fn write_cursor(artifacts: &Artifacts, run_id: &str, cursor: &UsageCursor) {
    // Readers see the old cursor or the new one; a lost one only costs a read from the start.
    let _ = artifacts.run(run_id).write(within_bound(cursor.clone()));
}

/// `cursor` made to fit the bound of its read: its oldest task marks dropped first, then the
/// names of the unlisted models it remembers (such a model met again counts again).
fn within_bound(mut cursor: UsageCursor) -> UsageCursor {
    use herd_protocol::run_file::RunFile;
    let size = |c: &UsageCursor| serde_json::to_vec_pretty(c).map_or(u64::MAX, |b| b.len() as u64);
    // A margin for the newline and the version stamp of the write.
    let bound = UsageCursor::READ_LIMIT - 64;
    while size(&cursor) > bound {
        if !cursor.tasks.is_empty() {
            let drop = cursor.tasks.len().div_ceil(2);
            cursor.tasks.drain(..drop);
        } else if !cursor.unlisted.is_empty() {
            cursor.unlisted.clear();
        } else {
            break;
        }
    }
    cursor
}

/// The run's own session read up to its end, its cursor advanced; with `update`, applied to the
/// cursor before it is written (a task's mark). `None` for a run with no session of its own
/// here (an exec child, a run on another machine) or none yet.
fn own_cursor(
    artifacts: &Artifacts,
    record: &RunRecord,
    budget: u64,
    update: impl FnOnce(&mut UsageCursor),
) -> Option<UsageCursor> {
    if record.runner != Runner::Pi || record.extra.remote.is_some() {
        return None;
    }
    // One reader of a run's cursor at a time; one that cannot wait reads without writing.
    let lock = herd_core::lock::exclusive(
        &artifacts.usage_lock(&record.run_id),
        Instant::now() + LOCK_WAIT,
    )
    .ok();
    let before = read_cursor(artifacts, &record.run_id);
    let before_offset = before.as_ref().map(|c| (c.offset, c.tasks.len()));
    let mut cursor = advance(Path::new(&record.session_file), before, budget).ok()??;
    update(&mut cursor);
    if lock.is_some() && before_offset != Some((cursor.offset, cursor.tasks.len())) {
        write_cursor(artifacts, &record.run_id, &cursor);
    }
    Some(cursor)
}

/// The run's own session's usage so far, read at most `budget` bytes further.
pub fn own(artifacts: &Artifacts, record: &RunRecord, budget: u64) -> Option<Tally> {
    own_cursor(artifacts, record, budget, |_| {}).map(|c| c.tally)
}

/// The runs `record` launched: those of its list of children, or for a record from before the
/// list existed the records of the directory naming it as their parent (a child's record is
/// written after its parent was created, so older records are not read).
fn children(artifacts: &Artifacts, record: &RunRecord) -> Vec<RunRecord> {
    if record.extra.links_children
        && let Some(children) = herd_protocol::run::linked_children(artifacts, &record.run_id)
    {
        return children;
    }
    let Ok(ids) = artifacts.run_ids() else {
        return Vec::new();
    };
    let since = record.created_at_ms.saturating_sub(CLOCK_SLACK_MS);
    let mut out: Vec<RunRecord> = ids
        .into_iter()
        .filter(|id| *id != record.run_id)
        .filter(|id| modified_ms(&artifacts.run_record(id)).is_some_and(|at| at >= since))
        .filter_map(|id| RunRecord::load(artifacts, &id).ok())
        .filter(|r| r.parent_run_id.as_deref() == Some(record.run_id.as_str()))
        .collect();
    out.sort_by_key(|r| r.created_at_ms);
    out
}

fn modified_ms(path: &Path) -> Option<u64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// What `record` cost: its own session with its nested children rolled up. A child whose result
/// is settled counts as its result says (its usage was rolled up when it ended, or relayed from
/// its host); one still running is read as it is now. `None` when neither the run nor any
/// nested child has anything to read.
pub fn rolled_up(artifacts: &Artifacts, record: &RunRecord) -> Option<RunUsage> {
    rolled_up_at(artifacts, record, 0, u64::MAX)
}

/// [`rolled_up`], each session read at most `budget` bytes further.
pub fn rolled_up_within(
    artifacts: &Artifacts,
    record: &RunRecord,
    budget: u64,
) -> Option<RunUsage> {
    rolled_up_at(artifacts, record, 0, budget)
}

fn rolled_up_at(
    artifacts: &Artifacts,
    record: &RunRecord,
    depth: usize,
    budget: u64,
) -> Option<RunUsage> {
    let own = own(artifacts, record, budget);
    let mut tally = own.clone().unwrap_or_default();
    let mut nested = Vec::new();
    if depth < NESTING_MAX {
        // A session resumed by a later run (a resurrect) is counted once, with that run: it is the
        // same work continued, its session file holding both parts.
        let mut kids = children(artifacts, record);
        kids.reverse();
        let mut sessions = std::collections::HashSet::new();
        kids.retain(|c| c.session_file.is_empty() || sessions.insert(c.session_file.clone()));
        kids.reverse();
        for child in kids {
            let usage = settled_usage(artifacts, &child)
                .or_else(|| rolled_up_at(artifacts, &child, depth + 1, budget));
            if let Some(usage) = usage {
                tally.merge(&usage.tally);
                nested.push(NestedUsage {
                    run_id: child.run_id.clone(),
                    name: child.name.clone(),
                    figures: usage.tally.total,
                });
            }
        }
    }
    if own.is_none() && nested.is_empty() {
        return None;
    }
    Some(RunUsage {
        own: (!nested.is_empty()).then(|| own.map_or_else(Figures::zero, |t| t.total)),
        tally,
        nested,
    })
}

/// The usage a settled result of `record` carries.
fn settled_usage(artifacts: &Artifacts, record: &RunRecord) -> Option<RunUsage> {
    delivery::load(artifacts, &record.run_id)
        .ok()
        .flatten()?
        .details
        .usage
}

/// What a run cost so far, as a status row shows it: its settled result's figures, else its
/// session and its nested children's read now, each session at most [`READ_PER_LOOK`] further
/// (a session larger than that is counted on over the next looks).
pub fn for_status(artifacts: &Artifacts, record: &RunRecord) -> Option<Figures> {
    settled_usage(artifacts, record)
        .or_else(|| rolled_up_at(artifacts, record, 0, READ_PER_LOOK))
        .map(|u| u.tally.total)
}

/// A widget row's usage: `12.3k tok · $0.084`, once the run used any. The widget shows only
/// what is known: a figure not known is left out rather than shown as unknown (`15 tok` when
/// the cost is not known), and a row with neither shows nothing.
pub fn row_text(figures: &Figures) -> Option<String> {
    use herd_protocol::usage::{cost, tokens};
    if !figures.used_any() {
        return None;
    }
    let parts: Vec<String> = [
        figures
            .total_tokens
            .map(|n| format!("{} tok", tokens(Some(n)))),
        figures.cost.map(|c| cost(Some(c))),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// A persistent specialist's task `task`: what its session counted since the task settled before
/// it (since its start for the first), the mark of this task kept in the cursor. A task marked
/// before (its result is being built again) answers the same.
pub fn task(artifacts: &Artifacts, record: &RunRecord, task: &str) -> Option<RunUsage> {
    let mut delta = None;
    own_cursor(artifacts, record, u64::MAX, |cursor| {
        let at = cursor.tasks.iter().position(|m| m.task == task);
        let (before, now) = match at {
            Some(i) => (
                i.checked_sub(1).map(|p| &cursor.tasks[p].tally),
                cursor.tasks[i].tally.clone(),
            ),
            None => (cursor.tasks.last().map(|m| &m.tally), cursor.tally.clone()),
        };
        delta = Some(match before {
            Some(before) => now.since(before),
            None => now.clone(),
        });
        if at.is_none() {
            cursor.tasks.push(TaskMark {
                task: task.to_owned(),
                tally: now,
            });
            if cursor.tasks.len() > TASK_MARKS {
                cursor.tasks.remove(0);
            }
        }
    })?;
    Some(RunUsage {
        tally: delta?,
        ..RunUsage::default()
    })
}

/// A persistent specialist's tasks and what each cost, from its cursor's marks.
fn tasks_of(cursor: &UsageCursor) -> Vec<TaskUsage> {
    let mut before = Tally::new();
    cursor
        .tasks
        .iter()
        .map(|mark| {
            let figures = mark.tally.since(&before).total;
            before = mark.tally.clone();
            TaskUsage {
                task: mark.task.clone(),
                figures,
            }
        })
        .collect()
}

/// `herd-watch usage`: what the runs of the directory cost, created at or after `since_ms`,
/// each run's own session counted once, by model and by run.
pub fn report(artifacts: &Artifacts, since_ms: Option<u64>) -> Result<UsageReport, Error> {
    report_of(std::slice::from_ref(artifacts), since_ms, false)
}

/// [`report`] over several artifacts directories (`usage --all`), each row naming its
/// directory when `name_dirs`.
pub fn report_of(
    dirs: &[Artifacts],
    since_ms: Option<u64>,
    name_dirs: bool,
) -> Result<UsageReport, Error> {
    let mut records: Vec<(&Artifacts, RunRecord)> = Vec::new();
    for artifacts in dirs {
        records.extend(
            artifacts
                .run_ids()?
                .into_iter()
                .filter_map(|id| RunRecord::load(artifacts, &id).ok())
                .filter(|r| since_ms.is_none_or(|since| r.created_at_ms >= since))
                .map(|r| (artifacts, r)),
        );
    }
    records.sort_by_key(|(_, r)| r.created_at_ms);
    // Each session file is counted once, with the newest run that uses it: a resurrected run
    // continues the lost run's session, which holds both parts.
    let newest: std::collections::HashMap<&str, &str> = records
        .iter()
        .filter(|(_, r)| !r.session_file.is_empty())
        .map(|(_, r)| (r.session_file.as_str(), r.run_id.as_str()))
        .collect();
    let mut by_model = Tally::new();
    let mut rows = Vec::new();
    for (artifacts, record) in &records {
        let settled = delivery::load(artifacts, &record.run_id).ok().flatten();
        let continued = newest
            .get(record.session_file.as_str())
            .is_some_and(|id| *id != record.run_id);
        let cursor = match continued {
            true => None,
            false => own_cursor(artifacts, record, u64::MAX, |_| {}),
        };
        // A run on another machine is counted as its relayed result says: its session is there.
        let own = match (&cursor, &settled) {
            (Some(cursor), _) => cursor.tally.clone(),
            (None, Some(result)) if record.extra.remote.is_some() => result
                .details
                .usage
                .as_ref()
                .map_or_else(Tally::new, |u| u.tally.clone()),
            _ => Tally::new(),
        };
        let rolled = match continued {
            true => own.total,
            false => settled
                .as_ref()
                .and_then(|r| r.details.usage.clone())
                .or_else(|| rolled_up(artifacts, record))
                .map_or_else(|| own.total, |u| u.tally.total),
        };
        by_model.merge(&own);
        rows.push(RunUsageRow {
            run_id: record.run_id.clone(),
            name: record.name.clone(),
            parent_run_id: record.parent_run_id.clone(),
            created_at_ms: record.created_at_ms,
            persistent: record.persistent,
            settled: settled.is_some(),
            own,
            rolled_up: rolled,
            tasks: cursor.as_ref().map(tasks_of).unwrap_or_default(),
            artifacts: name_dirs.then(|| artifacts.root().to_string_lossy().into_owned()),
        });
    }
    Ok(UsageReport {
        since_ms,
        total: by_model.total,
        by_model: by_model.models,
        more_models: by_model.more_models,
        runs: rows,
    })
}

/// The report as a person reads it.
pub fn human(report: &UsageReport) -> String {
    use herd_protocol::usage::{cost, tokens};
    let figures = |f: &Figures| {
        format!(
            "{} in · {} out · {} cached · {}",
            tokens(f.input),
            tokens(f.output),
            tokens(f.cache_read),
            cost(f.cost)
        )
    };
    let mut out = format!("total  {}\n", figures(&report.total));
    if !report.by_model.is_empty() {
        out.push_str("by model\n");
        for m in &report.by_model {
            out.push_str(&format!(
                "  {}  {}\n",
                herd_core::escape::encode_host_value(&m.model, 200),
                figures(&m.figures)
            ));
        }
        if let Some(more) = &report.more_models {
            out.push_str(&format!(
                "  … and {} more models  {}\n",
                herd_protocol::usage::thousands(more.count),
                figures(&more.figures)
            ));
        }
    }
    if !report.runs.is_empty() {
        out.push_str("by run\n");
    }
    for run in &report.runs {
        let name = herd_core::escape::encode_host_value(&run.name, 80);
        out.push_str(&format!(
            "  {}  {name}  {}",
            run.run_id,
            figures(&run.own.total)
        ));
        if run.rolled_up != run.own.total {
            out.push_str(&format!("  (with nested: {})", figures(&run.rolled_up)));
        }
        if let Some(dir) = &run.artifacts {
            out.push_str(&format!(
                "  in {}",
                herd_core::escape::encode_host_value(dir, 500)
            ));
        }
        out.push('\n');
        for task in &run.tasks {
            out.push_str(&format!(
                "    task {}  {}\n",
                herd_core::escape::encode_host_value(&task.task, 80),
                figures(&task.figures)
            ));
        }
    }
    out
}

/// Parses `--since`: a duration back from now (`90s`, `30m`, `2h`, `1d`), an ISO-8601 UTC time,
/// or milliseconds since the epoch.
pub fn parse_since(text: &str, now_ms: u64) -> Result<u64, Error> {
    let text = text.trim();
    let invalid = || {
        Error::new(
            ErrorCode::InvalidRequest,
            format!("--since {text:?}: expected a duration such as 30m, 2h or 1d, an ISO-8601 time, or milliseconds since the epoch"),
        )
        .with_field("since")
    };
    // `2026-01-01`, `2026-01-01T10:00:00Z` and `2026-01-01T10:00:00.000Z`.
    let iso = match text.len() {
        10 => format!("{text}T00:00:00.000Z"),
        20 => format!("{}.000Z", &text[..19]),
        _ => text.to_owned(),
    };
    if let Some(ms) = text
        .is_ascii()
        .then(|| herd_core::time::parse_iso(&iso))
        .flatten()
    {
        return Ok(ms);
    }
    if let Ok(ms) = text.parse::<u64>() {
        return Ok(ms);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(invalid)?;
    let (n, unit) = text.split_at(split);
    let n: u64 = n.parse().map_err(|_| invalid())?;
    let unit_ms = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(invalid()),
    };
    Ok(now_ms.saturating_sub(n.saturating_mul(unit_ms)))
}

#[cfg(test)]
mod tests;
