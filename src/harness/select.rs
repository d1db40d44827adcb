//! Forge-block and overlay selection, in one place (fullsend's platform,
//! `ResolveForge` and overlay rules; every matching overlay merges, each base
//! layer is resolved first): the effective platform, and for one layer of a
//! chain its own forge block for the run's platform and then every matching
//! overlay, in order (a later match wins). A base layer is lenient (a missing
//! platform drops its forge map silently); the child's missing platform is an
//! error.

use super::cel::{self, Value};
use super::compose::apply_block;
use super::explain::{Block, Trace};
use super::schema::Harness;
use super::validate::{self, forge_key_list, is_valid_platform};
use super::Error;
use crate::core::Env;
use std::sync::Arc;

/// `p` when it is a forge platform; else an error that starts with `said`
/// (which names the place, and echoes the value only where it may).
fn valid_platform(p: &str, said: &str) -> Result<String, Error> {
    if !is_valid_platform(p) {
        return Err(Error::invalid(format!(
            "{said} not a valid forge platform (valid: {})",
            forge_key_list()
        )));
    }
    Ok(p.to_string())
}

/// The effective platform: `--forge`, else `config.forge`, else
/// `GITHUB_ACTIONS=true` → github, else `GITLAB_CI=true` → gitlab, else "".
/// A bad `config.forge` is not printed: the config file may hold anything
/// there.
pub fn detect_platform(
    flag: Option<&str>,
    config_forge: Option<&str>,
    host: &Env,
) -> Result<String, Error> {
    if let Some(f) = flag.filter(|f| !f.is_empty()) {
        return valid_platform(f, &format!("--forge: {f:?} is"));
    }
    if let Some(c) = config_forge.filter(|c| !c.is_empty()) {
        return valid_platform(c, "config.forge:");
    }
    let is_true = |k: &str| crate::core::get(host, k).is_some_and(|v| v == "true");
    if is_true("GITHUB_ACTIONS") {
        return Ok("github".into());
    }
    if is_true("GITLAB_CI") {
        return Ok("gitlab".into());
    }
    Ok(String::new())
}

