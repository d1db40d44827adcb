//! `agentenv man [--dir DIR]`: roff man pages made from the clap
//! definitions at run time, so they cannot drift from `--help`.
//!
//! - `agentenv man` prints one page, `agentenv(1)`, holding every command.
//! - `agentenv man --dir DIR` writes one page per command: `agentenv.1`,
//!   `agentenv-env.1`, `agentenv-harness-resolve.1`, …
//!
//! clap_mangen renders the NAME, SYNOPSIS, DESCRIPTION, OPTIONS and
//! SUBCOMMANDS sections; the `after_help` text is split here into its prose
//! (NOTES) and its "Examples:" list (EXAMPLES, each command line unfilled).

use roff::{bold, roman, Roff};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(after_help = super::examples::MAN)]
pub struct ManArgs {
    /// Write one page per command into DIR (created if missing) instead of
    /// printing the page of all commands.
    #[arg(long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The command tree the pages are made from (bin names set, no `help`):
/// the completion tree, so text-parsed options list their words too.
pub fn command() -> clap::Command {
    let mut cmd = super::completions::completion_command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Visible subcommands, in definition order.
fn subcommands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set())
}

/// The file name stem of a command's page: `agentenv-harness-resolve`.
pub fn page_name(cmd: &clap::Command) -> String {
    cmd.get_bin_name()
        .unwrap_or_else(|| cmd.get_name())
        .replace(' ', "-")
}

/// One example: what it does (the `#` lines above it) and its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// What it does.
    pub about: String,
    /// The command line.
    pub line: String,
}

/// Split a command's `after_help` into the prose before "Examples:" and the
/// examples after it. Example lines are indented; `# text` lines describe
/// the next command line; a line ending in `\` continues on the next.
pub fn split_after_help(cmd: &clap::Command) -> (String, Vec<Example>) {
    let text = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let (prose, list) = match text.find("Examples:\n") {
        Some(at) => (&text[..at], &text[at + "Examples:\n".len()..]),
        None => (text.as_str(), ""),
    };
    let mut examples = Vec::new();
    let mut about = String::new();
    let mut line = String::new();
    for raw in list.lines() {
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if line.is_empty() {
            if let Some(c) = l.strip_prefix('#') {
                if !about.is_empty() {
                    about.push(' ');
                }
                about.push_str(c.trim());
                continue;
            }
        }
        if line.is_empty() {
            line.push_str(l);
        } else {
            // A continuation keeps its indentation past the list's two.
            line.push('\n');
            line.push_str(raw.strip_prefix("  ").unwrap_or(raw).trim_end());
        }
        if !l.ends_with('\\') {
            examples.push(Example {
                about: std::mem::take(&mut about),
                line: std::mem::take(&mut line),
            });
        }
    }
    (prose.trim_end().to_string(), examples)
}

