//! Checks on the resolved harness (reference §1.3), the unset-variable
//! validation for braced references (§4.3) and the expander mapping (§4.2).

use super::overlays::{self, CompileError};
use super::schema::{Config, EnvMap, Harness};
use super::Error;
use crate::expand::{braced_names, expand};

/// The OIDC keys: never visible to expansion, stripped from child envs.
pub const OIDC_KEYS: [&str; 4] = [
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "FULLSEND_GCP_OIDC_URL",
    "FULLSEND_GCP_OIDC_AUTH_FILE",
];

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

/// Checks of one ForgeConfig field set; `prefix` is "" for the top level,
/// `forge.<p>.` or `overlays[i].` for blocks.
pub fn check_config(cfg: &Config, prefix: &str) -> Result<(), Error> {
    for (name, v) in [
        ("pre_script", &cfg.pre_script),
        ("post_script", &cfg.post_script),
    ] {
        if is_url(v) {
            return Err(Error::new(format!(
                "{prefix}{name} must be a local path, not a URL"
            )));
        }
    }
    for (i, f) in cfg.host_files.iter().flatten().enumerate() {
        if f.src.is_empty() {
            return Err(Error::new(format!(
                "{prefix}host_files[{i}]: src is required"
            )));
        }
        if f.dest.is_empty() {
            return Err(Error::new(format!(
                "{prefix}host_files[{i}]: dest is required"
            )));
        }
        if is_url(&f.src) {
            return Err(Error::new(format!(
                "{prefix}host_files[{i}].src must be a local path, not a URL"
            )));
        }
    }
    if let Some(vl) = &cfg.validation_loop {
        if vl.script.is_empty() {
            return Err(Error::new(format!(
                "{prefix}validation_loop.script is required when validation_loop is set"
            )));
        }
    }
    Ok(())
}

fn role_ok(r: &str) -> bool {
    let b = r.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
}

fn slug_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

/// `Validate` on the resolved harness. Messages are wrapped by the caller
/// as `invalid harness: …`.
pub fn validate(h: &Harness) -> Result<(), Error> {
    if h.agent.is_empty() {
        return Err(Error::new("agent field is required"));
    }
    if h.role.is_empty() {
        return Err(Error::new("role field is required"));
    }
    if !role_ok(&h.role) {
        return Err(Error::new("role must match ^[a-z][a-z0-9_-]*$"));
    }
    if h.role.contains("--") {
        return Err(Error::new("role must not contain \"--\""));
    }
    if !h.slug.is_empty() && !slug_ok(&h.slug) {
        return Err(Error::new("slug must match ^[a-zA-Z0-9][a-zA-Z0-9_-]*$"));
    }
    check_config(&h.cfg, "")?;
    super::forge::validate_forge_keys(h)?;
    if !h.trigger.is_empty() {
        let env = overlays::cel_env();
        match overlays::compile(&env, &h.trigger, &["event"]) {
            Ok(_) => {}
            Err(CompileError::Invalid(m)) => return Err(Error::new(format!("trigger: {m}"))),
            Err(CompileError::NotBool(t)) => {
                return Err(Error::new(format!(
                    "trigger: must evaluate to bool, got {t}"
                )))
            }
        }
    }
    Ok(())
}

/// Lookup semantics of the validation: `FULLSEND_DIR` is always set, the
/// OIDC keys are always unset, else the host decides (set-but-empty is set).
fn is_set(name: &str, host: &dyn Fn(&str) -> Option<String>) -> bool {
    if name == "FULLSEND_DIR" {
        return true;
    }
    if OIDC_KEYS.contains(&name) {
        return false;
    }
    host(name).is_some()
}

