//! `pass:PATH`: the standard Unix password manager, `pass show PATH`, its
//! first line (as `pass -c` copies it). One call per distinct path.

use super::{Ctx, Outcome, Provider, Ref};

pub(crate) struct Pass;

fn path(r: &Ref) -> &str {
    match r {
        Ref::Pass(p) => p,
        _ => unreachable!("pass provider given another scheme"),
    }
}

impl Provider for Pass {
    fn resolve(&self, refs: &[&Ref], ctx: &Ctx<'_>) -> Vec<Outcome> {
        let mut done: Vec<(&str, Outcome)> = Vec::new();
        refs.iter()
            .map(|r| {
                let p = path(r);
                if let Some((_, o)) = done.iter().find(|(q, _)| *q == p) {
                    return o.clone();
                }
                let mut cmd = ctx.command("pass");
                cmd.args(["show", "--", p]);
                let o = ctx.run(cmd, "pass show").and_then(|out| {
                    let first = out.split(|&b| b == b'\n').next().unwrap_or(&[]);
                    if first.is_empty() {
                        Err("pass show gave an empty first line".to_string())
                    } else {
                        Ok(first.to_vec())
                    }
                });
                done.push((p, o.clone()));
                o
            })
            .collect()
    }

    fn context(&self, _r: &Ref, ctx: &Ctx<'_>) -> Vec<u8> {
        let dir = ctx
            .var("PASSWORD_STORE_DIR")
            .map(str::to_string)
            .unwrap_or_else(|| {
                ctx.home()
                    .map(|h| h.join(".password-store").display().to_string())
                    .unwrap_or_default()
            });
        dir.into_bytes()
    }

    fn backend(&self, r: &Ref, ctx: &Ctx<'_>) -> String {
        let _ = r;
        format!(
            "pass (store {})",
            String::from_utf8_lossy(&self.context(r, ctx))
        )
    }

    fn check(&self, value: &[u8]) -> Result<(), String> {
        // A load reads the first line back: a value it would not read back
        // whole is refused before pass is started.
        if value.is_empty() {
            return Err(
                "pass: the value is empty (a load reads an empty first line as no value)".into(),
            );
        }
        if value.contains(&b'\n') {
            return Err("pass: the value has a line break, and a load reads only its first line; store it with age: or vault:// instead".into());
        }
        Ok(())
    }

    fn write(&self, r: &Ref, value: &[u8], ctx: &Ctx<'_>) -> Result<(), String> {
        self.check(value)?;
        // `pass insert -m` reads the value on stdin: never in argv.
        let mut input = value.to_vec();
        input.push(b'\n');
        let mut cmd = ctx.command("pass");
        cmd.args(["insert", "--multiline", "--force", "--", path(r)]);
        super::run_with_stdin(cmd, &input, ctx.timeout, "pass insert").map(|_| ())
    }
}
