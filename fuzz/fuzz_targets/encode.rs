//! Fuzzes the host-value encoder, the list encoder, JSON strings and the expanded view: no
//! input gives a raw line break, a report tag, a broken bound or a cut escape.

#![no_main]

#[path = "../../libs/herd-core/tests/core/escape_invariants.rs"]
mod escape_invariants;

use escape_invariants::{
    LINE_BREAKS, check_host_value, is_forbidden_in_host_text, n_end_tags, n_start_tags,
};
use herd_core::escape::{
    Noun, ReportKind, encode_host_value, encode_list, expanded_view, json_string,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (String, u16, Vec<String>)| {
    let (value, max, items) = input;
    let max = usize::from(max);

    let encoded = encode_host_value(&value, max);
    if let Err(why) = check_host_value(&value, &encoded, max) {
        panic!("encode_host_value({value:?}, {max}): {why}");
    }

    let list = encode_list(&items, max.max(40), Noun::FILES);
    assert!(!list.chars().any(is_forbidden_in_host_text), "{list:?}");
    assert_eq!(n_start_tags(&list) + n_end_tags(&list), 0, "{list:?}");
    assert!(
        list.chars().count() <= max.max(40),
        "{list:?} exceeds {}",
        max.max(40)
    );

    let literal = json_string(&value);
    assert!(
        !literal.contains('<') && !literal.chars().any(|c| LINE_BREAKS.contains(&c)),
        "{literal:?}"
    );
    let decoded: String = serde_json::from_str(&literal).expect("a JSON string");
    assert_eq!(decoded, value);

    let view = expanded_view(&value, ReportKind::Result, &value);
    let lines: Vec<&str> = view.split('\n').collect();
    assert!(lines[0].starts_with("┌ Child report from "));
    assert_eq!(lines[lines.len() - 1], "└ end of child report");
    for line in &lines[1..lines.len() - 1] {
        assert!(*line == "│" || line.starts_with("│ "), "{line:?}");
    }
    assert!(
        view.chars()
            .all(|c| c == '\n' || c == '\t' || !is_forbidden_in_host_text(c)),
        "{view:?}"
    );
});