fn check_value(
    source: &str,
    value: &str,
    host: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Error> {
    for name in braced_names(value) {
        if !is_set(name, host) {
            return Err(Error::new(format!(
                "{source}: host variable {name} is not set"
            )));
        }
    }
    Ok(())
}

fn check_map(
    field: &str,
    m: &Option<EnvMap>,
    host: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Error> {
    for (k, v) in m.iter().flatten() {
        check_value(&format!("{field}[{k}]"), v, host)?;
    }
    Ok(())
}

/// `ValidateRunnerEnvWith`: every braced `${NAME}` must be set, in the
/// reference's order (keys sorted within a map). The raw value is not
/// quoted in the message (a deliberate difference: values never reach
/// stderr). Wrapped by the caller as `validating env: …`.
pub fn validate_env(h: &Harness, host: &dyn Fn(&str) -> Option<String>) -> Result<(), Error> {
    let c = &h.cfg;
    check_map("runner_env", &c.runner_env, host)?;
    for (i, f) in c.host_files.iter().flatten().enumerate() {
        if !f.optional {
            check_value(&format!("host_files[{i}].src"), &f.src, host)?;
        }
    }
    if let Some(vl) = &c.validation_loop {
        check_value("validation_loop.schema", &vl.schema, host)?;
        check_value("validation_loop.preflight_check", &vl.preflight_check, host)?;
    }
    let env = c.env.clone().unwrap_or_default();
    check_map("env.runner", &env.runner, host)?;
    check_map("env.sandbox", &env.sandbox, host)?;
    Ok(())
}

/// The expander of §4.2: `FULLSEND_DIR` → the fullsend dir, OIDC keys →
/// "", anything else → the host value or "".
pub fn expander<'a>(
    fullsend_dir: &'a str,
    host: &'a dyn Fn(&str) -> Option<String>,
) -> impl Fn(&str) -> String + 'a {
    move |name: &str| {
        if name == "FULLSEND_DIR" {
            fullsend_dir.to_string()
        } else if OIDC_KEYS.contains(&name) {
            String::new()
        } else {
            host(name).unwrap_or_default()
        }
    }
}

