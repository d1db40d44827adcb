//! Unit tests for every rule of agent-bundle's `parseOperatorEnv` grammar (and
//! its comparison with Node `dotenv` and python-dotenv), with the deliberate
//! differences of docs/dotenv.md#deliberate-differences, and the writer.

use super::*;

fn kv(text: &str) -> Vec<(String, String)> {
    parse(text)
        .entries
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

fn get(text: &str, key: &str) -> Option<String> {
    parse(text)
        .entries
        .into_iter()
        .find(|e| e.key == key)
        .map(|e| e.value)
}

fn one(text: &str) -> String {
    let p = parse(text);
    assert_eq!(p.entries.len(), 1, "{text:?} gave {:?}", p.entries);
    p.entries[0].value.clone()
}

fn errors(text: &str) -> Vec<u32> {
    parse(text)
        .diagnostics
        .into_iter()
        .filter(|d| d.is_error)
        .map(|d| d.line)
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

// ---- 2.1 decoding and line splitting --------------------------------------

#[test]
fn crlf_and_lone_cr_become_lf() {
    assert_eq!(kv("A=1\rB=2"), pairs(&[("A", "1"), ("B", "2")]));
    let p = parse("A=1\r\r\nB=2");
    assert_eq!(
        p.entries,
        vec![
            Entry {
                key: "A".into(),
                value: "1".into(),
                line: 1
            },
            Entry {
                key: "B".into(),
                value: "2".into(),
                line: 3
            },
        ]
    );
    assert_eq!(kv("A=1\r\nB=2\r\n"), pairs(&[("A", "1"), ("B", "2")]));
}

#[test]
fn lossy_utf8_and_bom() {
    let p = parse_bytes(b"A=x\xffy\nB=\xe2\x82\n");
    assert_eq!(
        p.entries
            .iter()
            .map(|e| e.value.as_str())
            .collect::<Vec<_>>(),
        ["x\u{FFFD}y", "\u{FFFD}"]
    );
    assert_eq!(kv("\u{FEFF}BOM=1"), pairs(&[("BOM", "1")]));
}

// ---- 2.2 JavaScript whitespace ---------------------------------------------

#[test]
fn js_whitespace_around_key_and_value() {
    assert_eq!(one("\u{A0}\tA\u{3000}=\u{FEFF} v \u{2000}"), "v");
    assert_eq!(one("export\u{A0}A=1"), "1");
    assert_eq!(get("export\tA=1", "A").as_deref(), Some("1"));
    // NEL is not JS whitespace: it is neither trimmed nor a comment start.
    assert_eq!(one("A=\u{85}x\u{85}"), "\u{85}x\u{85}");
    assert_eq!(one("A=x\u{85}#c"), "x\u{85}#c");
    // U+180E is not whitespace either.
    assert_eq!(one("A=x\u{180E}#c"), "x\u{180E}#c");
}

// ---- 2.3 skipped lines ------------------------------------------------------

#[test]
fn blank_comment_and_invalid_lines_are_skipped() {
    let p = parse("\n   \n# c\n  # indented\nA=1\nnot a line\nA\n");
    assert_eq!(p.entries.len(), 1);
    assert_eq!(p.entries[0].value, "1");
    // Ignored lines are errors for `check`; blank and comment lines are not.
    assert_eq!(
        errors("\n   \n# c\n  # indented\nA=1\nnot a line\nA\n"),
        [6, 7]
    );
}

#[test]
fn ignored_line_keeps_earlier_value() {
    assert_eq!(kv("A=1\nA\nexport A\n"), pairs(&[("A", "1")]));
}

// ---- 2.4 the assignment form ------------------------------------------------

#[test]
fn key_rules() {
    assert_eq!(kv("lower=1"), pairs(&[("lower", "1")]));
    assert_eq!(kv("_x9=1"), pairs(&[("_x9", "1")]));
    for bad in [
        "9BAD=1",
        "BAD-KEY=1",
        "a.b=1",
        "KÉY=1",
        "A B=1",
        "EXPORT A=1",
        "K: v",
        "=value",
        "export FOO",
        "A",
        "-A=1",
        "export A B=1",
    ] {
        let p = parse(bad);
        assert!(p.entries.is_empty(), "{bad:?} gave {:?}", p.entries);
        assert_eq!(errors(bad), [1], "{bad:?}");
    }
    assert_eq!(kv("a=1\nA=2"), pairs(&[("a", "1"), ("A", "2")]));
}

#[test]
fn export_prefix() {
    assert_eq!(kv("export A=1"), pairs(&[("A", "1")]));
    assert_eq!(kv("export   A  =  1"), pairs(&[("A", "1")]));
    assert_eq!(kv("exportX=1"), pairs(&[("exportX", "1")]));
    assert_eq!(kv("export =1"), pairs(&[("export", "1")]));
    assert_eq!(kv("export=1"), pairs(&[("export", "1")]));
    assert_eq!(kv("export export=1"), pairs(&[("export", "1")]));
    assert_eq!(kv("  export B=2  "), pairs(&[("B", "2")]));
}

#[test]
fn line_separator_inside_is_parsed_normally() {
    // Deliberate difference: the reference drops these lines.
    assert_eq!(one("A=x\u{2028}y"), "x\u{2028}y");
    assert_eq!(one("A=\"x\u{2029}y\""), "x\u{2029}y");
    // They are still whitespace: trimmed at the ends, and a comment start.
    assert_eq!(one("A=x\u{2028}"), "x");
    assert_eq!(one("A=x\u{2028}#c"), "x");
}

// ---- 2.5 / 2.6 quoted values --------------------------------------------------

#[test]
fn quoted_with_comment_trailer() {
    assert_eq!(one("TOKEN=\"secret\" # note"), "secret");
    assert_eq!(one("A=\"x\"#c"), "x");
    assert_eq!(one("A=\"x\"\t#c"), "x");
    assert_eq!(one("A='a' #"), "a");
    assert_eq!(one("A=`a`#c"), "a");
    assert_eq!(one("A=\"x\"   "), "x");
    assert_eq!(one("A=\"\""), "");
    assert_eq!(one("A=''"), "");
}

#[test]
fn quoted_with_other_trailer_is_literal() {
    assert_eq!(one("T=\"x\" not-a-comment"), "\"x\" not-a-comment");
    assert_eq!(one("J=\"a\":\"b\""), "\"a\":\"b\"");
    assert_eq!(one("K=\"a\" \"b\""), "\"a\" \"b\"");
    assert_eq!(one("K=\"a\"b\""), "\"a\"b\"");
    // The literal text still goes through the unquoted rule.
    assert_eq!(one("T='x' y #c"), "'x' y");
    let p = parse("T=\"x\" y");
    assert_eq!(p.diagnostics.len(), 1);
    assert!(!p.diagnostics[0].is_error);
    assert!(p.diagnostics[0]
        .message
        .contains("text after the closing quote"));
}

#[test]
fn whitespace_and_hash_are_literal_inside_quotes() {
    assert_eq!(one("A=\" a # b \""), " a # b ");
    assert_eq!(one("A=' a #b '"), " a #b ");
    assert_eq!(one("A=` #a `"), " #a ");
}

#[test]
fn backslash_skips_next_for_every_quote_kind() {
    assert_eq!(one("S='it\\'s'"), "it\\'s");
    assert_eq!(one("B=`a\\`b`"), "a\\`b");
    assert_eq!(one("D=\"a\\\"b\""), "a\"b");
    // `\\` is a skipped pair: the quote after it closes.
    assert_eq!(one("D=\"a\\\\\""), "a\\\\");
    assert_eq!(one("S='a\\\\'"), "a\\\\");
}

#[test]
fn double_quote_decoding() {
    assert_eq!(one(r#"D="two \"q\"""#), "two \"q\"");
    assert_eq!(one(r#"D="a\tb""#), "a\\tb");
    assert_eq!(one(r#"D="a\nb""#), "a\nb");
    assert_eq!(one(r#"D="a\rb""#), "a\rb");
    assert_eq!(one(r#"D="a\\nb""#), "a\\\nb");
    assert_eq!(one(r#"D="a\\""#), "a\\\\");
    assert_eq!(one(r#"D="\x\'\\""#), "\\x\\'\\\\");
    assert_eq!(one(r#"D="é\n\u""#), "é\n\\u");
}

#[test]
fn single_and_backtick_are_verbatim() {
    assert_eq!(one(r"S='a\nb\\'"), "a\\nb\\\\");
    assert_eq!(one(r"B=`a\nb`"), "a\\nb");
    assert_eq!(one("B=`a`"), "a");
}

#[test]
fn multi_line_double_and_single() {
    // Opening line's trailing whitespace is lost; continuation lines keep theirs.
    assert_eq!(one("M=\"a   \n   b   \n  c\""), "a\n   b   \n  c");
    assert_eq!(one("M='x\n y '"), "x\n y ");
    assert_eq!(one("M=\"a\r\nb\""), "a\nb");
    assert_eq!(one("M=\"a\\n\nb\""), "a\n\nb");
    // A backslash at the end of a line skips the joining LF.
    assert_eq!(one("M=\"x\\\ny\""), "x\\\ny");
    assert_eq!(one("M='x\\\n'"), "x\\\n");
    let p = parse("M=\"a\nb\"\nN=2\n");
    assert_eq!(
        p.entries,
        vec![
            Entry {
                key: "M".into(),
                value: "a\nb".into(),
                line: 1
            },
            Entry {
                key: "N".into(),
                value: "2".into(),
                line: 3
            },
        ]
    );
    assert!(p.diagnostics.is_empty());
}

#[test]
fn consumed_lines_are_not_assignments() {
    assert_eq!(
        kv("M=\"a\nX=1\nb\" # c\nY=2"),
        pairs(&[("M", "a\nX=1\nb"), ("Y", "2")])
    );
}

#[test]
fn multi_line_with_trailer_keeps_raw_text() {
    assert_eq!(
        one("K=\"multi\nline\" trailing"),
        "\"multi\nline\" trailing"
    );
    assert_eq!(
        kv("K=\"multi  \n  line\" trailing #c\nZ=1"),
        pairs(&[("K", "\"multi\n  line\" trailing"), ("Z", "1")])
    );
}

#[test]
fn backtick_never_spans_lines() {
    let p = parse("B=`first\nsecond`\nC=1");
    assert_eq!(
        p.entries
            .iter()
            .map(|e| (&*e.key, &*e.value))
            .collect::<Vec<_>>(),
        [("B", "`first"), ("C", "1")]
    );
    let errs: Vec<_> = p.diagnostics.iter().filter(|d| d.is_error).collect();
    assert_eq!(errs.len(), 2); // unterminated backtick, then the ignored line
    assert_eq!(errs[0].line, 1);
    assert!(errs[0].message.contains("unterminated backtick"));
    assert_eq!(errs[1].line, 2);
}

#[test]
fn unterminated_quote_swallows_rest_of_file() {
    let p = parse("OPEN=\"x\nNEXT=1\n");
    assert_eq!(
        p.entries
            .iter()
            .map(|e| (&*e.key, &*e.value))
            .collect::<Vec<_>>(),
        [("OPEN", "\"x\nNEXT=1")]
    );
    assert_eq!(p.diagnostics.len(), 1);
    let d = &p.diagnostics[0];
    assert!(d.is_error);
    assert_eq!(d.line, 1);
    assert!(
        d.message.contains("unterminated double quote") && d.message.contains("swallowed 1 line "),
        "{}",
        d.message
    );
    // A later comment line cuts the value (LF counts as whitespace).
    assert_eq!(kv("OPEN=\"abc\n# c\nB=1"), pairs(&[("OPEN", "\"abc")]));
    assert_eq!(kv("OPEN=\"abc\n  # c\nB=1"), pairs(&[("OPEN", "\"abc")]));
    // At the end of the file.
    assert_eq!(one("E=\"x\\\""), "\"x\\\"");
    for text in ["E=\"x", "E=\"x\n", "E='x"] {
        let p = parse(text);
        assert_eq!(p.diagnostics.len(), 1, "{text:?}");
        assert!(p.diagnostics[0].is_error);
        assert!(
            p.diagnostics[0].message.contains("swallowed 0 lines"),
            "{text:?}: {}",
            p.diagnostics[0].message
        );
    }
    assert_eq!(one("E='x"), "'x");
    let p = parse("A=1\nS='a\\' # c\nS3='x'\nT=1\nU=2");
    assert_eq!(
        p.entries
            .iter()
            .map(|e| (&*e.key, &*e.value))
            .collect::<Vec<_>>(),
        [("A", "1"), ("S", "'a\\'"), ("T", "1"), ("U", "2")]
    );
    // S closes at S3's quote: trailing text (a warning), and since then a
    // line that looks like an assignment (S3) was swallowed: an error
    // naming it (issue 10).
    let d: Vec<_> = p.diagnostics.iter().filter(|d| d.is_error).collect();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].kind, super::DiagnosticKind::Swallowed);
    assert_eq!(
        d[0].message,
        "single-quoted value of S spans 2 lines and swallowed 1 line that looks like \
         an assignment (S3); is a closing quote missing?"
    );
    let p = parse("A='never\nB=1\nC=2\n\n");
    assert_eq!(p.diagnostics[0].line, 1);
    assert!(p.diagnostics[0].message.contains("swallowed 3 lines"));
    assert!(p.diagnostics[0]
        .message
        .contains("2 assignments on them lost"));
}

// ---- 2.7 the unquoted rule ---------------------------------------------------

#[test]
fn unquoted_rule() {
    for (text, want) in [
        ("H=abc#def", "abc#def"),
        ("H=#x", "#x"),
        ("H= #x", "#x"),
        ("K=   # only comment", "# only comment"),
        ("K=#", "#"),
        ("K=a #b #c", "a"),
        ("K=a\t#b", "a"),
        ("K=a\u{A0}#b", "a"),
        ("K=a   b", "a   b"),
        ("K=a\\nb", "a\\nb"),
        ("C=${A}", "${A}"),
        ("C=$A", "$A"),
        ("K=", ""),
        ("K=   ", ""),
        ("K = v", "v"),
        ("K=a=b", "a=b"),
        ("K=a # b # c", "a"),
    ] {
        assert_eq!(one(text), want, "{text:?}");
    }
    assert_eq!(get("D=\"${A}\"", "D").as_deref(), Some("${A}"));
}

// ---- 2.8 the result map -------------------------------------------------------

#[test]
fn later_wins_first_occurrence_order() {
    let p = parse("B=1\nA=2\nB=3\n");
    assert_eq!(
        p.entries,
        vec![
            Entry {
                key: "B".into(),
                value: "3".into(),
                line: 3
            },
            Entry {
                key: "A".into(),
                value: "2".into(),
                line: 2
            },
        ]
    );
    let d = &p.diagnostics;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].line, 3);
    assert!(!d[0].is_error);
    assert!(d[0].message.contains("duplicate key B"), "{}", d[0].message);
    assert!(d[0].message.contains("line 1"), "{}", d[0].message);
}

/// Large inputs take the radix-sort path for duplicates: compare with a
/// naive model (first-occurrence order, last value and line win, one
/// warning per repeat naming the previous line).
#[test]
fn many_duplicates_match_naive_model() {
    for (lines, pool) in [(3000u64, 700u64), (40, 7), (5000, 5000)] {
        let mut text = String::new();
        let mut model: indexmap::IndexMap<String, (String, u32)> = indexmap::IndexMap::new();
        let mut dups = Vec::new();
        let mut seed = 12345u64;
        for n in 1..=lines {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = format!("K{}", (seed >> 33) % pool);
            let v = format!("v{n}");
            text.push_str(&format!("{k}={v}\n"));
            if let Some((_, prev)) = model.get(&k) {
                dups.push((n as u32, *prev));
            }
            match model.get_mut(&k) {
                Some(e) => *e = (v, n as u32),
                None => {
                    model.insert(k, (v, n as u32));
                }
            }
        }
        let p = parse(&text);
        let want: Vec<Entry> = model
            .into_iter()
            .map(|(key, (value, line))| Entry { key, value, line })
            .collect();
        assert_eq!(p.entries, want);
        let got: Vec<(u32, String)> = p
            .diagnostics
            .iter()
            .map(|d| (d.line, d.message.clone()))
            .collect();
        assert_eq!(got.len(), dups.len());
        for ((line, msg), (want_line, prev)) in got.iter().zip(&dups) {
            assert_eq!(line, want_line);
            assert!(msg.contains(&format!("earlier on line {prev})")), "{msg}");
        }
    }
}

#[test]
fn diagnostics_are_capped_with_a_count() {
    let max = parser::MAX_DIAGNOSTICS;
    // Warnings only beyond the cap: the summary is a warning.
    let text: String = (0..max + 5).map(|_| "A=1\n").collect();
    let p = parse(&text);
    assert_eq!(p.diagnostics.len(), max + 1);
    let last = p.diagnostics.last().unwrap();
    assert!(!last.is_error);
    assert!(
        last.message
            .contains("4 more not listed (0 of them errors)"),
        "{}",
        last.message
    );
    assert_eq!(last.line as usize, max + 2);
    // Errors beyond the cap keep `check` failing; errors found by the pass
    // are kept in preference to duplicate warnings.
    let text: String = ["A=1\n", "A=2\n"]
        .into_iter()
        .chain((0..max + 3).map(|_| "bad\n"))
        .collect();
    let p = parse(&text);
    assert_eq!(p.diagnostics.len(), max + 1);
    assert!(p.diagnostics[..max].iter().all(|d| d.is_error));
    let last = p.diagnostics.last().unwrap();
    assert!(last.is_error, "{}", last.message);
    assert!(
        last.message
            .contains("4 more not listed (3 of them errors)"),
        "{}",
        last.message
    );
    assert_eq!(last.line, 2);
}

#[test]
fn proto_is_an_ordinary_key() {
    assert_eq!(
        kv("__proto__=x\nconstructor=y"),
        pairs(&[("__proto__", "x"), ("constructor", "y")])
    );
}

#[test]
fn nul_cuts_value() {
    assert_eq!(one("A=x\0y"), "x");
    assert_eq!(one("A=\"a\0b\" # c"), "a");
    assert_eq!(one("A=\0"), "");
    let p = parse("A=x\0secret");
    assert!(p.diagnostics.iter().all(|d| !d.is_error));
}

// ---- comparison with Node dotenv and python-dotenv: agent-bundle's column ----

#[test]
fn reference_column_of_comparison_table() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("H=abc#def", &[("H", "abc#def")]),
        ("D=\"two \\\"q\\\"\"", &[("D", "two \"q\"")]),
        ("S='a\\' # c\nS3='x'", &[("S", "'a\\'")]),
        ("B=`a`", &[("B", "a")]),
        ("9BAD=1\nBAD-KEY=1\na.b=1\nKÉY=1", &[]),
        ("K: v", &[]),
        ("A=0\nexport FOO\nA", &[("A", "0")]),
        ("export =1", &[("export", "1")]),
        ("OPEN=\"x\nNEXT=1", &[("OPEN", "\"x\nNEXT=1")]),
        ("OPEN=\"abc\n# c\nB=1", &[("OPEN", "\"abc")]),
        (
            "K=\"multi\nline\" trailing",
            &[("K", "\"multi\nline\" trailing")],
        ),
        ("T=\"x\" not-a-comment", &[("T", "\"x\" not-a-comment")]),
        ("E=\"x\\\"", &[("E", "\"x\\\"")]),
        ("M=\"a   \nb\"", &[("M", "a\nb")]),
        ("M=\"a\r\nb\"", &[("M", "a\nb")]),
        ("\u{FEFF}BOM=1", &[("BOM", "1")]),
        ("C=${A}\nD=\"${A}\"", &[("C", "${A}"), ("D", "${A}")]),
        ("T=a\t#c\nN=b\u{A0}#c", &[("T", "a"), ("N", "b")]),
    ];
    for (text, want) in cases {
        assert_eq!(kv(text), pairs(want), "{text:?}");
    }
}

// ---- diagnostics never contain values ----------------------------------------

#[test]
fn diagnostics_never_contain_values() {
    let text = "\
GOOD=canary-good-1
canary-bare-2
9canary=canary-3
K: canary-4
T=\"canary-5\" canary-6
B=`canary-7
GOOD=\"canary-8\"
U=\"canary-9
canary-10
";
    let p = parse(text);
    assert!(p.diagnostics.len() >= 6, "{:?}", p.diagnostics);
    for d in &p.diagnostics {
        assert!(!d.message.contains("canary"), "{}", d.message);
        assert!(
            !d.message.starts_with("line "),
            "number is in the line field"
        );
    }
}

#[test]
fn diagnostic_lines_are_the_assignment_lines() {
    let p = parse("A=1\n\nbad\nM=\"x\ny\"\nT=\"v\" t\nA=2\nU='z\n\nq\n");
    let got: Vec<_> = p.diagnostics.iter().map(|d| (d.line, d.is_error)).collect();
    assert_eq!(got, [(3, true), (6, false), (7, false), (8, true)]);
    assert!(p.diagnostics[3].message.contains("swallowed 2 lines"));
}

// ---- writer ------------------------------------------------------------------

mod writer {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(v: &str) -> bool {
        match write_value("K", v) {
            Some(line) => {
                assert!(line.starts_with("K="), "{line:?}");
                let p = parse(&format!("{line}\nZ=1\n"));
                assert_eq!(
                    p.entries
                        .iter()
                        .map(|e| (&*e.key, &*e.value))
                        .collect::<Vec<_>>(),
                    [("K", v), ("Z", "1")],
                    "{line:?}"
                );
                true
            }
            None => false,
        }
    }

    const ALPHABET: &[char] = &[
        'a', 'n', 'r', ' ', '\t', '#', '"', '\'', '`', '\\', '\n', '\r', '$', '=', '\u{2028}',
        '\u{A0}', '\u{FEFF}', '\u{85}', 'é', '\0',
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::collection::vec(proptest::sample::select(ALPHABET), 0..14)
                .prop_map(|v| v.into_iter().collect::<String>()),
            any::<String>(),
        ]
    }

    /// Why `write_value` may refuse, asked of the parser rather than of the
    /// writer's rules: no simple form of `v` (unquoted, `'v'`, `` `v` ``, or
    /// `"v"` with LF, CR and `"` escaped and nothing else), followed by
    /// another line, reads back as exactly `v` and that line. NUL is the one
    /// refusal the parser cannot show (it cuts a value there).
    fn refusal_is_justified(v: &str) -> bool {
        if v.contains('\0') {
            return true;
        }
        let escaped = v
            .replace('"', "\\\"")
            .replace('\n', "\\n")
            .replace('\r', "\\r");
        let forms = [
            v.to_owned(),
            format!("'{v}'"),
            format!("`{v}`"),
            format!("\"{escaped}\""),
        ];
        !forms
            .iter()
            .any(|raw| kv(&format!("K={raw}\nZ=1\n")) == pairs(&[("K", v), ("Z", "1")]))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn written_values_read_back(v in value()) {
            if !roundtrip(&v) {
                prop_assert!(refusal_is_justified(&v), "refused {:?}", v);
            }
        }

        #[test]
        fn written_lines_compose(vs in proptest::collection::vec(value(), 1..6)) {
            let mut text = String::new();
            let mut want = Vec::new();
            for (i, v) in vs.iter().enumerate() {
                let k = format!("K{i}");
                if let Some(line) = write_value(&k, v) {
                    text.push_str(&line);
                    text.push('\n');
                    want.push((k, v.clone()));
                }
            }
            prop_assert_eq!(kv(&text), want);
        }

        #[test]
        fn no_backslash_always_writable(v in "[^\\\\\\x00]*") {
            prop_assert!(roundtrip(&v), "{:?}", v);
        }

        #[test]
        fn no_single_quote_one_line_always_writable(v in "[^'\\r\\n\\x00]*[^'\\r\\n\\x00\\\\]") {
            prop_assert!(roundtrip(&v), "{:?}", v);
        }

        #[test]
        fn printable_ascii_refusals_are_justified(v in "[ -~]*") {
            if !roundtrip(&v) {
                prop_assert!(refusal_is_justified(&v), "{:?}", v);
            }
        }
    }

    #[test]
    fn simple_classes_are_accepted() {
        for v in [
            "",
            "plain",
            " leading and trailing ",
            "a #b",
            "#x",
            "'",
            "\"",
            "`",
            "it's \"quoted\"",
            "multi\nline",
            "trailing \nspace",
            "cr\rlf\r\n",
            "back\\slash",
            "ends\\",
            "\\n literal",
            "$HOME ${X}",
            "\u{2028}\u{FEFF}\u{A0}",
            "\\\"",
        ] {
            assert!(roundtrip(v), "{v:?}");
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(write_value("K", "a\0b"), None);
        assert_eq!(write_value("9K", "a"), None);
        assert_eq!(write_value("", "a"), None);
        assert_eq!(write_value("K-1", "a"), None);
        // `'`, backslash-n and LF together: no form can carry it.
        assert_eq!(write_value("K", "'\\n\n"), None);
        // CR needs double quotes; backslash-n rules them out.
        assert_eq!(write_value("K", "\r\\n"), None);
    }

    /// The oracle itself: it finds the form for a value that only `'…'`
    /// carries (LF, backslash, n), and none for the refusals above.
    #[test]
    fn oracle_knows_a_writable_value() {
        assert!(!refusal_is_justified("\n\\n"));
        assert!(refusal_is_justified("'\\n\n"));
        assert!(refusal_is_justified("\r\\n"));
    }

    /// Bounded completeness: every value of up to 3 characters over a small
    /// alphabet that *some* self-contained line `K=<raw>` (raw up to 6
    /// characters) produces, `write_value` can write too.
    #[test]
    fn refuses_only_when_needed_bounded() {
        const A: &[char] = &['a', 'n', ' ', '#', '"', '\'', '`', '\\', '\n'];
        let mut producible = std::collections::BTreeSet::new();
        let mut raw = Vec::new();
        fn rec(raw: &mut Vec<char>, depth: usize, out: &mut std::collections::BTreeSet<String>) {
            let s: String = raw.iter().collect();
            let p = parse(&format!("K={s}\nZ=1\n"));
            if p.entries.len() == 2
                && p.entries[0].key == "K"
                && p.entries[1].key == "Z"
                && p.entries[1].value == "1"
                && !p.diagnostics.iter().any(|d| d.is_error)
                && p.entries[0].value.chars().count() <= 3
            {
                out.insert(p.entries[0].value.clone());
            }
            if depth == 0 {
                return;
            }
            for &c in A {
                raw.push(c);
                rec(raw, depth - 1, out);
                raw.pop();
            }
        }
        rec(&mut raw, 6, &mut producible);
        assert!(producible.len() > 100);
        for v in &producible {
            assert!(
                write_value("K", v).is_some(),
                "producible but refused: {v:?}"
            );
        }
    }
}

// ---- differential: the optimised parser against a literal model -------------

/// A direct, slow transcription of agent-bundle's parser, step by step, with
/// the deliberate differences of docs/dotenv.md#deliberate-differences,
/// written independently of the byte-level parser: string splitting, char
/// iteration, and the three sequential `replace` calls for double quotes.
mod model {
    use super::scan::is_js_ws;

    fn js_trim(s: &str) -> &str {
        s.trim_matches(is_js_ws)
    }

    fn is_key_start(c: char) -> bool {
        c.is_ascii_alphabetic() || c == '_'
    }

    fn is_word(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_'
    }

    /// `KEY\s*=` at the start of `s`: (key, rest after `=`).
    fn key_eq(s: &str) -> Option<(&str, &str)> {
        let mut it = s.char_indices();
        let (_, c0) = it.next()?;
        if !is_key_start(c0) {
            return None;
        }
        let key_end = s
            .char_indices()
            .find(|&(_, c)| !is_word(c))
            .map_or(s.len(), |(i, _)| i);
        let after = s[key_end..].trim_start_matches(is_js_ws);
        let rest = after.strip_prefix('=')?;
        Some((&s[..key_end], rest))
    }

    fn assignment(t: &str) -> Option<(&str, &str)> {
        if let Some(after) = t.strip_prefix("export") {
            let trimmed = after.trim_start_matches(is_js_ws);
            if trimmed.len() < after.len() {
                if let Some(m) = key_eq(trimmed) {
                    return Some(m);
                }
            }
        }
        key_eq(t)
    }

    fn find_close(raw: &str, q: char) -> Option<usize> {
        let mut it = raw.char_indices().skip(1);
        while let Some((i, c)) = it.next() {
            if c == '\\' {
                it.next();
            } else if c == q {
                return Some(i);
            }
        }
        None
    }

    fn unquoted(raw: &str) -> String {
        let t = js_trim(raw);
        let chars: Vec<(usize, char)> = t.char_indices().collect();
        for w in chars.windows(2) {
            if is_js_ws(w[0].1) && w[1].1 == '#' {
                return js_trim(&t[..w[0].0]).to_string();
            }
        }
        t.to_string()
    }

    pub fn parse(text: &str) -> Vec<(String, String, u32)> {
        let norm = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines: Vec<&str> = norm.split('\n').collect();
        let mut out: indexmap::IndexMap<String, (String, u32)> = indexmap::IndexMap::new();
        let mut i = 0;
        while i < lines.len() {
            let line = (i + 1) as u32;
            let t = js_trim(lines[i]);
            if t.is_empty() || t.starts_with('#') {
                i += 1;
                continue;
            }
            let Some((key, rest)) = assignment(t) else {
                i += 1;
                continue;
            };
            let mut raw = js_trim(rest).to_string();
            let mut value = None;
            if let Some(q @ ('"' | '\'' | '`')) = raw.chars().next() {
                let mut end = find_close(&raw, q);
                while end.is_none() && q != '`' && i + 1 < lines.len() {
                    i += 1;
                    raw.push('\n');
                    raw.push_str(lines[i]);
                    end = find_close(&raw, q);
                }
                if let Some(e) = end {
                    let trailer = js_trim(&raw[e + 1..]);
                    if trailer.is_empty() || trailer.starts_with('#') {
                        let inner = &raw[1..e];
                        value = Some(if q == '"' {
                            inner
                                .replace("\\n", "\n")
                                .replace("\\r", "\r")
                                .replace("\\\"", "\"")
                        } else {
                            inner.to_string()
                        });
                    }
                }
            }
            let mut value = value.unwrap_or_else(|| unquoted(&raw));
            if let Some(p) = value.find('\0') {
                value.truncate(p);
            }
            out.insert(key.to_string(), (value, line));
            i += 1;
        }
        out.into_iter().map(|(k, (v, l))| (k, v, l)).collect()
    }
}

mod differential {
    use super::*;
    use proptest::prelude::*;

    const FRAGMENTS: &[&str] = &[
        "A",
        "b_1",
        "export",
        "export ",
        " ",
        "\t",
        "=",
        "A=",
        "B=",
        "\"",
        "'",
        "`",
        "\\",
        "#",
        " #",
        "n",
        "r",
        "x",
        "\n",
        "\n",
        "\n",
        "\r",
        "\r\n",
        "\u{2028}",
        "\u{A0}",
        "\u{85}",
        "\u{FEFF}",
        "\0",
        "é",
        "__proto__=",
        "\\\"",
        "\\n",
        "\\r",
        "\\\\",
        ":",
        "\nD=\"",
        "\nS='",
        "\nT=`",
        "\"\n",
        "'\n",
    ];

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..48)
            .prop_map(|v| v.concat())
    }

    fn ours(text: &str) -> Vec<(String, String, u32)> {
        parse(text)
            .entries
            .into_iter()
            .map(|e| (e.key, e.value, e.line))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn parser_matches_model(t in text()) {
            prop_assert_eq!(ours(&t), model::parse(&t), "input {:?}", t);
        }

        #[test]
        fn parser_matches_model_on_any_string(t in any::<String>()) {
            prop_assert_eq!(ours(&t), model::parse(&t), "input {:?}", t);
        }
    }

    #[test]
    fn model_agrees_on_the_reference_table() {
        for t in [
            "H=abc#def\nD=\"two \\\"q\\\"\"\nS='a\\' # c\nS3='x'\n",
            "OPEN=\"x\nNEXT=1",
            "M=\"a   \n   b   \n  c\"",
            "D=\"a\\\\nb\"\nE=\"x\\\"",
            "export export=1\nexport =2\nexportX=3",
        ] {
            assert_eq!(ours(t), model::parse(t), "{t:?}");
        }
    }
}
