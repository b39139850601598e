use super::*;
use std::io::Write;

fn assistant(model: &str, input: u64, output: u64, cache_read: u64, cost: Option<f64>) -> String {
    let mut usage = serde_json::json!({
        "input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 0,
        "totalTokens": input.saturating_add(output).saturating_add(cache_read),
    });
    if let Some(total) = cost {
        usage["cost"] = serde_json::json!({
            "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": total,
        });
    }
    serde_json::json!({
        "type": "message", "id": "a1", "parentId": null,
        "message": {
            "role": "assistant", "content": [{"type": "text", "text": "x"}],
            "provider": "fake", "model": model, "usage": usage, "stopReason": "stop",
        },
    })
    .to_string()
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[test]
fn several_models_are_summed_each_and_in_all() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    append(&s, "{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n");
    append(&s, &format!("{}\n", assistant("a", 100, 10, 50, Some(0.5))));
    append(
        &s,
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\\\"usage\\\"\"}]}}\n",
    );
    append(&s, &format!("{}\n", assistant("b", 7, 3, 0, Some(0.25))));
    append(
        &s,
        &format!("{}\n", assistant("fake/a", 1, 1, 0, Some(0.25))),
    );
    let c = advance(&s, None, u64::MAX).unwrap().unwrap();
    assert_eq!(c.tally.total.input, Some(108));
    assert_eq!(c.tally.total.output, Some(14));
    assert_eq!(c.tally.total.cache_read, Some(50));
    assert_eq!(c.tally.total.messages, 3);
    assert_eq!(c.tally.total.cost, Some(Usd(1.0)));
    let models: Vec<_> = c
        .tally
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.figures.input))
        .collect();
    assert_eq!(models, [("fake/a", Some(101)), ("fake/b", Some(7))]);
    assert_eq!(c.offset, std::fs::metadata(&s).unwrap().len());
}

#[test]
fn a_torn_last_line_is_left_for_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    let whole = format!("{}\n", assistant("a", 10, 1, 0, Some(0.1)));
    let torn = assistant("a", 20, 2, 0, Some(0.2));
    let (head, tail) = torn.split_at(torn.len() / 2);
    append(&s, &whole);
    append(&s, head);
    let c = advance(&s, None, u64::MAX).unwrap().unwrap();
    assert_eq!(
        c.tally.total.input,
        Some(10),
        "the torn line is not counted"
    );
    assert_eq!(c.offset, whole.len() as u64, "the offset stops before it");
    append(&s, &format!("{tail}\n"));
    let c = advance(&s, Some(c), u64::MAX).unwrap().unwrap();
    assert_eq!(c.tally.total.input, Some(30));
    assert_eq!(c.tally.total.messages, 2);
}

#[test]
fn an_unknown_cost_is_unknown_never_zero() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    // No cost at all, and Pi's zero for a model it has no price for.
    append(&s, &format!("{}\n", assistant("free", 10, 1, 0, None)));
    let c = advance(&s, None, u64::MAX).unwrap().unwrap();
    assert_eq!(c.tally.total.cost, None);
    let s2 = dir.path().join("s2.jsonl");
    append(
        &s2,
        &format!("{}\n", assistant("unpriced", 10, 1, 0, Some(0.0))),
    );
    append(
        &s2,
        &format!("{}\n", assistant("priced", 10, 1, 0, Some(0.3))),
    );
    let c = advance(&s2, None, u64::MAX).unwrap().unwrap();
    assert_eq!(
        c.tally.total.cost, None,
        "a known part does not make the sum known"
    );
    assert_eq!(c.tally.models[1].figures.cost, Some(Usd(0.3)));
    // A message that used nothing (a request that failed at once) changes nothing.
    let s3 = dir.path().join("s3.jsonl");
    append(
        &s3,
        &format!("{}\n", assistant("priced", 0, 0, 0, Some(0.0))),
    );
    append(
        &s3,
        &format!("{}\n", assistant("priced", 10, 1, 0, Some(0.3))),
    );
    let c = advance(&s3, None, u64::MAX).unwrap().unwrap();
    assert_eq!(c.tally.total.cost, Some(Usd(0.3)));
    assert_eq!(c.tally.total.messages, 1);
}

