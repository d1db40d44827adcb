//! A small pretty JSON writer for the harness outputs, whose strings are
//! bytes: each is written with the session's JSON escape rule (ASCII only,
//! an undecodable byte as the surrogate escape `\udcXX`), so a host value
//! that is not UTF-8 survives into the output.

/// A JSON value with byte strings.
pub enum J {
    Bool(bool),
    Str(Vec<u8>),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    pub fn str(s: impl AsRef<[u8]>) -> J {
        J::Str(s.as_ref().to_vec())
    }
}

fn write(out: &mut String, v: &J, indent: usize) {
    let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
    match v {
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Str(s) => crate::render::data::json_string(out, s),
        J::Arr(items) if items.is_empty() => out.push_str("[]"),
        J::Obj(items) if items.is_empty() => out.push_str("{}"),
        J::Arr(items) => {
            out.push_str("[\n");
            for (i, it) in items.iter().enumerate() {
                pad(out, indent + 2);
                write(out, it, indent + 2);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            pad(out, indent);
            out.push(']');
        }
        J::Obj(items) => {
            out.push_str("{\n");
            for (i, (k, it)) in items.iter().enumerate() {
                pad(out, indent + 2);
                crate::render::data::json_string(out, k.as_bytes());
                out.push_str(": ");
                write(out, it, indent + 2);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            pad(out, indent);
            out.push('}');
        }
    }
}

/// `v` pretty-printed (two-space indent) with a final newline.
pub fn to_string(v: &J) -> String {
    let mut out = String::new();
    write(&mut out, v, 0);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_back_and_escapes_bytes() {
        let v = J::Obj(vec![
            ("a".into(), J::str(b"x\xffy\"\n\xc3\xa9")),
            ("b".into(), J::Arr(vec![J::Bool(true), J::Arr(vec![])])),
            ("c".into(), J::Obj(vec![])),
        ]);
        let s = to_string(&v);
        assert!(s.is_ascii());
        assert!(s.contains("\\udcff"), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s.replace("\\udcff", "?")).unwrap();
        assert_eq!(back["a"], "x?y\"\né");
        assert_eq!(back["b"], serde_json::json!([true, []]));
    }
}
