//! A line diff of two versions of a setup file, for a person: the lines removed (`- `) and added
//! (`+ `), each run of changes with up to [`CONTEXT`] unchanged lines around it (`  `), and `…`
//! where unchanged lines are left out.

/// Unchanged lines shown before and after a change.
const CONTEXT: usize = 2;
/// The most cells of the comparison table: beyond it the versions are not compared line by line.
const MAX_CELLS: usize = 4_000_000;

/// One line of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// The changes from `before` to `after`, as lines to show; `None` when the changed middle is
/// too large to compare line by line.
pub fn lines(before: &str, after: &str) -> Option<Vec<String>> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let ops = compare(&old, &new)?;
    let mut shown = vec![false; ops.len()];
    for (i, op) in ops.iter().enumerate() {
        if !matches!(op, Line::Same(_)) {
            let to = (i + CONTEXT).min(ops.len() - 1);
            for s in &mut shown[i.saturating_sub(CONTEXT)..=to] {
                *s = true;
            }
        }
    }
    let mut out = Vec::new();
    let mut gap = false;
    for (op, show) in ops.iter().zip(&shown) {
        if *show {
            if gap {
                out.push("…".to_owned());
            }
            gap = false;
            out.push(render(*op));
        } else {
            gap = true;
        }
    }
    if gap && !out.is_empty() {
        out.push("…".to_owned());
    }
    Some(out)
}

fn render(op: Line<'_>) -> String {
    match op {
        Line::Same(l) => format!("  {l}"),
        Line::Removed(l) => format!("- {l}"),
        Line::Added(l) => format!("+ {l}"),
    }
}

/// The lines of `old` and `new` in order, each kept, removed or added: a longest common
/// subsequence of the middle left after the common first and last lines.
fn compare<'a>(old: &[&'a str], new: &[&'a str]) -> Option<Vec<Line<'a>>> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        return None;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let width = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * width + j] = if a[i] == b[j] {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let mut ops: Vec<Line<'a>> = old[..head].iter().map(|l| Line::Same(l)).collect();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push(Line::Same(a[i]));
            i += 1;
            j += 1;
        } else if i < a.len()
            && (j == b.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
        {
            ops.push(Line::Removed(a[i]));
            i += 1;
        } else {
            ops.push(Line::Added(b[j]));
            j += 1;
        }
    }
    ops.extend(old[old.len() - tail..].iter().map(|l| Line::Same(l)));
    Some(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_as_removed_and_added_with_its_context() {
        let before = "a\nb\nc\nd\ne\nf\ng\n";
        let after = "a\nb\nc\nD\ne\nf\ng\nh\n";
        assert_eq!(
            lines(before, after).unwrap(),
            ["…", "  b", "  c", "- d", "+ D", "  e", "  f", "  g", "+ h"]
        );
        assert_eq!(
            lines(
                "setup = [\"make\"]\n",
                "setup = [\"make\", \"echo pwned\"]\n"
            )
            .unwrap(),
            [
                "- setup = [\"make\"]",
                "+ setup = [\"make\", \"echo pwned\"]"
            ]
        );
        assert!(lines("same\n", "same\n").unwrap().is_empty());
        let far = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        assert_eq!(
            lines(far, &far.replace("1\n", "one\n").replace("9\n", "nine\n")).unwrap(),
            [
                "- 1", "+ one", "  2", "  3", "…", "  7", "  8", "- 9", "+ nine"
            ]
        );
    }

    #[test]
    fn too_large_a_change_is_not_compared() {
        let before: String = (0..3000).map(|i| format!("a{i}\n")).collect();
        let after: String = (0..3000).map(|i| format!("b{i}\n")).collect();
        assert!(lines(&before, &after).is_none());
    }
}