#[test]
fn offsets_survive_appends_and_another_file_is_read_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    append(&s, &format!("{}\n", assistant("a", 10, 1, 0, Some(0.1))));
    let first = advance(&s, None, u64::MAX).unwrap().unwrap();
    append(&s, &format!("{}\n", assistant("a", 5, 1, 0, Some(0.1))));
    let second = advance(&s, Some(first.clone()), u64::MAX).unwrap().unwrap();
    assert_eq!(second.tally.total.input, Some(15));
    assert!(second.offset > first.offset);
    // Nothing new: the same cursor.
    assert_eq!(
        advance(&s, Some(second.clone()), u64::MAX)
            .unwrap()
            .unwrap(),
        second
    );
    // The file replaced by a shorter one (another inode): read again from its start.
    std::fs::remove_file(&s).unwrap();
    append(&s, &format!("{}\n", assistant("b", 3, 1, 0, Some(0.1))));
    let again = advance(&s, Some(second.clone()), u64::MAX)
        .unwrap()
        .unwrap();
    assert_eq!(again.tally.total.input, Some(3));
    assert_eq!(again.tally.models[0].model, "fake/b");
    // Rewritten in place below the offset: the kept tail does not match.
    let mut forged = again.clone();
    forged.tail_hex = "00".into();
    let reread = advance(&s, Some(forged), u64::MAX).unwrap().unwrap();
    assert_eq!(reread.tally.total.input, Some(3), "counted once, not twice");
    assert_eq!(
        advance(&dir.path().join("missing.jsonl"), None, u64::MAX).unwrap(),
        None
    );
}

#[test]
fn a_large_session_is_read_once_then_only_what_was_appended() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    // 64 MiB of tool output lines without usage, then messages with it.
    let filler = format!(
        "{{\"type\":\"message\",\"message\":{{\"role\":\"toolResult\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
        "y".repeat(1024 * 1024 - 100)
    );
    let mut f = std::fs::File::create(&s).unwrap();
    for i in 0..64 {
        f.write_all(filler.as_bytes()).unwrap();
        f.write_all(format!("{}\n", assistant("a", i, 1, 0, Some(0.01))).as_bytes())
            .unwrap();
    }
    drop(f);
    let first = advance(&s, None, u64::MAX).unwrap().unwrap();
    assert_eq!(first.tally.total.messages, 64);
    assert_eq!(first.tally.total.input, Some((0..64).sum::<u64>()));
    // The next read starts at the offset: it reads the one line appended, not 64 MiB.
    append(&s, &format!("{}\n", assistant("a", 1000, 1, 0, Some(0.01))));
    let started = Instant::now();
    let next = advance(&s, Some(first.clone()), u64::MAX).unwrap().unwrap();
    let took = started.elapsed();
    assert_eq!(next.tally.total.messages, 65);
    assert_eq!(
        next.tally.total.input,
        first.tally.total.input.map(|n| n + 1000)
    );
    assert!(
        took < Duration::from_millis(50),
        "an incremental read took {took:?}"
    );
}

#[test]
fn an_overlong_line_is_counted_unread_and_the_cost_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    append(&s, &format!("{}\n", assistant("a", 10, 1, 0, Some(0.1))));
    append(
        &s,
        &format!("{{\"usage\":\"{}\"}}\n", "z".repeat(LINE_MAX + 10)),
    );
    append(&s, &format!("{}\n", assistant("a", 10, 1, 0, Some(0.1))));
    let c = advance(&s, None, u64::MAX).unwrap().unwrap();
    assert_eq!(c.tally.unread_lines, 1);
    assert_eq!(c.tally.total.input, Some(20));
    assert_eq!(c.tally.total.cost, None);
}

#[test]
fn cache_warming_and_tool_usage_count_as_pi_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    let usage = serde_json::json!({"input": 4, "output": 0, "cacheRead": 0, "cacheWrite": 6, "totalTokens": 10, "cost": {"total": 0.02}});
    append(
        &s,
        &format!(
            "{}\n",
            serde_json::json!({"type": "usage", "kind": "cache-warm", "provider": "fake", "model": "a", "usage": usage})
        ),
    );
    append(
        &s,
        &format!(
            "{}\n",
            serde_json::json!({"type": "message", "message": {"role": "toolResult", "usage": usage}})
        ),
    );
    append(
        &s,
        &format!(
            "{}\n",
            serde_json::json!({"type": "compaction", "usage": usage})
        ),
    );
    let c = advance(&s, None, u64::MAX).unwrap().unwrap();
    let models: Vec<_> = c
        .tally
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.figures.messages))
        .collect();
    assert_eq!(models, [("fake/a", 1), ("Tools/summaries", 2)]);
    assert_eq!(c.tally.total.cache_write, Some(18));
}

