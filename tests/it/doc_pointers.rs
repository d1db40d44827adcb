//! The code points only at documents in the repository. The product spec
//! and the notes on the reference tools the project was built from are not
//! in it, so a section sign (U+00A7) in a comment, as in "SPEC" or
//! "reference" followed by it and a number, points nowhere a reader can
//! follow: say what the rule is, or point at a section of a document here
//! by its path and anchor, as `docs/commands.md#commands` does. Every such anchor
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

/// GitHub's anchors of a Markdown text: each heading's slug, a repeated one
/// with `-1`, `-2`… appended.
fn anchors(md: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in headings(md) {
        let base = anchor(h);
        let mut slug = base.clone();
        let mut n = 0;
        while out.contains(&slug) {
            n += 1;
            slug = format!("{base}-{n}");
        }
        out.push(slug);
    }
    out
}

/// The targets of the inline links (`[text](target)`) and reference
/// definitions (`[label]: target`) of a Markdown text, with their line
/// numbers; code blocks and code spans are left out.
fn link_targets(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_code = false;
    // A link's text may span a line break: join the prose, keeping the
    // number of the line each link's `](` is on.
    let mut prose: Vec<(usize, String)> = Vec::new();
    for (i, l) in md.lines().enumerate() {
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Drop code spans (`…`), which may hold `](` of their own.
        let mut text = String::new();
        let mut in_span = false;
        for c in l.chars() {
            if c == '`' {
                in_span = !in_span;
            } else if !in_span {
                text.push(c);
            }
        }
        let t = text.trim_start();
        if t.starts_with('[') {
            if let Some(at) = t.find("]: ") {
                if !t[..at].contains('(') {
                    out.push((i + 1, t[at + 3..].trim().to_string()));
                    continue;
                }
            }
        }
        prose.push((i + 1, text));
    }
    for (n, l) in prose {
        let mut rest = l.as_str();
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            let target = tail[..end].split_whitespace().next().unwrap_or("");
            out.push((n, target.to_string()));
            rest = &tail[end..];
        }
    }
    out
}

/// The README, the repository's top-level documents and every chapter of the
/// docs book.
fn markdown_documents() -> Vec<PathBuf> {
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
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    docs.extend(chapters);
    docs
}

#[test]
fn every_relative_link_and_anchor_of_the_readme_and_the_book_resolves() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for d in markdown_documents() {
        let text = std::fs::read_to_string(&d).unwrap();
        let name = d.strip_prefix(repo()).unwrap().display().to_string();
        let dir = d.parent().unwrap();
        for (n, target) in link_targets(&text) {
            if target.is_empty()
                || target.contains("://")
                || target.starts_with("mailto:")
                || target.starts_with('<')
            {
                continue;
            }
            checked += 1;
            let (path, frag) = match target.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                d.clone()
            } else {
                dir.join(path)
            };
            if !file.exists() {
                bad.push(format!("{name}:{n}: {target}: {path} does not exist"));
                continue;
            }
            let Some(frag) = frag else { continue };
            if file.extension().is_none_or(|e| e != "md") {
                bad.push(format!(
                    "{name}:{n}: {target}: an anchor into a file that is not Markdown"
                ));
                continue;
            }
            let md = std::fs::read_to_string(&file).unwrap();
            if !anchors(&md).iter().any(|a| a == frag) {
                bad.push(format!("{name}:{n}: {target}: no heading #{frag} there"));
            }
        }
    }
    assert!(checked > 50, "found only {checked} relative links");
    assert!(
        bad.is_empty(),
        "links that lead nowhere:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_chapter_of_the_book_is_in_its_summary_and_every_entry_exists() {
    let docs = repo().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = link_targets(&summary).into_iter().map(|(_, t)| t).collect();
    for t in &listed {
        assert!(
            docs.join(t).is_file(),
            "SUMMARY.md lists {t}, which does not exist"
        );
    }
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&docs).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.ends_with(".md") && name != "SUMMARY.md" && !listed.contains(&name) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "chapters not in docs/SUMMARY.md: {missing:?}"
    );
}

#[test]
fn the_readme_stays_short() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; move detail into docs/"
    );
}

#[test]
fn the_link_check_finds_a_broken_link_and_a_broken_anchor() {
    let md = "# Top\n\nSee [a](#top), [b](#nowhere) and `[c](#code)`.\n\n```\n[d](#fence)\n```\n[e]: other.md#x\n";
    let targets: Vec<String> = link_targets(md).into_iter().map(|(_, t)| t).collect();
    assert_eq!(targets, ["other.md#x", "#top", "#nowhere"]);
    assert_eq!(
        anchors("# A b\n## A b\n### `x` & y!\n"),
        ["a-b", "a-b-1", "x--y"]
    );
}
