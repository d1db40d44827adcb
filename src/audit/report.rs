//! `agentenv audit`'s report: what was found where (names, forms, lines;
//! never a value), what `--fix` did, and the summary, as text or JSON.

use super::walk::{default_paths, Job};
use super::{Finder, Finding, FixRefused, Fixed, Scan, ScanError};
use crate::core::Note;
use crate::mask::Masker;
use std::path::{Path, PathBuf};

/// One finding, as printed.
struct Line {
    file: PathBuf,
    line: u64,
    name: String,
    form: &'static str,
}

/// Every file read and each of its findings, the fixes, the counts.
#[derive(Default)]
pub struct Report {
    findings: Vec<Line>,
    fixes: Vec<(PathBuf, Result<Fixed, FixRefused>)>,
    files: u64,
    files_found: u64,
    unreadable: u64,
    bytes: u64,
}

/// A path for the text report, its control bytes escaped (`log::escape_controls`).
fn escaped(p: &std::path::Path) -> String {
    crate::log::escape_controls(&p.to_string_lossy(), false).into_owned()
}

impl Report {
    /// Whether anything was found (the exit status 1).
    pub fn found(&self) -> bool {
        !self.findings.is_empty()
    }

    /// Count one file read and each of its findings.
    fn record(&mut self, file: &Path, findings: &[Finding], bytes: u64, masker: &Masker) {
        self.files += 1;
        self.bytes += bytes;
        if !findings.is_empty() {
            self.files_found += 1;
        }
        for f in findings {
            let n = &masker.needles()[f.needle];
            self.findings.push(Line {
                file: file.to_path_buf(),
                line: f.line,
                name: n.name.clone(),
                form: n.form.as_str(),
            });
        }
    }

    /// Record the scans of `jobs` (in order) and, with `fix`, fix each
    /// file with findings; an unreadable file is a warning note.
    pub fn add_scans(
        &mut self,
        jobs: &[Job],
        scans: Vec<Result<Scan, ScanError>>,
        finder: &Finder,
        fix: bool,
        notes: &mut Vec<Note>,
    ) {
        let masker = finder.masker();
        for (job, r) in jobs.iter().zip(scans) {
            match r {
                Ok(scan) => {
                    self.record(&job.path, &scan.findings, scan.bytes, masker);
                    if fix && !scan.findings.is_empty() {
                        let outcome = if scan.changed {
                            Err(FixRefused::Changed)
                        } else {
                            super::fix_file(&job.path, finder, &scan.stamp)
                        };
                        self.fixes.push((job.path.clone(), outcome));
                    }
                }
                Err(e) => {
                    notes.push(Note::warning(format!(
                        "audit: cannot read {}: {e}; skipped",
                        job.path.display()
                    )));
                    self.unreadable += 1;
                }
            }
        }
    }

    /// Record the staged blobs (`audit --staged`); one not read is a
    /// warning note.
    pub fn add_staged(
        &mut self,
        staged: Vec<(PathBuf, super::git::Staged)>,
        masker: &Masker,
        notes: &mut Vec<Note>,
    ) {
        for (path, scanned) in staged {
            match scanned {
                Ok((findings, bytes)) => self.record(&path, &findings, bytes, masker),
                Err(why) => {
                    notes.push(Note::warning(format!(
                        "audit: cannot read the staged {}: {why}; skipped",
                        path.display()
                    )));
                    self.unreadable += 1;
                }
            }
        }
    }

