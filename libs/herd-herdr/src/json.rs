//! Strict reading of a JSON reply, one named path at a time.
//!
//! Every accessor knows the path it reads (`result.panes[1].pane_id`), so a reply of an
//! unexpected shape becomes a problem that says exactly which field was wrong. Herdr marks
//! optional fields by omitting them or by `null`; both read as absent here.

use std::path::PathBuf;

use serde_json::Value;

/// What was wrong with a reply, as a lowercase phrase naming the field.
pub(crate) type Problem = String;

/// A value of the reply together with the path that led to it.
pub(crate) struct Node<'v> {
    value: &'v Value,
    path: String,
}

impl<'v> Node<'v> {
    /// The root of a reply, named `name` in problems (e.g. `result`).
    pub(crate) fn root(value: &'v Value, name: &str) -> Node<'v> {
        Node {
            value,
            path: name.to_owned(),
        }
    }

    /// Returns the dotted path of this node.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    fn problem(&self, what: &str) -> Problem {
        format!("{} {what}", self.path)
    }

    /// Returns the field `key` of this object; absent and `null` both read as `None`.
    pub(crate) fn get(&self, key: &str) -> Result<Option<Node<'v>>, Problem> {
        let Value::Object(map) = self.value else {
            return Err(self.problem("is not an object"));
        };
        Ok(match map.get(key) {
            None | Some(Value::Null) => None,
            Some(value) => Some(Node {
                value,
                path: format!("{}.{key}", self.path),
            }),
        })
    }

    /// Returns the field `key` of this object, which must be present and not `null`.
    pub(crate) fn req(&self, key: &str) -> Result<Node<'v>, Problem> {
        self.get(key)?
            .ok_or_else(|| format!("{}.{key} is missing", self.path))
    }

    pub(crate) fn str(&self) -> Result<&'v str, Problem> {
        self.value
            .as_str()
            .ok_or_else(|| self.problem("is not a string"))
    }

    /// Returns a string that must not be empty (identifiers, paths, branch names).
    pub(crate) fn id(&self) -> Result<&'v str, Problem> {
        match self.str()? {
            "" => Err(self.problem("is empty")),
            text => Ok(text),
        }
    }

    pub(crate) fn bool(&self) -> Result<bool, Problem> {
        self.value
            .as_bool()
            .ok_or_else(|| self.problem("is not a boolean"))
    }

    /// Returns a process id: an integer in 1..=u32::MAX.
    pub(crate) fn pid(&self) -> Result<u32, Problem> {
        match self.value.as_u64().map(u32::try_from) {
            Some(Ok(pid)) if pid > 0 => Ok(pid),
            _ => Err(self.problem("is not a process id")),
        }
    }

    /// Returns the elements of this array, each knowing its index.
    pub(crate) fn items(&self) -> Result<Vec<Node<'v>>, Problem> {
        let Value::Array(items) = self.value else {
            return Err(self.problem("is not an array"));
        };
        Ok(items
            .iter()
            .enumerate()
            .map(|(idx, value)| Node {
                value,
                path: format!("{}[{idx}]", self.path),
            })
            .collect())
    }

    pub(crate) fn req_id(&self, key: &str) -> Result<String, Problem> {
        Ok(self.req(key)?.id()?.to_owned())
    }

    pub(crate) fn opt_id(&self, key: &str) -> Result<Option<String>, Problem> {
        self.get(key)?
            .map(|node| node.id().map(str::to_owned))
            .transpose()
    }

    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<String>, Problem> {
        self.get(key)?
            .map(|node| node.str().map(str::to_owned))
            .transpose()
    }

    pub(crate) fn opt_path(&self, key: &str) -> Result<Option<PathBuf>, Problem> {
        Ok(self.opt_id(key)?.map(PathBuf::from))
    }

    pub(crate) fn opt_bool(&self, key: &str) -> Result<Option<bool>, Problem> {
        self.get(key)?.map(|node| node.bool()).transpose()
    }

    pub(crate) fn opt_count(&self, key: &str) -> Result<Option<u64>, Problem> {
        self.get(key)?
            .map(|node| {
                node.value
                    .as_u64()
                    .ok_or_else(|| node.problem("is not a count"))
            })
            .transpose()
    }

    pub(crate) fn req_bool(&self, key: &str) -> Result<bool, Problem> {
        self.req(key)?.bool()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_name_the_full_path() {
        let value = serde_json::json!({"panes": [{"pane_id": "w1:p1"}, {"pane_id": 7}, {}]});
        let root = Node::root(&value, "result");
        let panes = root.req("panes").unwrap();
        let items = panes.items().unwrap();
        assert_eq!(items[0].req_id("pane_id").unwrap(), "w1:p1");
        assert_eq!(
            items[1].req_id("pane_id").unwrap_err(),
            "result.panes[1].pane_id is not a string"
        );
        assert_eq!(
            items[2].req_id("pane_id").unwrap_err(),
            "result.panes[2].pane_id is missing"
        );
        assert_eq!(
            root.req("missing").err().unwrap(),
            "result.missing is missing"
        );
    }

    #[test]
    fn null_reads_as_absent_and_empty_ids_are_refused() {
        let value = serde_json::json!({"agent": null, "pane_id": "", "pid": 0});
        let root = Node::root(&value, "result");
        assert_eq!(root.opt_id("agent").unwrap(), None);
        assert_eq!(
            root.req_id("pane_id").unwrap_err(),
            "result.pane_id is empty"
        );
        assert_eq!(
            root.req("pid").unwrap().pid().unwrap_err(),
            "result.pid is not a process id"
        );
    }
}
