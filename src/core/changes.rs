//! [`ChangeSet`]: what one layer (or a whole assembly) does to an environment.

use super::Env;
use indexmap::{IndexMap, IndexSet};
use std::ffi::{OsStr, OsString};

/// Keys set (in the order they were first set) and keys removed.
///
/// A key is never in both: the fields are private and every mutation keeps
/// it so ([`set`](Self::set) takes a key out of the removals,
/// [`remove`](Self::remove) out of the assignments).
///
/// Each set key may remember the source line that produced its value
/// (dotenv files and natively evaluated plain files); `explain` shows it.
/// A line is only ever kept for a key that is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    set: IndexMap<OsString, OsString>,
    removed: IndexSet<OsString>,
    lines: IndexMap<OsString, u32>,
}

impl ChangeSet {
    /// The empty change set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `key` to `value` (it leaves the removals; a line remembered for
    /// an earlier value is forgotten).
    pub fn set(&mut self, key: impl Into<OsString>, value: impl Into<OsString>) {
        let key = key.into();
        self.removed.shift_remove(&key);
        self.lines.shift_remove(&key);
        self.set.insert(key, value.into());
    }

    /// Set `key` and remember the line it came from.
    pub fn set_at(&mut self, key: impl Into<OsString>, value: impl Into<OsString>, line: u32) {
        let key = key.into();
        self.set(key.clone(), value);
        self.lines.insert(key, line);
    }

    /// Set `key`, with its line when there is one.
    pub fn set_maybe_at(
        &mut self,
        key: impl Into<OsString>,
        value: impl Into<OsString>,
        line: Option<u32>,
    ) {
        match line {
            Some(l) => self.set_at(key, value, l),
            None => self.set(key, value),
        }
    }

    /// Record the removal of `key` (it leaves the assignments).
    pub fn remove(&mut self, key: impl Into<OsString>) {
        let key = key.into();
        self.forget(&key);
        self.removed.insert(key);
    }

    /// Drop every trace of `key`: neither set nor removed.
    pub fn forget(&mut self, key: &OsStr) {
        self.set.shift_remove(key);
        self.lines.shift_remove(key);
        self.removed.shift_remove(key);
    }

    /// Nothing set and nothing removed.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.removed.is_empty()
    }

    /// The set keys and their values, in the order they were first set.
    pub fn assigned(&self) -> &IndexMap<OsString, OsString> {
        &self.set
    }

    /// The removed keys, in the order they were removed.
    pub fn removed(&self) -> &IndexSet<OsString> {
        &self.removed
    }

    /// The value `key` is set to, if it is set.
    pub fn get(&self, key: &str) -> Option<&OsStr> {
        self.set.get(OsStr::new(key)).map(|v| v.as_os_str())
    }

    /// The source line that set `key`, when one was recorded.
    pub fn line_of(&self, key: &OsStr) -> Option<u32> {
        self.lines.get(key).copied()
    }

    /// The remembered source lines, per set key.
    pub fn lines(&self) -> &IndexMap<OsString, u32> {
        &self.lines
    }

    /// Apply this change set to `env` (set, then remove), without any
    /// provenance. Used to build a child's environment.
    pub fn apply_to(&self, env: &mut Env) {
        for (k, v) in &self.set {
            env.insert(k.clone(), v.clone());
        }
        for k in &self.removed {
            env.remove(k);
        }
    }

    /// The one diff rule (the reference's `get_diff`): the set keys that
    /// are not in `base` or whose value differs (with their lines), and the
    /// removed keys that are in `base`. `env --diff`, the shell hook and
    /// `explain`'s default list all use it.
    pub fn diff_from(&self, base: &Env) -> ChangeSet {
        let mut out = ChangeSet::new();
        for (k, v) in &self.set {
            if base.get(k) != Some(v) {
                out.set_maybe_at(k.clone(), v.clone(), self.line_of(k));
            }
        }
        for k in &self.removed {
            if base.contains_key(k) {
                out.removed.insert(k.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_never_both_set_and_removed() {
        let mut c = ChangeSet::new();
        c.set_at("K", "1", 3);
        c.remove("K");
        assert!(c.assigned().is_empty());
        assert_eq!(c.line_of(OsStr::new("K")), None);
        assert!(c.removed().contains(OsStr::new("K")));
        c.set("K", "2");
        assert!(c.removed().is_empty());
        assert_eq!(c.get("K"), Some(OsStr::new("2")));
    }

    #[test]
    fn a_later_set_without_a_line_forgets_the_old_line() {
        let mut c = ChangeSet::new();
        c.set_at("K", "1", 3);
        assert_eq!(c.line_of(OsStr::new("K")), Some(3));
        c.set("K", "2");
        assert_eq!(c.line_of(OsStr::new("K")), None);
        c.set_maybe_at("K", "3", Some(9));
        assert_eq!(c.line_of(OsStr::new("K")), Some(9));
    }

    #[test]
    fn forget_leaves_no_trace() {
        let mut c = ChangeSet::new();
        c.set_at("A", "1", 1);
        c.remove("B");
        c.forget(OsStr::new("A"));
        c.forget(OsStr::new("B"));
        assert!(c.is_empty());
        assert_eq!(c, ChangeSet::new());
    }

    #[test]
    fn diff_keeps_changes_lines_and_base_removals() {
        let base: Env = [("SAME", "v"), ("OLD", "o"), ("GONE", "g")]
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        let mut c = ChangeSet::new();
        c.set("SAME", "v");
        c.set_at("OLD", "new", 4);
        c.set("NEW", "n");
        c.remove("GONE");
        c.remove("NEVER");
        let d = c.diff_from(&base);
        assert_eq!(d.assigned().keys().collect::<Vec<_>>(), vec!["OLD", "NEW"]);
        assert_eq!(d.line_of(OsStr::new("OLD")), Some(4));
        assert_eq!(d.removed().iter().collect::<Vec<_>>(), vec!["GONE"]);
    }
}
