//! Close matches for a name a person mistyped: the hosts, models or roles it may have meant.

/// The most suggestions a refusal offers.
pub const MAX_SUGGESTIONS: usize = 3;

/// The candidates close to `wanted`, closest first, at most [`MAX_SUGGESTIONS`]: those within an
/// edit distance of a third of the longer name (at least 1; a swap of two neighbours is one
/// edit), compared without case, and those that contain `wanted` or that it contains (a
/// `provider/model` given as `model`).
///
/// ```
/// use herd_core::suggest::close_matches;
///
/// assert_eq!(close_matches("devbx", ["devbox", "build1"]), ["devbox"]);
/// assert_eq!(close_matches("gpt-5", ["openai/gpt-5", "openai/gpt-4o"]), ["openai/gpt-5"]);
/// assert!(close_matches("zzz", ["devbox"]).is_empty());
/// ```
pub fn close_matches<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &'a str)> = candidates
        .into_iter()
        .filter(|c| *c != wanted)
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let distance = edit_distance(&wanted_lower, &lower);
            let longer = wanted_lower.chars().count().max(lower.chars().count());
            let within = distance <= (longer / 3).max(1);
            let contains = !wanted_lower.is_empty()
                && (lower.contains(&wanted_lower) || wanted_lower.contains(&lower));
            (within || contains).then_some((distance, candidate))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, c)| c)
        .collect()
}

/// `did you mean devbox?`, `did you mean a, b or c?`; `None` without suggestions.
pub fn did_you_mean(matches: &[&str]) -> Option<String> {
    match matches {
        [] => None,
        [one] => Some(format!("did you mean {one}?")),
        [init @ .., last] => Some(format!("did you mean {} or {last}?", init.join(", "))),
    }
}

/// The optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// neighbouring characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_closest_first() {
        assert_eq!(edit_distance("devbx", "devbox"), 1);
        assert_eq!(edit_distance("debvox", "devbox"), 1);
        assert_eq!(
            close_matches("devbo", ["devbox", "devbox2", "prod"]),
            ["devbox", "devbox2"]
        );
        assert_eq!(
            did_you_mean(&["a", "b", "c"]).unwrap(),
            "did you mean a, b or c?"
        );
        assert_eq!(did_you_mean(&[]), None);
    }
}
