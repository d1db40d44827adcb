//! Every check of a harness (fullsend's `Validate`, `validateForge`,
//! `ValidateFilesExist`, `ValidateRunnerEnvWith`, `ValidateHostFileDest`): the
//! per-block checks (a forge block, an overlay entry), the top-level
//! `Validate` on the resolved harness, the host_files `dest` rules, the
//! unset-variable validation and the file checks. Each check runs once, where
//! the reference runs it.

use super::cel::{self, CompileError, Guard};
use super::schema::{Config, EnvMap, Harness, HostFile, ValidationLoop};
use super::{shown_key, Error};
use std::collections::BTreeMap;

/// `ForgeKeyList`, sorted.
pub const FORGE_KEYS: [&str; 3] = ["github", "gitlab", "jira"];

pub fn forge_key_list() -> String {
    FORGE_KEYS.join(", ")
}

pub fn is_valid_platform(p: &str) -> bool {
    FORGE_KEYS.contains(&p)
}

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

/// Runner-owned sandbox paths (`hostfile_dest.go`).
const RESERVED_EXACT: [&str; 1] = ["/sandbox/workspace/.env"];
const RESERVED_BIN_DIR: &str = "/sandbox/workspace/bin";
const RESERVED_BINARIES: [&str; 6] = [
    "claude",
    "codex",
    "pi",
    "opencode",
    "fullsend",
    "fullsend-check-output",
];
const RESERVED_DIRS: [&str; 7] = [
    "/sandbox/claude-config",
    "/sandbox/codex-config",
    "/sandbox/pi-config",
    "/sandbox/workspace/.fullsend",
    "/sandbox/workspace/.security",
    "/sandbox/.venv",
    "/sandbox/go/bin",
];

/// Go's `path.Clean` of an absolute slash path.
fn clean_slash(p: &str) -> String {
    String::from_utf8_lossy(&crate::compat::go::clean(p.as_bytes())).into_owned()
}

/// `ValidateHostFileDest` (fullsend main): absolute, no `..` component, under
/// `/sandbox/` or `/tmp/`, not runner-owned. The dest is a path, not a value;
/// it is quoted as the reference quotes it.
pub fn check_dest(dest: &str) -> Result<(), String> {
    if !dest.starts_with('/') {
        return Err(format!("dest {dest:?} must be an absolute path"));
    }
    if dest.split('/').any(|c| c == "..") {
        return Err(format!(
            "dest {dest:?} must not contain a \"..\" path component"
        ));
    }
    let clean = clean_slash(dest);
    if !(clean.starts_with("/sandbox/") || clean.starts_with("/tmp/")) {
        return Err(format!("dest {dest:?} must be under /sandbox/ or /tmp/"));
    }
    let (dir, base) = clean.rsplit_once('/').unwrap_or(("", &clean));
    let reserved = RESERVED_EXACT.contains(&clean.as_str())
        || (dir == RESERVED_BIN_DIR && RESERVED_BINARIES.contains(&base))
        || RESERVED_DIRS
            .iter()
            .any(|d| clean == *d || clean.starts_with(&format!("{d}/")));
    if reserved {
        return Err(format!("dest {dest:?} is reserved for the runner"));
    }
    Ok(())
}

fn check_host_files(files: &[HostFile], prefix: &str, urls_here: bool) -> Result<(), Error> {
    for (i, f) in files.iter().enumerate() {
        if f.src.is_empty() {
            return Err(Error::invalid(format!(
                "{prefix}host_files[{i}]: src is required"
            )));
        }
        if f.dest.is_empty() {
            return Err(Error::invalid(format!(
                "{prefix}host_files[{i}]: dest is required"
            )));
        }
        check_dest(&f.dest).map_err(|m| Error::invalid(format!("{prefix}host_files[{i}]: {m}")))?;
        if urls_here && is_url(&f.src) {
            return Err(Error::invalid(format!(
                "{prefix}host_files[{i}].src must be a local path, not a URL"
            )));
        }
    }
    Ok(())
}

/// `pre_script` and `post_script` are local paths (`prefix` as in
/// [`check_block`], empty at the top level).
fn check_script_urls(cfg: &Config, prefix: &str) -> Result<(), Error> {
    for (name, v) in [
        ("pre_script", &cfg.pre_script),
        ("post_script", &cfg.post_script),
    ] {
        if is_url(v) {
            return Err(Error::invalid(format!(
                "{prefix}{name} must be a local path, not a URL"
            )));
        }
    }
    Ok(())
}