#[test]
fn a_run_s_children_come_from_its_list_and_an_older_record_s_from_a_search() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path());
    let save = |id: &str, parent: Option<&str>, links: bool| {
        let mut record: RunRecord = serde_json::from_value(serde_json::json!({
            "format_version": 1, "run_id": id, "name": id, "created_at_ms": 1,
            "runner": "exec", "surface": "process", "status": "launched",
            "cwd": "/", "session_file": format!("/s/{id}.jsonl"),
            "parent_run_id": parent, "extra": { "links_children": links },
        }))
        .unwrap();
        record.save(&art).unwrap();
        record
    };
    let ids = |records: Vec<RunRecord>| -> Vec<String> {
        records.into_iter().map(|r| r.run_id).collect()
    };
    // A record from before the list: its children are searched for.
    let old = save("old", None, false);
    save("kid", Some("old"), true);
    assert_eq!(ids(children(&art, &old)), ["kid"]);
    // A record with a list: the list alone says, so an unlisted child is not searched for.
    let new = save("new", None, true);
    save("stray", Some("new"), true);
    assert_eq!(ids(children(&art, &new)), Vec::<String>::new());
    herd_protocol::run::link_child(&art, "new", "listed").unwrap();
    save("listed", Some("new"), true);
    assert_eq!(ids(children(&art, &new)), ["listed"]);
}

#[test]
fn a_widget_row_shows_what_the_run_cost_so_far() {
    use crate::projection::{Projection, WIDGET_WIDTH, WidgetRow, widget};
    use herd_protocol::watch::Label;
    let mut figures = Figures {
        input: Some(41_234),
        output: Some(3_100),
        cache_read: Some(12_000),
        cache_write: Some(0),
        total_tokens: Some(56_334),
        cost: Usd::new(0.0842),
        messages: 3,
    };
    assert_eq!(row_text(&figures).as_deref(), Some("56.3k tok · $0.084"));
    let row = |usage: Option<String>| WidgetRow {
        name: "\"Scout\"".into(),
        agent: Some("scout".into()),
        elapsed_ms: 12_000,
        projection: Projection {
            label: Label::Running,
            detail: None,
            since_ms: None,
        },
        usage,
    };
    let w = widget(&[row(row_text(&figures))], 12_000, WIDGET_WIDTH);
    assert!(
        w.text
            .contains(" 00:12  \"Scout\" (scout) · 56.3k tok · $0.084 "),
        "{}",
        w.text
    );
    // What is not known is left out of the widget, never shown as unknown.
    figures.cost = None;
    assert_eq!(row_text(&figures).as_deref(), Some("56.3k tok"));
    figures.total_tokens = None;
    assert_eq!(row_text(&figures), None);
    // Nothing used yet: the row is as it was.
    let none = Figures::zero();
    assert_eq!(row_text(&none), None);
    let w = widget(&[row(None)], 12_000, WIDGET_WIDTH);
    assert!(w.text.contains(" 00:12  \"Scout\" (scout) "), "{}", w.text);
    assert!(!w.text.contains("tok"), "{}", w.text);
}

#[test]
fn since_takes_durations_times_and_milliseconds() {
    let now = 10_000_000;
    assert_eq!(parse_since("30m", now).unwrap(), now - 1_800_000);
    assert_eq!(parse_since("2h", now).unwrap(), now - 7_200_000);
    assert_eq!(parse_since("1234", now).unwrap(), 1234);
    let new_year = herd_core::time::parse_iso("2026-01-01T00:00:00.000Z").unwrap();
    assert_eq!(parse_since("2026-01-01T00:00:00Z", now).unwrap(), new_year);
    assert_eq!(parse_since("2026-01-01", now).unwrap(), new_year);
    assert!(parse_since("soon", now).is_err());
    assert!(parse_since("5w", now).is_err());
}

fn pi_record(art: &Artifacts, id: &str, session: &Path) -> RunRecord {
    let mut record: RunRecord = serde_json::from_value(serde_json::json!({
        "format_version": 1, "run_id": id, "name": id, "created_at_ms": 1,
        "runner": "pi", "surface": "process", "status": "launched",
        "cwd": "/", "session_file": session.display().to_string(),
    }))
    .unwrap();
    record.save(art).unwrap();
    record
}

