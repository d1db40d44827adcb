//! agentenv's own formats (no reference has them): `github` (the `$GITHUB_ENV`
//! file of GitHub Actions) and `docker` (the `--env-file` of `docker run`).
//! docs/render.md#agentenvs-own-formats-github-and-docker.
//!
//! Both consumers read values literally, with no quoting at all, so the only
//! question per variable is whether the consumer can get it back exactly.
//! What it cannot is left out and reported as an [`Omission`] (name and a
//! fixed reason, never the value); removals cannot be expressed in either
//! format and are reported too.
//!
//! **github**, as the runner's `SetEnvFileCommand` reads the file: it reads
//! the whole file as UTF-8, skips empty lines, and takes a line as
//! `NAME=value` when its first `=` comes before its first `<<`, else as
//! `NAME<<DELIM` followed by the value's lines up to a line that equals
//! DELIM exactly. Lines end at LF (on Windows runners also at CRLF, the CR
//! being dropped), so a value holding a CR is left out on every runner.
//! Current runners (`EnvFileKeyValuePairs`) also refuse `NODE_OPTIONS` (any
//! case) with an error annotation, so that name is left out too.
//! A one-line value is written `NAME=value`; a value with LF as a heredoc
//! whose delimiter (`AGENTENV_EOF`, then `AGENTENV_EOF_1`, …) is not a line
//! of the value (a name ending in `<` cannot start a heredoc: the runner
//! would split `NAME<<<DELIM` at its first `<<`). The delimiter is chosen
//! by looking at the value, so it needs no randomness and the output stays
//! deterministic.
//!
//! **docker**, as docker/cli's `kvfile` parser reads the file: lines end at
//! LF with one CR before it dropped, each line must be valid UTF-8 and fit
//! the 64 KiB scanner buffer (else the whole file is refused), leading
//! whitespace is stripped, lines starting with `#` are comments, the name is
//! up to the first `=` and must not contain a space or tab; the value is the
//! rest of the line, literal. An unrepresentable variable becomes the
//! comment line `# NAME omitted: not representable in a docker env-file`
//! (`# a variable omitted: …` when the name is not printable or longer
//! than 256 bytes).

use super::{Lines, Prepared};

/// A variable (or removal) a format could not carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omission {
    /// The variable's name, as bytes.
    pub name: Vec<u8>,
    /// Why, without the value: e.g. `its value holds a CR`.
    pub reason: &'static str,
}

/// The delimiter stem of the github heredoc form.
const DELIM: &str = "AGENTENV_EOF";

/// The longest line docker's scanner accepts (64 KiB buffer, newline
/// included).
pub const DOCKER_MAX_LINE: usize = 64 * 1024 - 1;

/// A name check: the test that finds the problem, and its reason.
type NameRule = (fn(&str) -> bool, &'static str);

/// What both readers refuse in a name first (not UTF-8, empty), then
/// `rules`, the first that applies, in the reader's own order.
fn name_problem(name: &[u8], rules: &[NameRule]) -> Option<&'static str> {
    let Ok(s) = std::str::from_utf8(name) else {
        return Some("its name is not UTF-8");
    };
    if s.is_empty() {
        return Some("its name is empty");
    }
    rules.iter().find(|(bad, _)| bad(s)).map(|&(_, why)| why)
}

/// Both readers drop a byte order mark at the start of the file: a name
/// that starts with one would lose it on line 1.
const BOM: NameRule = (
    |s| s.starts_with('\u{feff}'),
    "its name starts with a byte order mark",
);

/// Why the runner cannot read `name` back, if it cannot.
fn github_name_problem(name: &[u8]) -> Option<&'static str> {
    name_problem(
        name,
        &[
            (|s| s.contains(['\n', '\r']), "its name holds a line break"),
            (
                |s| s.contains('=') || s.contains("<<"),
                "its name holds '=' or '<<'",
            ),
            BOM,
            (
                |s| s.eq_ignore_ascii_case("NODE_OPTIONS"),
                "the runner refuses NODE_OPTIONS from $GITHUB_ENV",
            ),
        ],
    )
}

