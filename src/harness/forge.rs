//! Forge platform selection and `forge.<platform>` resolution (reference
//! §3.1–§3.2), and the overlay resolution that follows it (§3.3).

use super::compose::apply_block;
use super::overlays::{self, CompileError};
use super::schema::Harness;
use super::validate::check_config;
use super::Error;

/// `ForgeKeyList`, sorted.
pub const FORGE_KEYS: [&str; 3] = ["github", "gitlab", "jira"];

fn valid_list() -> String {
    FORGE_KEYS.join(", ")
}

pub fn is_valid(p: &str) -> bool {
    FORGE_KEYS.contains(&p)
}

/// The effective platform: `--forge`, else `config.forge`, else
/// `GITHUB_ACTIONS=true` → github, else `GITLAB_CI=true` → gitlab, else "".
pub fn detect_platform(
    flag: Option<&str>,
    config_forge: Option<&str>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, Error> {
    if let Some(f) = flag.filter(|f| !f.is_empty()) {
        if !is_valid(f) {
            return Err(Error::new(format!(
                "--forge: {f:?} is not a valid forge platform (valid: {})",
                valid_list()
            )));
        }
        return Ok(f.to_string());
    }
    if let Some(c) = config_forge.filter(|c| !c.is_empty()) {
        if !is_valid(c) {
            return Err(Error::new(format!(
                "config.forge: {c:?} is not a valid forge platform (valid: {})",
                valid_list()
            )));
        }
        return Ok(c.to_string());
    }
    if lookup("GITHUB_ACTIONS").as_deref() == Some("true") {
        return Ok("github".into());
    }
    if lookup("GITLAB_CI").as_deref() == Some("true") {
        return Ok("gitlab".into());
    }
    Ok(String::new())
}

/// The forge-key check (`validateForge`): runs even with no platform.
/// The first invalid key in sorted order is reported.
pub fn validate_forge_keys(h: &Harness) -> Result<(), Error> {
    if let Some(f) = &h.forge {
        let mut bad: Vec<&String> = f.keys().filter(|k| !is_valid(k)).collect();
        bad.sort();
        if let Some(k) = bad.first() {
            return Err(Error::new(format!(
                "forge: unrecognized key {k:?} (valid: {})",
                valid_list()
            )));
        }
    }
    Ok(())
}

/// `validateOverlays` (before resolution): coexistence, `when` required,
/// compiles, static type bool, and each entry's fields.
pub fn validate_overlays(h: &Harness) -> Result<(), Error> {
    let Some(ovs) = h.overlays.as_ref().filter(|o| !o.is_empty()) else {
        return Ok(());
    };
    if h.forge.is_some() {
        return Err(Error::new(
            "forge and overlays cannot coexist in the same harness; migrate forge entries to overlays",
        ));
    }
    let env = overlays::cel_env();
    for (i, o) in ovs.iter().enumerate() {
        if o.when.trim().is_empty() {
            return Err(Error::new(format!("overlays[{i}].when is required")));
        }
        match overlays::compile(&env, &o.when, &["event", "runtime", "config"]) {
            Ok(_) => {}
            Err(CompileError::Invalid(m)) => {
                return Err(Error::new(format!("overlays[{i}].when: {m}")))
            }
            Err(CompileError::NotBool(t)) => {
                return Err(Error::new(format!(
                    "overlays[{i}].when must evaluate to bool, got {t}"
                )))
            }
        }
        check_config(&o.cfg, &format!("overlays[{i}]."))?;
    }
    Ok(())
}

/// `ResolveForge(platform)`: merge the selected block over the top level
/// (the block wins) and drop the forge map. With no platform or no forge
/// map this is a no-op and every block is ignored.
pub fn resolve_forge(h: &mut Harness, platform: &str) -> Result<(), Error> {
    if platform.is_empty() || h.forge.is_none() {
        return Ok(());
    }
    let wrap = |m: String| Error::new(format!("resolving forge config: {m}"));
    if !is_valid(platform) {
        return Err(wrap(format!(
            "forge platform {platform:?} is not valid (valid: {})",
            valid_list()
        )));
    }
    let mut forge = h.forge.take().unwrap_or_default();
    let Some(block) = forge.swap_remove(platform) else {
        let mut keys: Vec<&String> = forge.keys().collect();
        keys.sort();
        let keys: Vec<&str> = keys.iter().map(|s| s.as_str()).collect();
        return Err(wrap(format!(
            "forge platform {platform:?} not configured (available: {})",
            keys.join(", ")
        )));
    };
    if let Some(block) = block {
        check_config(&block, &format!("forge.{platform}."))
            .map_err(|e| Error::new(format!("invalid harness: {e}")))?;
        apply_block(&mut h.cfg, block);
    }
    Ok(())
}

/// `ResolveOverlays(event, platform, config)`: the first entry whose guard
/// is true is merged over the top level. Evaluation errors are non-matches
/// and give a warning naming the entry index.
pub fn resolve_overlays(
    h: &mut Harness,
    event: &cel::Value,
    platform: &str,
    config: &cel::Value,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    let Some(ovs) = h.overlays.take() else {
        return Ok(());
    };
    let env = overlays::cel_env();
    let runtime = overlays::json_to_cel(&serde_json::json!({ "forge": platform }));
    let vars = [
        ("event", event.clone()),
        ("runtime", runtime),
        ("config", config.clone()),
    ];
    for (i, o) in ovs.into_iter().enumerate() {
        let guard = match overlays::compile(&env, &o.when, &["event", "runtime", "config"]) {
            Ok(g) => g,
            Err(_) => return Err(Error::new(format!("overlays[{i}].when does not compile"))),
        };
        match guard.eval(&env, &vars) {
            Ok(true) => {
                apply_block(&mut h.cfg, o.cfg);
                return Ok(());
            }
            Ok(false) => {}
            Err(m) => warnings.push(format!("harness: overlay[{i}].when eval failed: {m}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;
    use std::path::Path;

    fn h(s: &str) -> Harness {
        parse_harness(s, Path::new("t.yaml")).unwrap()
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn platform_detection_order() {
        assert_eq!(detect_platform(Some("jira"), None, none).unwrap(), "jira");
        let e = detect_platform(Some("bitbucket"), None, none)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--forge: \"bitbucket\" is not a valid forge platform (valid: github, gitlab, jira)"
        );
        let e = detect_platform(None, Some("x"), none)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("config.forge: \"x\" is not a valid forge platform"));
        assert_eq!(
            detect_platform(None, Some("gitlab"), none).unwrap(),
            "gitlab"
        );
        let both =
            |k: &str| matches!(k, "GITHUB_ACTIONS" | "GITLAB_CI").then(|| "true".to_string());
        assert_eq!(detect_platform(None, None, both).unwrap(), "github");
        let gl = |k: &str| (k == "GITLAB_CI").then(|| "true".to_string());
        assert_eq!(detect_platform(None, None, gl).unwrap(), "gitlab");
        let notrue = |_: &str| Some("1".to_string());
        assert_eq!(detect_platform(None, None, notrue).unwrap(), "");
    }

    #[test]
    fn forge_key_check_sorted_first() {
        let e = validate_forge_keys(&h("forge:\n  zz: {}\n  bb: {}\n  github: {}\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "forge: unrecognized key \"bb\" (valid: github, gitlab, jira)"
        );
    }

    #[test]
    fn resolve_forge_rules() {
        let mut x = h("env: {runner: {K: top}}\nforge:\n  github: {env: {runner: {K: gh}}}\n  gitlab: {env: {runner: {K: gl}}}\n");
        // no platform: no-op
        let mut y = x.clone();
        resolve_forge(&mut y, "").unwrap();
        assert!(y.forge.is_some());
        resolve_forge(&mut x, "github").unwrap();
        assert_eq!(x.cfg.env.unwrap().runner.unwrap()["K"], "gh");
        assert!(x.forge.is_none());
        let mut z = h("forge:\n  gitlab: {}\n  github: {}\n");
        let e = resolve_forge(&mut z, "jira").unwrap_err().to_string();
        assert_eq!(
            e,
            "resolving forge config: forge platform \"jira\" not configured (available: github, gitlab)"
        );
        let mut z = h("forge: {}\n");
        let e = resolve_forge(&mut z, "github").unwrap_err().to_string();
        assert!(e.ends_with("(available: )"), "{e}");
        let mut n = h("env: {runner: {K: top}}\nforge:\n  github: ~\n");
        resolve_forge(&mut n, "github").unwrap();
        assert_eq!(n.cfg.env.unwrap().runner.unwrap()["K"], "top");
    }

    #[test]
    fn selected_block_is_checked_unselected_not() {
        let mut x =
            h("forge:\n  github: {host_files: [{dest: d}]}\n  gitlab: {host_files: [{src: s}]}\n");
        let mut y = x.clone();
        let e = resolve_forge(&mut x, "github").unwrap_err().to_string();
        assert!(
            e.contains("forge.github.host_files[0]: src is required"),
            "{e}"
        );
        resolve_forge(&mut y, "").unwrap();
    }

    #[test]
    fn overlay_validation() {
        let e = validate_overlays(&h("forge: {}\noverlays: [{when: 'true'}]\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("forge and overlays cannot coexist"));
        let e = validate_overlays(&h("overlays: [{when: '  '}]\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "overlays[0].when is required");
        let e = validate_overlays(&h("overlays: [{when: 'true'}, {when: 'event.flag'}]\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "overlays[1].when must evaluate to bool, got dyn");
        let e = validate_overlays(&h("overlays: [{when: 'event.a ==', env: {}}]\n"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("overlays[0].when: syntax error"), "{e}");
        let e = validate_overlays(&h(
            "overlays: [{when: 'true', pre_script: 'https://x/y.sh'}]\n",
        ))
        .unwrap_err()
        .to_string();
        assert_eq!(e, "overlays[0].pre_script must be a local path, not a URL");
        // YAML bool true is the string "true": compiles, always matches
        validate_overlays(&h("overlays: [{when: true}]\n")).unwrap();
    }

    #[test]
    fn first_true_overlay_wins_errors_are_non_matches() {
        let mut x = h("env: {runner: {K: top}}\noverlays:\n  - {when: \"event.missing == 'x'\", env: {runner: {K: err}}}\n  - {when: \"runtime.forge == 'gitlab'\", env: {runner: {K: gl}}}\n  - {when: 'true', env: {runner: {K: last}}}\n");
        let ev = overlays::json_to_cel(&serde_json::json!({}));
        let cfg = overlays::json_to_cel(&serde_json::json!({}));
        let mut w = Vec::new();
        resolve_overlays(&mut x, &ev, "gitlab", &cfg, &mut w).unwrap();
        assert_eq!(x.cfg.env.unwrap().runner.unwrap()["K"], "gl");
        assert_eq!(w, ["harness: overlay[0].when eval failed: no such key"]);
        assert!(x.overlays.is_none());
    }
}