    /// The report as text (`json == false`) or JSON, with the counts of
    /// `masker`'s values and forms.
    pub fn render(&self, masker: &Masker, json: bool) -> String {
        let names: std::collections::BTreeSet<&str> =
            masker.needles().iter().map(|n| n.name.as_str()).collect();
        let found: std::collections::BTreeSet<String> =
            self.findings.iter().map(|l| l.name.clone()).collect();
        if json {
            self.json(names.len(), masker.needles().len(), &found)
        } else {
            self.text(names.len(), masker.needles().len(), &found)
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

const ROTATE: &str = "a value found here has leaked: rotate it; --fix does not un-send it";

/// Where a finding's file is, for the rotate reminder: what the place
/// means for the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Transcript,
    History,
    Other,
}

impl Place {
    fn of(file: &Path, env: &crate::core::Env) -> Place {
        let defaults = default_paths(env);
        let home = crate::core::get(env, "HOME").map(PathBuf::from);
        let data = crate::core::get(env, "XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".local/share")));
        let mut histories: Vec<PathBuf> = Vec::new();
        if let Some(h) = &home {
            histories.extend([h.join(".bash_history"), h.join(".zsh_history")]);
        }
        if let Some(d) = data {
            histories.push(d.join("fish/fish_history"));
        }
        if let Some(h) = crate::core::get(env, "HISTFILE").filter(|v| !v.is_empty()) {
            histories.push(PathBuf::from(h));
        }
        if histories.iter().any(|h| h == file) {
            return Place::History;
        }
        if defaults
            .iter()
            .filter(|d| !histories.contains(d))
            .any(|d| file.starts_with(d))
        {
            return Place::Transcript;
        }
        Place::Other
    }

    fn key(self) -> &'static str {
        match self {
            Place::Transcript => "transcript",
            Place::History => "shell_history",
            Place::Other => "other_file",
        }
    }

    fn says(self) -> &'static str {
        match self {
            Place::Transcript => {
                "found in an agent's transcript, so sent to the model provider (and anywhere \
                 the transcript was synced); rotate it, --fix does not un-send it"
            }
            Place::History => {
                "found in a shell history (on this disk, and in any backup or sync of it); rotate it"
            }
            Place::Other => {
                "found in another file; rotate it if the file ever left this machine (a commit, \
                 a sync, a backup)"
            }
        }
    }
}

/// The names found, by the kind of place they were found in.
fn by_place(
    findings: &[Line],
) -> std::collections::BTreeMap<Place, std::collections::BTreeSet<String>> {
    let env = crate::core::process_env();
    let mut out: std::collections::BTreeMap<Place, std::collections::BTreeSet<String>> =
        Default::default();
    let mut cache: Vec<(PathBuf, Place)> = Vec::new();
    for l in findings {
        let place = match cache.iter().find(|(p, _)| *p == l.file) {
            Some((_, k)) => *k,
            None => {
                let k = Place::of(&l.file, &env);
                cache.push((l.file.clone(), k));
                k
            }
        };
        out.entry(place).or_default().insert(l.name.clone());
    }
    out
}

impl Report {
    fn text(
        &self,
        values: usize,
        needles: usize,
        found: &std::collections::BTreeSet<String>,
    ) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for l in &self.findings {
            let _ = writeln!(
                s,
                "{}:{}: {} ({})",
                escaped(&l.file),
                l.line,
                l.name,
                l.form
            );
        }
        for (p, r) in &self.fixes {
            // A hostile file name drives no terminal (ESC, BEL, CR).
            let p = escaped(p);
            match r {
                Ok(f) => {
                    let _ = write!(
                        s,
                        "fixed {p}: {} replaced",
                        plural(f.replaced, "occurrence", "occurrences")
                    );
                    if f.left > 0 {
                        let _ = write!(
                            s,
                            ", {} left (not inside one JSON string; edit by hand)",
                            f.left
                        );
                    }
                    if f.other_links > 0 && f.replaced > 0 {
                        let _ = write!(
                            s,
                            "; {} of the old file {} the old content (find them: find / -xdev -inum {})",
                            plural(f.other_links, "other hard link", "other hard links"),
                            if f.other_links == 1 { "keeps" } else { "keep" },
                            f.inode
                        );
                    }
                    s.push('\n');
                }
                Err(why) => {
                    let _ = writeln!(s, "not fixed {p}: {why}; left untouched");
                }
            }
        }
        let _ = writeln!(
            s,
            "audit: {} of {} in {} ({} scanned, {} MiB; {} in {})",
            plural(self.findings.len() as u64, "occurrence", "occurrences"),
            plural(found.len() as u64, "variable", "variables"),
            plural(self.files_found, "file", "files"),
            plural(self.files, "file", "files"),
            self.bytes >> 20,
            plural(values as u64, "sensitive value", "sensitive values"),
            plural(needles as u64, "form", "forms"),
        );
        for (place, names) in by_place(&self.findings) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let _ = writeln!(s, "audit: {}: {}", names.join(", "), place.says());
        }
        let _ = found;
        s
    }

    fn json(
        &self,
        values: usize,
        needles: usize,
        found: &std::collections::BTreeSet<String>,
    ) -> String {
        use serde_json::json;
        let findings: Vec<serde_json::Value> = self
            .findings
            .iter()
            .map(|l| {
                json!({
                    "file": l.file.to_string_lossy(),
                    "line": l.line,
                    "name": l.name,
                    "form": l.form,
                })
            })
            .collect();
        let fixes: Vec<serde_json::Value> = self
            .fixes
            .iter()
            .map(|(p, r)| match r {
                Ok(f) => json!({
                    "file": p.to_string_lossy(),
                    "fixed": true,
                    "replaced": f.replaced,
                    "left": f.left,
                    "other_links": if f.replaced > 0 { f.other_links } else { 0 },
                }),
                Err(why) => json!({
                    "file": p.to_string_lossy(),
                    "fixed": false,
                    "why": why.to_string(),
                }),
            })
            .collect();
        let mut v = json!({
            "findings": findings,
            "summary": {
                "occurrences": self.findings.len(),
                "variables": found.iter().collect::<Vec<_>>(),
                "files_with_findings": self.files_found,
                "files_scanned": self.files,
                "files_unreadable": self.unreadable,
                "bytes_scanned": self.bytes,
                "sensitive_values": values,
                "forms": needles,
            },
        });
        if !fixes.is_empty() {
            v["fixes"] = json!(fixes);
        }
        if !found.is_empty() {
            v["rotate"] = json!(ROTATE);
            let mut places = serde_json::Map::new();
            for (place, names) in by_place(&self.findings) {
                places.insert(place.key().into(), json!(names));
            }
            v["found_in"] = serde_json::Value::Object(places);
        }
        let mut s = serde_json::to_string_pretty(&v).expect("JSON of strings and numbers");
        s.push('\n');
        s
    }
}
