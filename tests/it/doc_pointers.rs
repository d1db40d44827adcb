//! The code points only at documents in the repository. The product spec
//! and the notes on the reference tools the project was built from are not
//! in it, so a section sign (U+00A7) in a comment, as in "SPEC" or
//! "reference" followed by it and a number, points nowhere a reader can
//! follow: say what the rule is, or point at a section of a document here
//! by its path and anchor, as `README.md#commands` does. Every such anchor
//! must be a heading of that file.

use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Rust sources under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every comment line of the sources that may point at a document:
/// `(file, line number, text)`.
fn comment_lines() -> Vec<(String, usize, String)> {
    let mut files = Vec::new();
    for dir in ["src", "tests/it", "benches", "fuzz/fuzz_targets"] {
        rust_files(&repo().join(dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut lines = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.strip_prefix(repo()).unwrap().display().to_string();
        for (i, l) in text.lines().enumerate() {
            if let Some(at) = l.find("//") {
                lines.push((name.clone(), i + 1, l[at..].to_string()));
            }
        }
    }
    lines
}

/// GitHub's anchor for a Markdown heading: lower case, punctuation other
/// than `-` and `_` dropped, each space a `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The headings of a Markdown text (not the `#` lines of its code blocks).
fn headings(md: &str) -> Vec<&str> {
    let mut in_code = false;
    let mut out = Vec::new();
    for l in md.lines() {
        if l.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && l.starts_with('#') {
            out.push(l.trim_start_matches('#'));
        }
    }
    out
}

/// Whether `text` points at a numbered section of the spec or the
/// reference notes: a section sign, or `SPEC` and a number.
fn points_outside(text: &str) -> bool {
    text.contains('\u{a7}')
        || text
            .match_indices("SPEC ")
            .any(|(i, _)| text[i + 5..].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn no_comment_points_at_a_section_of_a_document_outside_the_repository() {
    let bad: Vec<String> = comment_lines()
        .into_iter()
        .filter(|(_, _, text)| points_outside(text))
        .map(|(f, n, text)| format!("{f}:{n}: {}", text.trim()))
        .collect();
    assert!(
        bad.is_empty(),
        "say what the rule is, or point at FILE.md#anchor in the repository:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_anchor_a_comment_points_at_is_a_heading_of_its_document() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for (f, n, text) in comment_lines() {
        let mut rest = text.as_str();
        while let Some(at) = rest.find(".md#") {
            let start = rest[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '.')))
                .map_or(0, |i| i + 1);
            let doc = &rest[start..at + 3];
            let tail = &rest[at + 4..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_')))
                .unwrap_or(tail.len());
            let want = &tail[..end];
            rest = &tail[end..];
            if doc.starts_with('/') {
                continue; // a URL's path, not a file of this repository
            }
            checked += 1;
            let Ok(md) = std::fs::read_to_string(repo().join(doc)) else {
                bad.push(format!("{f}:{n}: {doc} is not in the repository"));
                continue;
            };
            let found = headings(&md).iter().any(|h| anchor(h) == want);
            if !found {
                bad.push(format!("{f}:{n}: {doc} has no heading #{want}"));
            }
        }
    }
    assert!(checked > 20, "found only {checked} anchors");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn no_document_points_at_a_section_of_a_document_outside_the_repository() {
    let mut docs: Vec<PathBuf> = [
        "README.md",
        "SECURITY.md",
        "ARCHITECTURE.md",
        "BENCHMARKS.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|d| repo().join(d))
    .collect();
    docs.push(repo().join("tests/agentloop/README.md"));
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    in_docs.sort();
    docs.extend(in_docs);
    let mut bad = Vec::new();
    for d in docs {
        let text = std::fs::read_to_string(&d).unwrap();
        for (i, l) in text.lines().enumerate() {
            if points_outside(l) {
                let name = d.strip_prefix(repo()).unwrap().display();
                bad.push(format!("{name}:{}", i + 1));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