fn check_loop_urls(vl: &ValidationLoop, prefix: &str) -> Result<(), Error> {
    if is_url(&vl.script) {
        return Err(Error::invalid(format!(
            "{prefix}validation_loop.script must be a local path, not a URL"
        )));
    }
    if is_url(&vl.schema) {
        return Err(Error::invalid(format!(
            "{prefix}validation_loop.schema must be a local path, not a URL"
        )));
    }
    Ok(())
}

/// The checks of one forge block or overlay entry (`prefix` is
/// `forge.<p>.` or `overlays[i].`). `top_has_script`: the layer's top
/// level has a `validation_loop.script`, which a block may then omit.
pub fn check_block(cfg: &Config, prefix: &str, top_has_script: bool) -> Result<(), Error> {
    check_script_urls(cfg, prefix)?;
    check_host_files(cfg.host_files.as_deref().unwrap_or_default(), prefix, true)?;
    if let Some(vl) = &cfg.validation_loop {
        if vl.script.is_empty() && !top_has_script {
            return Err(Error::invalid(format!(
                "{prefix}validation_loop.script is required when validation_loop is set"
            )));
        }
        check_loop_urls(vl, prefix)?;
    }
    Ok(())
}

fn top_has_script(h: &Harness) -> bool {
    h.cfg
        .validation_loop
        .as_ref()
        .is_some_and(|v| !v.script.is_empty())
}

/// `validateForge`: every key valid, every block's own checks — for every
/// platform key, selected or not, with or without a platform (as the Go code
/// does, whatever fullsend's ADR says). Keys in sorted order (Go's map order
/// is random).
pub fn validate_forge(h: &Harness) -> Result<(), Error> {
    let Some(f) = &h.forge else { return Ok(()) };
    let mut keys: Vec<&String> = f.keys().collect();
    keys.sort();
    let inherit = top_has_script(h);
    for k in keys {
        if !is_valid_platform(k) {
            return Err(Error::invalid(format!(
                "forge: unrecognized key {:?} (valid: {})",
                shown_key(k),
                forge_key_list()
            )));
        }
        if let Some(Some(block)) = f.get(k) {
            check_block(block, &format!("forge.{k}."), inherit)?;
        }
    }
    Ok(())
}

/// `validateOverlays` for one file: coexistence with `forge:` in the same
/// file, `when` required, compiles, static type bool, and each entry's
/// fields. Returns the compiled guards, in order.
pub fn validate_overlays(h: &Harness, env: &cel::Env) -> Result<Vec<Guard>, Error> {
    let Some(ovs) = h.overlays.as_ref().filter(|o| !o.is_empty()) else {
        return Ok(Vec::new());
    };
    if h.forge.is_some() {
        return Err(Error::invalid(
            "forge and overlays cannot coexist in the same harness; migrate forge entries to overlays",
        ));
    }
    let inherit = top_has_script(h);
    let mut guards = Vec::with_capacity(ovs.len());
    for (i, o) in ovs.iter().enumerate() {
        let when = o.when.trim();
        if when.is_empty() {
            return Err(Error::invalid(format!("overlays[{i}].when is required")));
        }
        match cel::compile(env, when, &["event", "runtime", "config"]) {
            Ok(g) => guards.push(g),
            Err(CompileError::Invalid(m)) => {
                return Err(Error::invalid(format!("overlays[{i}].when: {m}")))
            }
            Err(CompileError::NotBool(t)) => {
                return Err(Error::invalid(format!(
                    "overlays[{i}].when must evaluate to bool, got {t}"
                )))
            }
        }
        check_block(&o.cfg, &format!("overlays[{i}]."), inherit)?;
    }
    Ok(guards)
}

/// `^[a-z][a-z0-9_-]*$`
fn role_ok(r: &str) -> bool {
    word_ok(r, u8::is_ascii_lowercase, |c| {
        c.is_ascii_lowercase() || c.is_ascii_digit()
    })
}

/// `^[a-zA-Z0-9][a-zA-Z0-9_-]*$`
fn slug_ok(s: &str) -> bool {
    word_ok(s, u8::is_ascii_alphanumeric, u8::is_ascii_alphanumeric)
}

/// `s` is a `first` byte, then bytes that are `rest`, `_` or `-`.
fn word_ok(s: &str, first: fn(&u8) -> bool, rest: fn(&u8) -> bool) -> bool {
    match s.as_bytes().split_first() {
        Some((c, tail)) => first(c) && tail.iter().all(|c| rest(c) || *c == b'_' || *c == b'-'),
        None => false,
    }
}