/// Why the runner cannot read `value` back, if it cannot.
fn github_value_problem(value: &[u8]) -> Option<&'static str> {
    match std::str::from_utf8(value) {
        Err(_) => Some("its value is not UTF-8"),
        Ok(s) if s.contains('\r') => Some("its value holds a CR"),
        Ok(_) => None,
    }
}

/// A heredoc delimiter that is not a line of `value`.
pub fn github_delimiter(value: &str) -> String {
    let taken = |d: &str| value.split('\n').any(|line| line == d);
    let mut delim = DELIM.to_string();
    let mut n = 0u64;
    while taken(&delim) {
        n += 1;
        delim = format!("{DELIM}_{n}");
    }
    delim
}

pub(crate) fn github(p: &Prepared<'_>, l: &mut Lines, omitted: &mut Vec<Omission>) {
    for (k, v) in &p.assignments {
        if let Some(reason) = github_name_problem(k).or_else(|| github_value_problem(v)) {
            omitted.push(Omission {
                name: k.to_vec(),
                reason,
            });
            continue;
        }
        // Both checked to be UTF-8 above.
        let (k, v) = (
            std::str::from_utf8(k).expect("checked"),
            std::str::from_utf8(v).expect("checked"),
        );
        if !v.contains('\n') {
            let out = l.line();
            out.push_str(k);
            out.push('=');
            out.push_str(v);
        } else if k.ends_with('<') {
            // `NAME<` + `<<DELIM`: the runner splits at the first `<<`.
            omitted.push(Omission {
                name: k.as_bytes().to_vec(),
                reason: "its name ends with '<' and its value holds LF",
            });
        } else {
            let delim = github_delimiter(v);
            let out = l.line();
            out.push_str(k);
            out.push_str("<<");
            out.push_str(&delim);
            l.line().push_str(v);
            l.line().push_str(&delim);
        }
    }
    removals(p, omitted);
}

/// Why docker/cli cannot read `name` back, if it cannot.
fn docker_name_problem(name: &[u8]) -> Option<&'static str> {
    name_problem(
        name,
        &[
            (
                |s| s.contains(crate::compat::go::is_space),
                "its name holds whitespace",
            ),
            (|s| s.starts_with('#'), "its name starts with '#'"),
            (|s| s.contains('='), "its name holds '='"),
            (|s| s.contains('\0'), "its name holds NUL"),
            BOM,
        ],
    )
}

/// Why docker/cli cannot read `value` back, if it cannot.
fn docker_value_problem(value: &[u8]) -> Option<&'static str> {
    match std::str::from_utf8(value) {
        Err(_) => Some("its value is not UTF-8"),
        Ok(s) if s.contains('\n') => Some("its value holds LF"),
        Ok(s) if s.ends_with('\r') => Some("its value ends with CR"),
        Ok(_) => None,
    }
}

pub(crate) fn docker(p: &Prepared<'_>, l: &mut Lines, omitted: &mut Vec<Omission>) {
    for (k, v) in &p.assignments {
        let mut problem = docker_name_problem(k).or_else(|| docker_value_problem(v));
        if problem.is_none() && k.len() + 1 + v.len() > DOCKER_MAX_LINE {
            problem = Some("its line is longer than docker's 64 KiB limit");
        }
        if let Some(reason) = problem {
            omitted.push(Omission {
                name: k.to_vec(),
                reason,
            });
            let out = l.line();
            out.push_str("# ");
            match std::str::from_utf8(k) {
                Ok(name)
                    if !name.is_empty()
                        && name.len() <= 256
                        && name.chars().all(super::pystr::is_printable) =>
                {
                    out.push_str(name)
                }
                _ => out.push_str("a variable"),
            }
            out.push_str(" omitted: not representable in a docker env-file");
            continue;
        }
        let out = l.line();
        out.push_str(std::str::from_utf8(k).expect("checked"));
        out.push('=');
        out.push_str(std::str::from_utf8(v).expect("checked"));
    }
    removals(p, omitted);
}

