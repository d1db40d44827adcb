//! What `env` and `explain` say besides the rendering, built from an
//! assembled [`Session`] as data (the command line prints it): the plain
//! store files others can read, the `::add-mask::` lines of `--append`
//! with `--format github`, and `explain`'s report (each variable's
//! touches with its secret references, the notes, the text or JSON).

use super::Session;
use crate::core::explain::{self, FailedLayer, VarReport};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// A plain store file that gave a sensitive variable its value and that
/// group or others can read: one warning per file (as ssh refuses such a
/// key), naming the variables, never a value.
pub(crate) fn readable_store_files(session: &Session) -> Vec<String> {
    use crate::core::LayerKind;
    use std::os::unix::fs::PermissionsExt;
    let a = &session.assembly;
    let mut files: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for (name, _) in session.sensitive_values() {
        let Some(touch) = a.touches(OsStr::new(&name)).last() else {
            continue;
        };
        let Some(layer) = a.layers().get(touch.layer) else {
            continue;
        };
        if layer.info.kind != LayerKind::PlainFile {
            continue;
        }
        let Some(path) = &layer.info.path else {
            continue;
        };
        match files.iter_mut().find(|(p, _)| p == path) {
            Some((_, names)) => names.push(name),
            None => files.push((path.clone(), vec![name])),
        }
    }
    let mut out = Vec::new();
    for (path, names) in files {
        let Ok(m) = std::fs::metadata(&path) else {
            continue;
        };
        let mode = m.permissions().mode() & 0o777;
        if mode & 0o044 != 0 {
            out.push(format!(
                "{} holds sensitive values ({}) and is readable by group or others (mode {mode:04o}); run chmod 600 {}",
                path.display(),
                names.join(", "),
                path.display()
            ));
        }
    }
    out
}

/// `::add-mask::VALUE` lines (the runner's workflow command) for every
/// rendered assignment that is sensitive and masked
/// (docs/masking.md#masked-or-not): each line of a value (split at LF, CR, CRLF) of at least 4
/// bytes, once, with `%` written `%25` (the runner unescapes `%25`, `%0D`, `%0A`).
/// These lines hold the values on stdout by design: the runner consumes
/// them and hides every later occurrence in the job's logs.
pub(crate) fn add_masks(session: &Session, view: &crate::render::View) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = String::new();
    for (k, v) in &view.assignments {
        if session.is_public(k) || !session.masking(k).is_masked() {
            continue;
        }
        let v = String::from_utf8_lossy(v.as_encoded_bytes());
        for line in v.split(['\n', '\r']) {
            if line.len() >= crate::core::MIN_MASKED_LEN && seen.insert(line.to_string()) {
                out.push_str("::add-mask::");
                out.push_str(&line.replace('%', "%25"));
                out.push('\n');
            }
        }
    }
    out
}

/// `env --strict`'s refusal: the secret references that did not resolve
/// (names only), when there is one.
pub(crate) fn unresolved(session: &Session) -> Option<String> {
    let failed = session.reference_names(false);
    (!failed.is_empty()).then(|| {
        format!(
            "--strict: {} secret reference(s) not resolved: {}",
            failed.len(),
            failed.join(", ")
        )
    })
}

/// What `exec --only` restricts: every sensitive value, masked or not,
/// plus those a masker would take from the caller's copy of the stores;
/// one per name.
pub(crate) fn every_sensitive(session: &Session) -> Vec<(String, Vec<u8>)> {
    let mut sensitive = session.sensitive_unmasked_too();
    sensitive.extend(session.held_values());
    sensitive.sort();
    sensitive.dedup_by(|a, b| a.0 == b.0);
    sensitive
}

/// `explain`'s report of `vars` (every changed variable when empty):
/// each variable's touches, with its sensitivity when it has a value, and
/// a secret reference's touch saying what it is and where the value came
/// from; the notes start with `root_note` (the plan's) and add each
/// reference that did not resolve (it has no touch).
pub(crate) fn explain(
    session: &Session,
    vars: &[OsString],
    root_note: Option<String>,
) -> (Vec<VarReport>, Vec<String>) {
    let mut reports = explain::report(&session.assembly, vars);
    for r in reports.iter_mut().filter(|r| r.value.is_some()) {
        r.sensitivity = Some(session.sensitivity(&r.name));
    }
    let mut notes: Vec<String> = root_note.into_iter().collect();
    for rec in session.references() {
        let name = OsStr::new(&rec.name);
        // The store's or the overlay's file (a store and its overlay may
        // both reference a name, on the same line).
        let file = rec
            .store
            .join("agentenv.toml")
            .to_string_lossy()
            .into_owned();
        match &rec.outcome {
            Ok((source, at)) => {
                let touch = reports
                    .iter_mut()
                    .filter(|r| r.name == name)
                    .flat_map(|r| r.touches.iter_mut())
                    .filter(|t| t.layer.kind == crate::core::LayerKind::References.as_str())
                    .find(|t| t.line == Some(rec.line) && t.layer.file == Some(file.clone()));
                if let Some(t) = touch {
                    t.detail = Some(format!(
                        "from {}: resolved from {} (fetched {})",
                        rec.text,
                        source.as_str(),
                        crate::refs::clock(*at)
                    ));
                }
            }
            Err(why) => {
                if vars.is_empty() || vars.iter().any(|v| v == name) {
                    notes.push(format!(
                        "{}: from {} ({}:{}): not resolved: {why}",
                        rec.name, rec.text, file, rec.line
                    ));
                }
            }
        }
    }
    (reports, notes)
}

/// What `explain` prints besides the reports: the notes, and the agent
/// clients agentenv's hooks are wired into — as JSON (`agent_wiring`) and
/// as its text line (names and paths only).
pub(crate) struct Extras {
    pub notes: Vec<String>,
    pub wiring_json: serde_json::Value,
    pub wiring_line: Option<String>,
}

/// `explain`'s output, JSON or text.
pub(crate) fn explain_output(
    json: bool,
    reports: &[VarReport],
    failed: &[FailedLayer],
    show_values: bool,
    extras: Extras,
) -> String {
    let Extras {
        notes,
        wiring_json,
        wiring_line,
    } = extras;
    if json {
        let mut m = explain::to_json(reports, failed, show_values);
        if !notes.is_empty() {
            m.insert("notes".into(), serde_json::json!(notes));
        }
        m.insert("agent_wiring".into(), wiring_json);
        let mut out = serde_json::to_string_pretty(&serde_json::Value::Object(m))
            .unwrap_or_else(|_| "{}".into());
        out.push('\n');
        return out;
    }
    let mut text = explain::render_text_with_failures(reports, failed, show_values);
    if !notes.is_empty() && !text.is_empty() {
        text.push('\n');
    }
    for n in notes {
        text.push_str(&format!("note: {n}\n"));
    }
    if let Some(line) = wiring_line {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&line);
    }
    text
}