/// `Validate` on the resolved harness (forge and overlays consumed).
/// Messages are wrapped by the caller as `invalid harness: …`.
pub fn validate(h: &Harness, env: &cel::Env) -> Result<(), Error> {
    if h.agent.is_empty() {
        return Err(Error::invalid("agent field is required"));
    }
    if h.role.is_empty() {
        return Err(Error::invalid("role field is required"));
    }
    if !role_ok(&h.role) {
        return Err(Error::invalid("role must match ^[a-z][a-z0-9_-]*$"));
    }
    if h.role.contains("--") {
        return Err(Error::invalid("role must not contain \"--\""));
    }
    if !h.slug.is_empty() && !slug_ok(&h.slug) {
        return Err(Error::invalid(
            "slug must match ^[a-zA-Z0-9][a-zA-Z0-9_-]*$",
        ));
    }
    let c = &h.cfg;
    check_host_files(c.host_files.as_deref().unwrap_or_default(), "", false)?;
    if let Some(vl) = &c.validation_loop {
        if vl.script.is_empty() {
            return Err(Error::invalid(
                "validation_loop.script is required when validation_loop is set",
            ));
        }
        if !matches!(vl.feedback_mode.as_str(), "" | "none" | "append") {
            return Err(Error::invalid(
                "validation_loop.feedback_mode must be \"none\" or \"append\"",
            ));
        }
    }
    // ValidateResourceTypes
    check_script_urls(c, "")?;
    if let Some(vl) = &c.validation_loop {
        check_loop_urls(vl, "")?;
    }
    for (i, f) in c.host_files.iter().flatten().enumerate() {
        if is_url(&f.src) {
            return Err(Error::invalid(format!(
                "host_files[{i}].src must be a local path, not a URL"
            )));
        }
    }
    if h.allow_runtime_fetch
        && h.allowed_remote_resources
            .as_ref()
            .is_none_or(|v| v.is_empty())
    {
        return Err(Error::invalid(
            "allow_runtime_fetch requires at least one entry in allowed_remote_resources",
        ));
    }
    if !h.trigger.trim().is_empty() {
        match cel::compile(env, &h.trigger, &["event"]) {
            Ok(_) => {}
            Err(CompileError::Invalid(m)) => return Err(Error::invalid(format!("trigger: {m}"))),
            Err(CompileError::NotBool(t)) => {
                return Err(Error::invalid(format!(
                    "trigger: must evaluate to bool, got {t}"
                )))
            }
        }
    }
    Ok(())
}

/// One unresolved braced reference as it is shown: a plain name in full;
/// otherwise only its leading name, because the rest can be a value
/// (`${GH_TOKEN:-ghp_…}` looks up the name `GH_TOKEN:-ghp_…`).
fn shown_reference(name: &str) -> String {
    let plain = crate::compat::ident::continue_len(name.as_bytes());
    if plain == name.len() {
        return name.to_string();
    }
    let lead = &name[..plain];
    let rest = &name[plain..];
    if rest.starts_with(":-") || rest.starts_with('-') || rest.starts_with(":=") {
        format!("${{{lead}…}} (shell defaults like \":-\" are not supported: the whole braced text is looked up as one name)")
    } else {
        format!("${{{lead}…}} (the braced text is not a plain variable name)")
    }
}

/// `ValidateRunnerEnvWith` (fullsend main): every braced `${NAME}` that is not
/// set is collected; the error lists each once with the sorted places that
/// reference it, lines sorted. `is_set` decides (FULLSEND_DIR set, deny list
/// unset). Wrapped by the caller as `validating env: …`.
pub fn validate_env(h: &Harness, is_set: &dyn Fn(&str) -> bool) -> Result<(), Error> {
    let mut refs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut check = |source: String, value: &str| {
        for name in crate::expand::braced_names(value) {
            if !is_set(name) {
                refs.entry(shown_reference(name))
                    .or_default()
                    .push(source.clone());
            }
        }
    };
    let c = &h.cfg;
    let map = |m: &Option<EnvMap>, field: &str, check: &mut dyn FnMut(String, &str)| {
        for (k, v) in m.iter().flatten() {
            check(format!("{field}[{}]", shown_key(k)), v);
        }
    };
    map(&c.runner_env, "runner_env", &mut check);
    for (i, f) in c.host_files.iter().flatten().enumerate() {
        if !f.optional {
            check(format!("host_files[{i}].src"), &f.src);
        }
    }
    if let Some(vl) = &c.validation_loop {
        check("validation_loop.schema".into(), &vl.schema);
        check(
            "validation_loop.preflight_check".into(),
            &vl.preflight_check,
        );
    }
    if let Some(env) = &c.env {
        map(&env.runner, "env.runner", &mut check);
        map(&env.sandbox, "env.sandbox", &mut check);
    }
    if refs.is_empty() {
        return Ok(());
    }
    let mut lines: Vec<String> = refs
        .into_iter()
        .map(|(name, mut sources)| {
            sources.sort();
            sources.dedup();
            format!("{name} is not set (referenced by {})", sources.join(", "))
        })
        .collect();
    lines.sort();
    Err(Error::invalid(format!(
        "{} unresolved host variable(s):\n    {}",
        lines.len(),
        lines.join("\n    ")
    )))
}