/// Expand the env maps and the `${`-containing validation_loop paths.
pub fn expand_harness(h: &mut Harness, map: &dyn Fn(&str) -> String) {
    let ex = |m: &mut Option<EnvMap>| {
        for v in m.iter_mut().flat_map(|m| m.values_mut()) {
            *v = expand(v, map);
        }
    };
    ex(&mut h.cfg.runner_env);
    if let Some(env) = &mut h.cfg.env {
        ex(&mut env.runner);
        ex(&mut env.sandbox);
    }
    if let Some(vl) = &mut h.cfg.validation_loop {
        for v in [&mut vl.schema, &mut vl.preflight_check] {
            if v.contains("${") {
                *v = expand(v, map);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;
    use std::path::Path;

    fn h(s: &str) -> Harness {
        parse_harness(s, Path::new("t.yaml")).unwrap()
    }

    fn host(name: &str) -> Option<String> {
        match name {
            "SET" => Some("v".into()),
            "EMPTY" => Some(String::new()),
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN" => Some("oidc".into()),
            _ => None,
        }
    }

    #[test]
    fn required_fields_and_checks() {
        let msg = |s: &str| validate(&h(s)).unwrap_err().to_string();
        assert_eq!(msg(""), "agent field is required");
        assert_eq!(msg("agent: a\n"), "role field is required");
        assert!(msg("agent: a\nrole: Bad\n").starts_with("role must match"));
        assert!(msg("agent: a\nrole: a--b\n").contains("--"));
        assert!(msg("agent: a\nrole: r\nslug: -x\n").starts_with("slug must match"));
        assert_eq!(
            msg("agent: a\nrole: r\nhost_files: [{dest: d}]\n"),
            "host_files[0]: src is required"
        );
        assert_eq!(
            msg("agent: a\nrole: r\nhost_files: [{src: s}]\n"),
            "host_files[0]: dest is required"
        );
        assert_eq!(
            msg("agent: a\nrole: r\nhost_files: [{src: 'https://x', dest: d}]\n"),
            "host_files[0].src must be a local path, not a URL"
        );
        assert_eq!(
            msg("agent: a\nrole: r\nvalidation_loop: {schema: s}\n"),
            "validation_loop.script is required when validation_loop is set"
        );
        assert!(
            msg("agent: a\nrole: r\nforge: {bogus: {}}\n").contains("unrecognized key \"bogus\"")
        );
        assert!(
            msg("agent: a\nrole: r\ntrigger: 'runtime.forge == \"x\"'\n").starts_with("trigger: ")
        );
        validate(&h(
            "agent: a\nrole: r-1_x\nslug: A-b_9\ntrigger: \"event.kind == 'push'\"\n",
        ))
        .unwrap();
    }

    #[test]
    fn env_validation_order_and_rules() {
        let msg = |s: &str| validate_env(&h(s), &host).err().map(|e| e.to_string());
        assert_eq!(
            msg("env: {sandbox: {A: '${SET}${EMPTY}$UNSET ${FULLSEND_DIR}'}}\n"),
            None
        );
        assert_eq!(
            msg("env: {sandbox: {A: '${NOPE}'}}\n").unwrap(),
            "env.sandbox[A]: host variable NOPE is not set"
        );
        assert_eq!(
            msg("env: {runner: {A: '${ACTIONS_ID_TOKEN_REQUEST_TOKEN}'}}\n").unwrap(),
            "env.runner[A]: host variable ACTIONS_ID_TOKEN_REQUEST_TOKEN is not set"
        );
        assert_eq!(
            msg("env: {runner: {A: '${X:-on}'}}\n").unwrap(),
            "env.runner[A]: host variable X:-on is not set"
        );
        // order: runner_env, host_files, schema, preflight, env.runner, env.sandbox
        let all = "runner_env: {R: '${U1}'}\nhost_files: [{src: '${U2}', dest: d}]\nvalidation_loop: {script: s, schema: '${U3}', preflight_check: '${U4}'}\nenv: {runner: {A: '${U5}'}, sandbox: {B: '${U6}'}}\n";
        assert!(msg(all)
            .unwrap()
            .starts_with("runner_env[R]: host variable U1"));
        let no1 = all.replace("${U1}", "x");
        assert!(msg(&no1)
            .unwrap()
            .starts_with("host_files[0].src: host variable U2"));
        let no2 = no1.replace("${U2}", "x");
        assert!(msg(&no2)
            .unwrap()
            .starts_with("validation_loop.schema: host variable U3"));
        let no3 = no2.replace("${U3}", "x");
        assert!(msg(&no3)
            .unwrap()
            .starts_with("validation_loop.preflight_check: host variable U4"));
        let no4 = no3.replace("${U4}", "x");
        assert!(msg(&no4)
            .unwrap()
            .starts_with("env.runner[A]: host variable U5"));
        let no5 = no4.replace("${U5}", "x");
        assert!(msg(&no5)
            .unwrap()
            .starts_with("env.sandbox[B]: host variable U6"));
        // optional host files are not checked; sorted keys inside a map
        assert_eq!(
            msg("host_files: [{src: '${U}', dest: d, optional: true}]\n"),
            None
        );
        assert!(msg("env: {runner: {Z: '${U9}', A: '${U8}'}}\n")
            .unwrap()
            .contains("U8"));
        // reserved/invalid sandbox keys are still validated
        assert!(msg("env: {sandbox: {PATH: '${U7}'}}\n")
            .unwrap()
            .contains("U7"));
    }

    #[test]
    fn expansion_mapping() {
        let mut x = h("runner_env: {A: '$SET'}\nenv: {runner: {D: '${FULLSEND_DIR}/x'}, sandbox: {O: 'a${ACTIONS_ID_TOKEN_REQUEST_TOKEN}b', U: '$NOPE.'}}\nvalidation_loop: {script: s, schema: '${FULLSEND_DIR}/s', preflight_check: '$SET'}\n");
        let map = expander("/fs", &host);
        expand_harness(&mut x, &map);
        assert_eq!(x.cfg.runner_env.as_ref().unwrap()["A"], "v");
        let env = x.cfg.env.as_ref().unwrap();
        assert_eq!(env.runner.as_ref().unwrap()["D"], "/fs/x");
        assert_eq!(env.sandbox.as_ref().unwrap()["O"], "ab");
        assert_eq!(env.sandbox.as_ref().unwrap()["U"], ".");
        let vl = x.cfg.validation_loop.as_ref().unwrap();
        assert_eq!(vl.schema, "/fs/s");
        assert_eq!(vl.preflight_check, "$SET");
    }
}
