//! The exit-code and error-code tables, rendered from herd-core's one table and one mapping.

use herd_core::{ErrorCode, exit};

use crate::tools::escape;

/// The `exit-codes` block: every exit code and its meaning.
pub fn exit_codes() -> String {
    let mut out = "| Exit code | Meaning |\n| --- | --- |\n".to_owned();
    for row in exit::TABLE {
        out.push_str(&format!("| {} | {} |\n", row.code, escape(row.meaning)));
    }
    out
}

/// The `error-codes` block: every error code of the `{"error":{…}}` document and the exit code a
/// binary ends with when it fails with it.
pub fn error_codes() -> String {
    let mut out =
        "| Error code | Exit code | Meaning of the exit code |\n| --- | --- | --- |\n".to_owned();
    for code in ErrorCode::ALL {
        let exit = code.exit_code();
        let meaning = exit::TABLE
            .iter()
            .find(|row| row.code == exit)
            .map_or("—", |row| row.meaning);
        out.push_str(&format!(
            "| `{}` | {exit} | {} |\n",
            code.as_str(),
            escape(meaning)
        ));
    }
    out
}
