//! [`ChangeSet`]: what one layer (or a whole assembly) does to an environment.

use indexmap::{IndexMap, IndexSet};
use std::ffi::{OsStr, OsString};

/// Keys set (in the order they were first set) and keys removed.
/// A key is never in both.
///
/// `lines` optionally remembers, per set key, the source line that produced
/// the value (dotenv files and natively evaluated plain files); `explain`
/// shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    pub set: IndexMap<OsString, OsString>,
    pub removed: IndexSet<OsString>,
    pub lines: IndexMap<OsString, u32>,
}

impl ChangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `key` to `value` (it leaves `removed`).
    pub fn set(&mut self, key: impl Into<OsString>, value: impl Into<OsString>) {
        let key = key.into();
        self.removed.shift_remove(&key);
        self.set.insert(key, value.into());
    }

    /// Set `key` and remember the line it came from.
    pub fn set_at(&mut self, key: impl Into<OsString>, value: impl Into<OsString>, line: u32) {
        let key = key.into();
        self.lines.insert(key.clone(), line);
        self.set(key, value);
    }

    /// Record the removal of `key` (it leaves `set`).
    pub fn remove(&mut self, key: impl Into<OsString>) {
        let key = key.into();
        self.set.shift_remove(&key);
        self.lines.shift_remove(&key);
        self.removed.insert(key);
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.removed.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&OsStr> {
        self.set.get(OsStr::new(key)).map(|v| v.as_os_str())
    }

    pub fn line_of(&self, key: &OsStr) -> Option<u32> {
        self.lines.get(key).copied()
    }

    /// Apply this change set to `env` (set, then remove), without any
    /// provenance. Used to build a child's environment.
    pub fn apply_to(&self, env: &mut super::Env) {
        for (k, v) in &self.set {
            env.insert(k.clone(), v.clone());
        }
        for k in &self.removed {
            env.remove(k);
        }
    }
}