/// A lost run and the run that resurrected it share one session file: its cost is counted
/// once, with the run that continued it, in the total, by model and by run.
#[test]
fn a_resumed_session_is_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path());
    let s = dir.path().join("s.jsonl");
    append(&s, &format!("{}\n", assistant("a", 100, 10, 0, Some(0.5))));
    pi_record(&art, "lost", &s);
    append(&s, &format!("{}\n", assistant("a", 50, 5, 0, Some(0.25))));
    let mut again = pi_record(&art, "again", &s);
    again.created_at_ms = 2;
    again.extra.resurrects = Some("lost".into());
    again.save(&art).unwrap();
    let report = report(&art, None).unwrap();
    assert_eq!(report.total.cost, Some(herd_protocol::usage::Usd(0.75)));
    assert_eq!(report.total.input, Some(150));
    let text = human(&report);
    assert_eq!(text.matches("$0.750").count(), 3, "{text}");
}

#[test]
fn a_status_of_counts_near_the_integer_limits_says_unknown_and_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path());
    let s = dir.path().join("s.jsonl");
    let near = u64::MAX - 5;
    for _ in 0..2 {
        append(
            &s,
            &format!("{}\n", assistant("a", near, 1, near, Some(0.1))),
        );
    }
    // A count past what a reader can hold is unknown on its own line too.
    append(
        &s,
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"provider\":\"fake\",\"model\":\"a\",\"usage\":{\"input\":1e30,\"output\":1,\"totalTokens\":5}}}\n",
    );
    let record = pi_record(&art, "r1", &s);
    let figures = for_status(&art, &record).unwrap();
    assert_eq!(figures.input, None, "{figures:?}");
    assert_eq!(figures.cache_read, None);
    assert_eq!(figures.total_tokens, None);
    assert_eq!(figures.output, Some(3), "a figure that fits stays known");
    assert_eq!(figures.messages, 3);
    // Neither the tokens nor the cost are known: the widget shows nothing of them.
    assert_eq!(row_text(&figures), None);
}

#[test]
fn a_line_without_its_end_is_read_once_and_each_look_reads_at_most_its_share() {
    use herd_protocol::run_file::RunFile as _;
    let _ = UsageCursor::READ_LIMIT;
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path());
    let s = dir.path().join("s.jsonl");
    append(&s, &format!("{}\n", assistant("a", 10, 1, 0, Some(0.1))));
    let start = std::fs::metadata(&s).unwrap().len();
    // 200 MB of one line that never ends (sparse: it costs no disk).
    let len = start + 200 * 1024 * 1024;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&s)
        .unwrap()
        .set_len(len)
        .unwrap();
    let record = pi_record(&art, "r1", &s);
    let offset = || {
        let cursor: UsageCursor = art.run("r1").read().unwrap().unwrap();
        (cursor.offset, cursor.in_long_line)
    };
    let mut looks = 0;
    let mut last = 0;
    loop {
        let figures = for_status(&art, &record).unwrap();
        assert_eq!(figures.input, Some(10));
        looks += 1;
        let (now, in_long) = offset();
        assert!(now > last, "look {looks} got on: {now} after {last}");
        assert!(
            now - last <= READ_PER_LOOK + start,
            "look {looks} read {}",
            now - last
        );
        assert!(
            in_long,
            "the cursor knows it is inside a line too long to count"
        );
        last = now;
        if now == len {
            break;
        }
    }
    assert_eq!(looks, 4, "200 MB in looks of 64 MiB");
    // At the end, a look reads nothing more; the line's end and what follows are counted.
    let _ = for_status(&art, &record).unwrap();
    assert_eq!(offset(), (len, true));
    append(&s, &format!("\n{}\n", assistant("a", 5, 1, 0, Some(0.1))));
    let cursor = advance(&s, art.run("r1").read().unwrap(), READ_PER_LOOK)
        .unwrap()
        .unwrap();
    assert_eq!(cursor.tally.total.input, Some(15));
    assert_eq!(cursor.tally.unread_lines, 1);
    assert!(!cursor.in_long_line);
    assert_eq!(cursor.offset, std::fs::metadata(&s).unwrap().len());
}