/// Every visible command, depth first, the root first.
pub fn all_commands(root: &clap::Command) -> Vec<&clap::Command> {
    fn walk<'a>(c: &'a clap::Command, out: &mut Vec<&'a clap::Command>) {
        out.push(c);
        for s in subcommands(c) {
            walk(s, out);
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out
}

/// A clap_mangen section as roff text without the preamble every rendering
/// repeats.
fn section(
    cmd: &clap::Command,
    render: impl Fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>,
) -> String {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    render(&man, &mut buf).expect("writing to a Vec");
    let text = String::from_utf8(buf).expect("clap_mangen writes UTF-8");
    let preamble = Roff::new().render();
    text.strip_prefix(&preamble).unwrap_or(&text).to_string()
}

/// The `.TH` line and the apostrophe preamble.
fn title(cmd: &clap::Command) -> String {
    let version = cmd.get_version().unwrap_or_default();
    let man = clap_mangen::Man::new(cmd.clone())
        .title(page_name(cmd).to_uppercase())
        .source(format!("agentenv {version}"))
        .manual("User Commands");
    let mut buf = Vec::new();
    man.render_title(&mut buf).expect("writing to a Vec");
    String::from_utf8(buf).expect("clap_mangen writes UTF-8")
}

/// Roff for the prose of `after_help`: paragraphs filled, indented lines
/// kept as they are.
fn prose_roff(prose: &str) -> String {
    let mut r = Roff::new();
    let mut literal = false;
    for line in prose.lines() {
        if line.trim().is_empty() {
            if literal {
                r.control("fi", []);
                literal = false;
            }
            r.control("PP", []);
        } else if line.starts_with("  ") {
            if !literal {
                r.control("nf", []);
                literal = true;
            }
            r.text([roman(line)]);
        } else {
            if literal {
                r.control("fi", []);
                literal = false;
            }
            r.text([roman(line)]);
        }
    }
    if literal {
        r.control("fi", []);
    }
    strip_preamble(r.render())
}

/// Roff for an example list: the description as a paragraph, the command
/// line indented and unfilled (so it can be copied as it is).
fn examples_roff(examples: &[Example]) -> String {
    let mut r = Roff::new();
    for ex in examples {
        r.control("PP", []);
        if !ex.about.is_empty() {
            r.text([roman(&ex.about)]);
            r.control("PP", []);
        }
        r.control("RS", ["4"]);
        r.control("nf", []);
        for l in ex.line.lines() {
            r.text([bold(l)]);
        }
        r.control("fi", []);
        r.control("RE", []);
    }
    strip_preamble(r.render())
}

fn strip_preamble(text: String) -> String {
    let preamble = Roff::new().render();
    text.strip_prefix(&preamble).unwrap_or(&text).to_string()
}

/// Replace each `.SH X` line of a clap_mangen section by a run-in heading
/// for use inside a `.SS` (the one-page form).
fn demote(section: &str) -> String {
    let mut out = String::new();
    for line in section.lines() {
        match line.strip_prefix(".SH ") {
            Some(h) => {
                let h = h.trim_matches('"');
                let mut label = h.to_lowercase();
                if let Some(first) = label.get(..1) {
                    label = first.to_uppercase() + &label[1..];
                }
                out.push_str(&strip_preamble(
                    Roff::new()
                        .control("PP", [])
                        .text([bold(format!("{label}:"))])
                        .render(),
                ));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Characters outside ASCII as groff's `\[uXXXX]`, so that a page renders
/// the same without a UTF-8 input filter (groff without `-k`, mandoc).
fn ascii(text: String) -> String {
    if text.is_ascii() {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", c as u32));
        }
    }
    out
}

/// The page of one command (the `--dir` form).
pub fn page(cmd: &clap::Command) -> String {
    ascii(page_body(cmd))
}

fn page_body(cmd: &clap::Command) -> String {
    let mut out = title(cmd);
    out.push_str(&section(cmd, |m, w| m.render_name_section(w)));
    out.push_str(&section(cmd, |m, w| m.render_synopsis_section(w)));
    out.push_str(&section(cmd, |m, w| m.render_description_section(w)));
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        out.push_str(&section(cmd, |m, w| m.render_options_section(w)));
    }
    if subcommands(cmd).next().is_some() {
        out.push_str(&section(cmd, |m, w| m.render_subcommands_section(w)));
    }
    let (prose, examples) = split_after_help(cmd);
    if !prose.is_empty() {
        out.push_str(".SH NOTES\n");
        out.push_str(&prose_roff(&prose));
    }
    if !examples.is_empty() {
        out.push_str(".SH EXAMPLES\n");
        out.push_str(&examples_roff(&examples));
    }
    out.push_str(&see_also(cmd));
    out
}

fn see_also(cmd: &clap::Command) -> String {
    let bin = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let parent = match bin.rsplit_once(' ') {
        Some((p, _)) => p.replace(' ', "-"),
        None => return String::new(),
    };
    strip_preamble(
        Roff::new()
            .control("SH", ["SEE ALSO"])
            .text([bold(parent), roman("(1)")])
            .render(),
    )
}

/// The page of `agentenv` holding every command (the default form).
pub fn page_all(root: &clap::Command) -> String {
    let mut out = page_body(root);
    out.push_str(".SH COMMANDS\n");
    for cmd in all_commands(root).into_iter().skip(1) {
        let bin = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
        out.push_str(&strip_preamble(Roff::new().control("SS", [bin]).render()));
        let about = section(cmd, |m, w| m.render_description_section(w));
        out.push_str(about.strip_prefix(".SH DESCRIPTION\n").unwrap_or(&about));
        out.push_str(&demote(&section(cmd, |m, w| m.render_synopsis_section(w))));
        if cmd.get_arguments().any(|a| !a.is_hide_set()) {
            out.push_str(&demote(&section(cmd, |m, w| m.render_options_section(w))));
        }
        let (prose, examples) = split_after_help(cmd);
        if !prose.is_empty() {
            out.push_str(".PP\n");
            out.push_str(&prose_roff(&prose));
        }
        if !examples.is_empty() {
            out.push_str(&strip_preamble(
                Roff::new()
                    .control("PP", [])
                    .text([bold("Examples:")])
                    .render(),
            ));
            out.push_str(&examples_roff(&examples));
        }
    }
    ascii(out)
}

fn write_pages(root: &clap::Command, dir: &Path) -> Result<usize, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("{}: {}", dir.display(), crate::fsutil::io_kind(&e)))?;
    let mut n = 0;
    for cmd in all_commands(root) {
        let path = dir.join(format!("{}.1", page_name(cmd)));
        crate::fsutil::write_atomic(
            &path,
            page(cmd).as_bytes(),
            crate::fsutil::Mode::KeepOrUmask,
            false,
        )
        .map_err(|e| format!("{}: {}", path.display(), crate::fsutil::io_kind(&e)))?;
        n += 1;
    }
    Ok(n)
}

pub fn run(args: ManArgs) -> super::Exit {
    let root = command();
    match args.dir {
        None => super::print(page_all(&root).as_bytes()),
        Some(dir) => {
            let n = write_pages(&root, &dir).map_err(super::Failure::runtime)?;
            crate::info!("wrote {n} pages to {}", dir.display());
            Ok(0)
        }
    }
}