fn removals(p: &Prepared<'_>, omitted: &mut Vec<Omission>) {
    for k in &p.gone {
        omitted.push(Omission {
            name: k.to_vec(),
            reason: "it is removed, and the format cannot express a removal",
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::view;
    use super::super::{render_checked, Format, View};
    use super::*;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    fn names(o: &[Omission]) -> Vec<String> {
        o.iter()
            .map(|o| String::from_utf8_lossy(&o.name).into_owned())
            .collect()
    }

    #[test]
    fn github_one_line_and_heredoc() {
        let v = view(
            &[
                ("A", "x=y<<z"),
                ("B", "l1\nl2"),
                ("C", ""),
                ("D", " pad "),
                ("E", "a\nAGENTENV_EOF\nAGENTENV_EOF_1\n"),
            ],
            &["GONE"],
        );
        let r = render_checked(Format::Github, &v);
        assert_eq!(
            r.text,
            "A=x=y<<z\nB<<AGENTENV_EOF\nl1\nl2\nAGENTENV_EOF\nC=\nD= pad \n\
             E<<AGENTENV_EOF_2\na\nAGENTENV_EOF\nAGENTENV_EOF_1\n\nAGENTENV_EOF_2\n"
        );
        assert_eq!(names(&r.omitted), ["GONE"]);
    }

    #[test]
    fn github_leaves_out_what_the_runner_cannot_read() {
        let mut v = view(
            &[
                ("CR", "a\rb"),
                ("CRLF", "a\r\nb"),
                ("K=V", "1"),
                ("K<<D", "1"),
                ("LT<", "one line"),
                ("node_options", "--x"),
                ("LT2<", "two\nlines"),
                ("OK", "1"),
            ],
            &[],
        );
        v.assignments
            .push((OsString::from("BAD"), OsString::from_vec(b"\xff".to_vec())));
        v.assignments
            .push((OsString::from_vec(b"N\xfe".to_vec()), OsString::from("1")));
        let r = render_checked(Format::Github, &v);
        assert_eq!(r.text, "LT<=one line\nOK=1\n");
        let mut got = names(&r.omitted);
        got.sort();
        assert_eq!(
            got,
            [
                "BAD",
                "CR",
                "CRLF",
                "K<<D",
                "K=V",
                "LT2<",
                "N\u{fffd}",
                "node_options"
            ]
        );
    }

    #[test]
    fn docker_lines_and_comments() {
        let v = view(
            &[
                ("A", " x = \"q\" 'r' #"),
                ("B", "l1\nl2"),
                ("C", "ends\r"),
                ("D", "mid\rcr"),
                ("#H", "1"),
                ("S P", "1"),
                ("T\u{1} X", "1"),
                ("E", ""),
            ],
            &["GONE"],
        );
        let r = render_checked(Format::Docker, &v);
        assert_eq!(
            r.text,
            "# #H omitted: not representable in a docker env-file\n\
             A= x = \"q\" 'r' #\n\
             # B omitted: not representable in a docker env-file\n\
             # C omitted: not representable in a docker env-file\n\
             D=mid\rcr\nE=\n\
             # S P omitted: not representable in a docker env-file\n\
             # a variable omitted: not representable in a docker env-file\n"
        );
        assert_eq!(
            names(&r.omitted),
            ["#H", "B", "C", "S P", "T\u{1} X", "GONE"]
        );
    }

    #[test]
    fn docker_line_limit() {
        let fits = "x".repeat(DOCKER_MAX_LINE - 2);
        let over = "x".repeat(DOCKER_MAX_LINE - 1);
        let v = view(&[("A", &fits), ("B", &over)], &[]);
        let r = render_checked(Format::Docker, &v);
        assert!(r.text.starts_with(&format!("A={fits}\n# B omitted")));
        assert_eq!(names(&r.omitted), ["B"]);
    }

    #[test]
    fn empty() {
        for f in [Format::Github, Format::Docker] {
            let r = render_checked(f, &View::default());
            assert_eq!(r.text, "\n");
            assert!(r.omitted.is_empty());
        }
    }
}