/// `ValidateFilesExist` for host files (an error in every command): each
/// non-optional `src` without `${` (resolved by `resolve_src`) that cannot be
/// stat'ed, with its index and `stat <path>: <kind>`.
pub fn missing_files(h: &Harness, resolve_src: &dyn Fn(&str) -> String) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, f) in h.cfg.host_files.iter().flatten().enumerate() {
        if f.optional || f.src.contains("${") {
            continue;
        }
        let p = resolve_src(&f.src);
        if let Err(e) = std::fs::metadata(&p) {
            out.push((
                i,
                format!("stat {p}: {}", crate::fsutil::io_kind(&e).to_lowercase()),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;
    use std::path::Path;

    fn h(s: &str) -> Harness {
        parse_harness(s, Path::new("t.yaml")).unwrap()
    }

    fn set(name: &str) -> bool {
        matches!(name, "SET" | "EMPTY" | "FULLSEND_DIR")
    }

    #[test]
    fn required_fields_and_checks() {
        let env = cel::cel_env();
        let msg = |s: &str| validate(&h(s), &env).unwrap_err().to_string();
        assert_eq!(msg(""), "agent field is required");
        assert_eq!(msg("agent: a\n"), "role field is required");
        assert!(msg("agent: a\nrole: Bad\n").starts_with("role must match"));
        assert!(msg("agent: a\nrole: a--b\n").contains("--"));
        assert!(msg("agent: a\nrole: r\nslug: -x\n").starts_with("slug must match"));
        assert_eq!(
            msg("agent: a\nrole: r\nhost_files: [{dest: /tmp/d}]\n"),
            "host_files[0]: src is required"
        );
        assert_eq!(
            msg("agent: a\nrole: r\nhost_files: [{src: s}]\n"),
            "host_files[0]: dest is required"
        );
        assert_eq!(
            msg("agent: a\nrole: r\nhost_files: [{src: 'https://x', dest: /tmp/d}]\n"),
            "host_files[0].src must be a local path, not a URL"
        );
        assert_eq!(
            msg("agent: a\nrole: r\nvalidation_loop: {schema: s}\n"),
            "validation_loop.script is required when validation_loop is set"
        );
        assert!(
            msg("agent: a\nrole: r\nvalidation_loop: {script: s, feedback_mode: x}\n")
                .contains("feedback_mode")
        );
        assert!(
            msg("agent: a\nrole: r\ntrigger: 'runtime.forge == \"x\"'\n").starts_with("trigger: ")
        );
        validate(
            &h("agent: a\nrole: r-1_x\nslug: A-b_9\ntrigger: \"event.kind == 'push'\"\n"),
            &env,
        )
        .unwrap();
    }

    #[test]
    fn dest_rules_in_order() {
        for (d, want) in [
            ("rel/x", "dest \"rel/x\" must be an absolute path"),
            (
                "/sandbox/../etc/x",
                "dest \"/sandbox/../etc/x\" must not contain a \"..\" path component",
            ),
            ("/etc/x", "dest \"/etc/x\" must be under /sandbox/ or /tmp/"),
            (
                "/sandbox",
                "dest \"/sandbox\" must be under /sandbox/ or /tmp/",
            ),
            (
                "/sandbox/workspace/.env",
                "dest \"/sandbox/workspace/.env\" is reserved for the runner",
            ),
            (
                "/sandbox//workspace/.env/",
                "dest \"/sandbox//workspace/.env/\" is reserved for the runner",
            ),
            (
                "/sandbox/workspace/bin/claude",
                "dest \"/sandbox/workspace/bin/claude\" is reserved for the runner",
            ),
            (
                "/sandbox/claude-config",
                "dest \"/sandbox/claude-config\" is reserved for the runner",
            ),
            (
                "/sandbox/workspace/.fullsend/iteration.env",
                "dest \"/sandbox/workspace/.fullsend/iteration.env\" is reserved for the runner",
            ),
            (
                "/sandbox/go/bin/go",
                "dest \"/sandbox/go/bin/go\" is reserved for the runner",
            ),
        ] {
            assert_eq!(check_dest(d).unwrap_err(), want);
        }
        for ok in [
            "/sandbox/workspace/.env.d/a.env",
            "/sandbox/workspace/bin/my-tool.sh",
            "/tmp/x",
            "/sandbox/go/binx",
            "/sandbox/workspace/.envx",
        ] {
            check_dest(ok).unwrap();
        }
        let env = cel::cel_env();
        let e = validate(
            &h("agent: a\nrole: r\nhost_files: [{src: s, dest: /etc/passwd}]\n"),
            &env,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "host_files[0]: dest \"/etc/passwd\" must be under /sandbox/ or /tmp/"
        );
    }

    #[test]
    fn every_forge_block_is_checked_even_unselected() {
        let e = validate_forge(&h("forge:\n  github: {host_files: [{dest: /d}]}\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "forge.github.host_files[0]: src is required");
        let e = validate_forge(&h("forge:\n  jira: {host_files: [{src: s, dest: /x}]}\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "forge.jira.host_files[0]: dest \"/x\" must be under /sandbox/ or /tmp/"
        );
        let e = validate_forge(&h("forge:\n  zz: {}\n  bb: {}\n  github: {}\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "forge: unrecognized key \"bb\" (valid: github, gitlab, jira)"
        );
        // A block may omit script when the top level has one.
        let e = validate_forge(&h("forge:\n  github: {validation_loop: {schema: s}}\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "forge.github.validation_loop.script is required when validation_loop is set"
        );
        validate_forge(&h(
            "validation_loop: {script: t}\nforge:\n  github: {validation_loop: {schema: s}}\n",
        ))
        .unwrap();
    }

    #[test]
    fn overlay_validation() {
        let env = cel::cel_env();
        let e = |s: &str| validate_overlays(&h(s), &env).err().unwrap().to_string();
        assert!(e("forge: {}\noverlays: [{when: 'true'}]\n").contains("cannot coexist"));
        assert_eq!(
            e("overlays: [{when: '  '}]\n"),
            "overlays[0].when is required"
        );
        assert_eq!(
            e("overlays: [{when: 'true'}, {when: 'event.flag'}]\n"),
            "overlays[1].when must evaluate to bool, got dyn"
        );
        assert!(e("overlays: [{when: 'event.a ==', env: {}}]\n")
            .starts_with("overlays[0].when: syntax error"));
        assert_eq!(
            e("overlays: [{when: 'true', pre_script: 'https://x/y.sh'}]\n"),
            "overlays[0].pre_script must be a local path, not a URL"
        );
        assert_eq!(
            validate_overlays(&h("overlays: [{when: true}]\n"), &env)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn unset_variables_are_reported_together() {
        let msg = |s: &str| validate_env(&h(s), &set).err().map(|e| e.to_string());
        assert_eq!(
            msg("env: {sandbox: {A: '${SET}${EMPTY}$UNSET ${FULLSEND_DIR}'}}\n"),
            None
        );
        let all = "runner_env: {R: '${U1}'}\nhost_files: [{src: '${U2}', dest: /tmp/d}, {src: '${U9}', dest: /tmp/e, optional: true}]\nvalidation_loop: {script: s, schema: '${U3}', preflight_check: '${U1}'}\nenv: {runner: {A: '${U5}', B: '${U1}'}, sandbox: {B: '${U2}${U2}'}}\n";
        assert_eq!(
            msg(all).unwrap(),
            "3 unresolved host variable(s):\n    U1 is not set (referenced by env.runner[B], runner_env[R], validation_loop.preflight_check)\n    U2 is not set (referenced by env.sandbox[B], host_files[0].src)\n    U3 is not set (referenced by validation_loop.schema)\n    U5 is not set (referenced by env.runner[A])"
                .replace("3 unresolved", "4 unresolved")
        );
    }

    #[test]
    fn a_default_literal_is_never_printed() {
        let msg = |s: &str| validate_env(&h(s), &set).unwrap_err().to_string();
        let e = msg("env: {runner: {A: '${GH_TOKEN:-ghp_secret1}'}}\n");
        assert!(!e.contains("ghp_secret1"), "{e}");
        assert!(e.contains("${GH_TOKEN…}"), "{e}");
        assert!(e.contains("\":-\" are not supported"), "{e}");
        let e = msg("env: {sandbox: {A: '${X y_secret2}'}}\n");
        assert!(!e.contains("secret2"), "{e}");
        assert!(e.contains("${X…}"), "{e}");
        // A key carrying a value is shown up to its valid prefix.
        let e = msg("env: {runner: {'GH_TOKEN=ghp_secret3': '${NOPE}'}}\n");
        assert!(!e.contains("secret3"), "{e}");
        assert!(e.contains("env.runner[GH_TOKEN…]"), "{e}");
    }
}
