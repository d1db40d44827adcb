//! `op://VAULT/ITEM/FIELD`: 1Password through its CLI. All of a load's
//! `op://` references go into one `op inject` call (one unlock prompt, one
//! round trip): a template whose lines are `MARK-N {{ op://… }} MARK-N`,
//! with a mark nobody can guess, read back from `op`'s stdout between the
//! marks (so a value may hold new lines). The template holds references
//! only; the values come back on a pipe.

use super::{Ctx, Outcome, Provider, Ref};

pub(crate) struct Op;

fn text(r: &Ref) -> &str {
    match r {
        Ref::Op(t) => t,
        _ => unreachable!("op provider given another scheme"),
    }
}

fn mark() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("agentenv-{:016x}", h.finish())
}

/// The value between `<mark>-<i>:` and `:<mark>-<i>` in `out`.
fn between(out: &[u8], mark: &str, i: usize) -> Option<Vec<u8>> {
    let open = format!("{mark}-{i}:");
    let close = format!(":{mark}-{i}");
    let find = |hay: &[u8], n: &[u8]| hay.windows(n.len()).position(|w| w == n);
    let start = find(out, open.as_bytes())? + open.len();
    let len = find(&out[start..], close.as_bytes())?;
    Some(out[start..start + len].to_vec())
}

impl Provider for Op {
    fn resolve(&self, refs: &[&Ref], ctx: &Ctx<'_>) -> Vec<Outcome> {
        let mark = mark();
        let mut template = String::new();
        for (i, r) in refs.iter().enumerate() {
            template.push_str(&format!("{mark}-{i}:{{{{ {} }}}}:{mark}-{i}\n", text(r)));
        }
        let dir = match tempfile::Builder::new().prefix("agentenv-op-").tempdir() {
            Ok(d) => d,
            Err(e) => {
                let why = format!("cannot write op's template: {}", crate::fsutil::io_kind(&e));
                return vec![Err(why); refs.len()];
            }
        };
        let file = dir.path().join("template");
        if let Err(e) = std::fs::write(&file, template) {
            let why = format!("cannot write op's template: {}", crate::fsutil::io_kind(&e));
            return vec![Err(why); refs.len()];
        }
        let mut cmd = ctx.command("op");
        cmd.arg("inject").arg("--in-file").arg(&file);
        match ctx.run(cmd, "op inject") {
            Ok(out) => (0..refs.len())
                .map(|i| {
                    between(&out, &mark, i)
                        .ok_or_else(|| "op inject did not give this reference back".to_string())
                })
                .collect(),
            Err(why) => vec![Err(why); refs.len()],
        }
    }

    fn context(&self, _r: &Ref, ctx: &Ctx<'_>) -> Vec<u8> {
        ctx.var("OP_ACCOUNT").unwrap_or("").as_bytes().to_vec()
    }

    fn backend(&self, _r: &Ref, ctx: &Ctx<'_>) -> String {
        match ctx.var("OP_ACCOUNT") {
            Some(a) => format!("1Password (op, account {a})"),
            None => "1Password (op)".into(),
        }
    }

    fn write(&self, _r: &Ref, _value: &[u8], _ctx: &Ctx<'_>) -> Result<(), String> {
        Err("writing to 1Password is not supported (op item edit takes values in its arguments); store it with the 1Password app".into())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_come_back_between_their_marks() {
        let out = b"m-0:a\nb:m-0\nm-1::m-1\n";
        assert_eq!(super::between(out, "m", 0).unwrap(), b"a\nb");
        assert_eq!(super::between(out, "m", 1).unwrap(), b"");
        assert!(super::between(out, "m", 2).is_none());
    }
}