/// What a guard sees, the same for every layer of a run.
pub struct Selection {
    pub platform: String,
    pub env: Arc<cel::Env>,
    vars: Vec<(&'static str, Value)>,
}

impl Selection {
    pub fn new(platform: String, event: &serde_json::Value, config: &serde_json::Value) -> Self {
        let runtime = cel::json_to_cel(&serde_json::json!({ "forge": platform }));
        Selection {
            vars: vec![
                ("event", cel::json_to_cel(event)),
                ("runtime", runtime),
                ("config", cel::json_to_cel(config)),
            ],
            platform,
            env: cel::cel_env(),
        }
    }
}

/// Validate and resolve one layer's own forge block and overlays, then
/// drop both. `child`: the last layer (a missing platform is an error;
/// errors are `invalid harness: …` / `resolving forge config: …`); a base
/// layer's errors read `invalid base harness: …`. `file` indexes the
/// layer in `trace`; `notes` gets overlay evaluation failures.
pub fn resolve_layer(
    h: &mut Harness,
    sel: &Selection,
    child: bool,
    file: usize,
    trace: &mut Trace,
    notes: &mut Vec<String>,
) -> Result<(), Error> {
    let invalid = if child {
        "invalid harness"
    } else {
        "invalid base harness"
    };
    validate::validate_forge(h).map_err(|e| e.wrap(invalid))?;
    let guards = validate::validate_overlays(h, &sel.env).map_err(|e| e.wrap(invalid))?;

    if let Some(mut forge) = h.forge.take() {
        let p = sel.platform.as_str();
        if !p.is_empty() {
            match forge.swap_remove(p) {
                Some(Some(block)) => {
                    trace.record(file, Block::Forge(p.to_string()), &block);
                    apply_block(&mut h.cfg, &block);
                }
                Some(None) => {}
                None if child => {
                    let mut keys: Vec<&String> = forge.keys().collect();
                    keys.sort();
                    let keys: Vec<&str> = keys.iter().map(|s| s.as_str()).collect();
                    return Err(Error::invalid(format!(
                        "resolving forge config: forge platform {p:?} not configured (available: {})",
                        keys.join(", ")
                    )));
                }
                None => {}
            }
        }
        // No platform: every forge map is dropped unused (for the child,
        // ResolveForge is a no-op); it only had to be valid.
    }
    let overlays = h.overlays.take().unwrap_or_default();
    for (i, (o, g)) in overlays.iter().zip(&guards).enumerate() {
        match g.eval(&sel.env, &sel.vars) {
            Ok(true) => {
                trace.record(file, Block::Overlay(i), &o.cfg);
                apply_block(&mut h.cfg, &o.cfg);
            }
            Ok(false) => {}
            Err(m) => notes.push(format!("harness: overlay[{i}].when eval failed: {m}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;
    use crate::core::env_of;
    use std::path::Path;

    fn h(s: &str) -> Harness {
        parse_harness(s, Path::new("t.yaml")).unwrap()
    }

    fn sel(p: &str) -> Selection {
        Selection::new(p.into(), &serde_json::json!({}), &serde_json::json!({}))
    }

    fn run(x: &mut Harness, p: &str, child: bool) -> Result<Vec<String>, Error> {
        let mut notes = Vec::new();
        resolve_layer(x, &sel(p), child, 0, &mut Trace::default(), &mut notes)?;
        Ok(notes)
    }

    #[test]
    fn platform_detection_order() {
        let none = env_of(&[]);
        assert_eq!(detect_platform(Some("jira"), None, &none).unwrap(), "jira");
        let e = detect_platform(Some("bitbucket"), None, &none)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--forge: \"bitbucket\" is not a valid forge platform (valid: github, gitlab, jira)"
        );
        let e = detect_platform(None, Some("ghp_secret"), &none)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "config.forge: not a valid forge platform (valid: github, gitlab, jira)"
        );
        assert_eq!(
            detect_platform(None, Some("gitlab"), &none).unwrap(),
            "gitlab"
        );
        let both = env_of(&[("GITHUB_ACTIONS", "true"), ("GITLAB_CI", "true")]);
        assert_eq!(detect_platform(None, None, &both).unwrap(), "github");
        let gl = env_of(&[("GITLAB_CI", "true")]);
        assert_eq!(detect_platform(None, None, &gl).unwrap(), "gitlab");
        let notrue = env_of(&[("GITHUB_ACTIONS", "1")]);
        assert_eq!(detect_platform(None, None, &notrue).unwrap(), "");
    }

    #[test]
    fn forge_resolution() {
        let src = "env: {runner: {K: top}}\nforge:\n  github: {env: {runner: {K: gh}}}\n  gitlab: {env: {runner: {K: gl}}}\n";
        let mut y = h(src);
        run(&mut y, "", true).unwrap();
        assert_eq!(y.cfg.env.unwrap().runner.unwrap()["K"], "top");
        assert!(y.forge.is_none());
        let mut x = h(src);
        run(&mut x, "github", true).unwrap();
        assert_eq!(x.cfg.env.unwrap().runner.unwrap()["K"], "gh");
        let e = run(&mut h("forge:\n  gitlab: {}\n  github: {}\n"), "jira", true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "resolving forge config: forge platform \"jira\" not configured (available: github, gitlab)"
        );
        // A base layer drops a forge map without the platform silently.
        run(&mut h("forge:\n  gitlab: {}\n"), "jira", false).unwrap();
        let e = run(&mut h("forge: {}\n"), "github", true)
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("(available: )"), "{e}");
        let mut n = h("env: {runner: {K: top}}\nforge:\n  github: ~\n");
        run(&mut n, "github", true).unwrap();
        assert_eq!(n.cfg.env.unwrap().runner.unwrap()["K"], "top");
        // Unselected blocks are still checked, with no platform too.
        let e = run(
            &mut h("forge:\n  gitlab: {host_files: [{dest: /tmp/d}]}\n"),
            "",
            true,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "invalid harness: forge.gitlab.host_files[0]: src is required"
        );
        let e = run(
            &mut h("forge:\n  gitlab: {host_files: [{dest: /tmp/d}]}\n"),
            "",
            false,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "invalid base harness: forge.gitlab.host_files[0]: src is required"
        );
    }

    #[test]
    fn every_matching_overlay_merges_in_order() {
        let mut x = h("env: {runner: {K: top, A: top}}\noverlays:\n  - {when: \"event.missing == 'x'\", env: {runner: {K: err}}}\n  - {when: \"runtime.forge == 'gitlab'\", env: {runner: {K: gl, A: gl}}}\n  - {when: 'true', env: {runner: {K: last}}}\n  - {when: 'false', env: {runner: {K: never}}}\n");
        let notes = run(&mut x, "gitlab", true).unwrap();
        let r = x.cfg.env.unwrap().runner.unwrap();
        assert_eq!((r["K"].as_str(), r["A"].as_str()), ("last", "gl"));
        assert_eq!(notes, ["harness: overlay[0].when eval failed: no such key"]);
        assert!(x.overlays.is_none());
    }
}
