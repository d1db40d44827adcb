//! Every merge of the harness (fullsend's merge rules,
//! docs/harness.md#harness-runners: base composition, forge blocks, host files by
//! dest, each base layer resolved first, `validation_loop` by field): a flat
//! base layer into the layer that names it (`mergeBaseIntoChild`: the
//! overriding layer wins), and a forge block or overlay entry over the top
//! level (`mergeForgeConfig`: the block wins). Pure: no I/O.

use super::schema::{Config, EnvConfig, EnvMap, Harness, HostFile, ValidationLoop};
use std::collections::HashMap;

/// Copy base keys missing from `over` (child / block keys win).
fn merge_map(base: &Option<EnvMap>, over: &mut Option<EnvMap>) {
    if let Some(b) = base {
        let o = over.get_or_insert_with(EnvMap::new);
        for (k, v) in b {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

fn merge_env(base: &Option<EnvConfig>, over: &mut Option<EnvConfig>) {
    if let Some(b) = base {
        let o = over.get_or_insert_with(EnvConfig::default);
        merge_map(&b.runner, &mut o.runner);
        merge_map(&b.sandbox, &mut o.sandbox);
    }
}

/// `mergeHostFiles(base, over)`: the base entries in order, then each `over`
/// entry in order: one whose `dest` (exact text) is already present
/// replaces the *last* entry with that dest — possibly one appended a
/// moment ago from `over` itself — otherwise it is appended. Indexed by
/// dest: linear in the sizes of both lists.
pub fn merge_host_files(base: &[HostFile], over: &[HostFile]) -> Vec<HostFile> {
    let mut res: Vec<HostFile> = Vec::with_capacity(base.len() + over.len());
    let mut last: HashMap<&str, usize> = HashMap::with_capacity(base.len() + over.len());
    for f in base {
        last.insert(f.dest.as_str(), res.len());
        res.push(f.clone());
    }
    for f in over {
        match last.get(f.dest.as_str()) {
            Some(&i) => res[i] = f.clone(),
            None => {
                last.insert(f.dest.as_str(), res.len());
                res.push(f.clone());
            }
        }
    }
    res
}

/// `mergeValidationLoop(base, over)`: field by field, the overriding
/// side's value when non-empty (non-zero), else the other's.
pub fn merge_validation_loop(base: &ValidationLoop, over: &ValidationLoop) -> ValidationLoop {
    let pick = |o: &String, b: &String| if o.is_empty() { b.clone() } else { o.clone() };
    let zero = |s: &str| {
        let t = s.replace('_', "");
        let t = t.trim_start_matches(['+', '-']);
        let digits = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0o"))
            .or_else(|| t.strip_prefix("0b"))
            .unwrap_or(t);
        digits.bytes().all(|b| b == b'0')
    };
    ValidationLoop {
        script: pick(&over.script, &base.script),
        schema: pick(&over.schema, &base.schema),
        max_iterations: if zero(&over.max_iterations) {
            base.max_iterations.clone()
        } else {
            over.max_iterations.clone()
        },
        feedback_mode: pick(&over.feedback_mode, &base.feedback_mode),
        preflight_check: pick(&over.preflight_check, &base.preflight_check),
    }
}

fn merge_loops(
    base: &Option<ValidationLoop>,
    over: &Option<ValidationLoop>,
) -> Option<ValidationLoop> {
    match (base, over) {
        (Some(b), Some(o)) => Some(merge_validation_loop(b, o)),
        (b, None) => b.clone(),
        (None, o) => o.clone(),
    }
}

fn merge_scalar(base: &str, over: &mut String) {
    if over.is_empty() {
        *over = base.to_string();
    }
}

/// Merge a flat base layer's field set under `over` (`over` wins):
/// scalars when empty, env maps additively (keys of `over` win), host
/// files by dest (only when the base has a list, as the reference does),
/// validation_loop field by field.
pub fn merge_config(base: &Config, over: &mut Config) {
    merge_scalar(&base.pre_script, &mut over.pre_script);
    merge_scalar(&base.post_script, &mut over.post_script);
    merge_scalar(&base.policy, &mut over.policy);
    merge_map(&base.runner_env, &mut over.runner_env);
    merge_env(&base.env, &mut over.env);
    if let Some(b) = &base.host_files {
        let o = over.host_files.take().unwrap_or_default();
        over.host_files = Some(merge_host_files(b, &o));
    }
    over.validation_loop = merge_loops(&base.validation_loop, &over.validation_loop);
}

/// `mergeForgeConfig`: apply a forge block or overlay entry over the top
/// level (the block wins). Host files merge whenever the block has a list.
pub fn apply_block(top: &mut Config, block: &Config) {
    for (t, b) in [
        (&mut top.pre_script, &block.pre_script),
        (&mut top.post_script, &block.post_script),
        (&mut top.policy, &block.policy),
    ] {
        if !b.is_empty() {
            *t = b.clone();
        }
    }
    if let Some(b) = &block.host_files {
        let t = top.host_files.take().unwrap_or_default();
        top.host_files = Some(merge_host_files(&t, b));
    }
    let over = |t: &mut Option<EnvMap>, b: &Option<EnvMap>| {
        if let Some(b) = b {
            let t = t.get_or_insert_with(EnvMap::new);
            for (k, v) in b {
                t.insert(k.clone(), v.clone());
            }
        }
    };
    over(&mut top.runner_env, &block.runner_env);
    if let Some(be) = &block.env {
        let te = top.env.get_or_insert_with(EnvConfig::default);
        over(&mut te.runner, &be.runner);
        over(&mut te.sandbox, &be.sandbox);
    }
    if block.validation_loop.is_some() {
        top.validation_loop = merge_loops(&top.validation_loop, &block.validation_loop);
    }
}

/// `mergeBaseIntoChild(base, child)` with a flat base (its forge block and
/// overlays already resolved and dropped, fullsend main since #6798): the
/// child's values win; `trigger` is inherited (#7350);
/// `allowed_remote_resources` and `allow_runtime_fetch` never are.
pub fn merge_base_into_child(base: &Harness, child: &mut Harness) {
    debug_assert!(base.forge.is_none() && base.overlays.is_none());
    merge_scalar(&base.agent, &mut child.agent);
    merge_scalar(&base.role, &mut child.role);
    merge_scalar(&base.slug, &mut child.slug);
    merge_scalar(&base.trigger, &mut child.trigger);
    merge_config(&base.cfg, &mut child.cfg);
    child.base = None;
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;
    use std::path::Path;

    fn h(s: &str) -> Harness {
        parse_harness(s, Path::new("t.yaml")).unwrap()
    }

    /// `child` after `base` is merged into it.
    fn merged(base: &str, child: &str) -> Harness {
        let mut c = h(child);
        merge_base_into_child(&h(base), &mut c);
        c
    }

    fn files(hf: &[HostFile]) -> Vec<(&str, &str)> {
        hf.iter()
            .map(|f| (f.src.as_str(), f.dest.as_str()))
            .collect()
    }

    #[test]
    fn scalars_child_wins_unless_empty_and_trigger_is_inherited() {
        let child = merged("agent: a\nrole: r\nslug: s\ntrigger: \"event.x == 1\"\nallowed_remote_resources: ['https://x/']\n", "agent: ''\nrole: c\n");
        assert_eq!(child.agent, "a");
        assert_eq!(child.role, "c");
        assert_eq!(child.slug, "s");
        assert_eq!(child.trigger, "event.x == 1");
        assert_eq!(child.allowed_remote_resources, None);
    }

    #[test]
    fn env_submaps_merge_independently() {
        let child = merged(
            "env:\n  runner: {A: b, K: b}\n  sandbox: {S: b}\n",
            "env:\n  runner: {K: c, C: c}\n",
        );
        let env = child.cfg.env.unwrap();
        let r = env.runner.unwrap();
        assert_eq!(
            (r["A"].as_str(), r["K"].as_str(), r["C"].as_str()),
            ("b", "c", "c")
        );
        assert_eq!(env.sandbox.unwrap()["S"], "b");
        // a child null value sets "", it does not remove
        let child = merged("env:\n  sandbox: {K: b}\n", "env:\n  sandbox: {K: ~}\n");
        assert_eq!(child.cfg.env.unwrap().sandbox.unwrap()["K"], "");
    }

    #[test]
    fn runner_env_additive() {
        let child = merged("runner_env: {A: b, K: b}\n", "runner_env: {K: c}\n");
        let r = child.cfg.runner_env.unwrap();
        assert_eq!((r["A"].as_str(), r["K"].as_str()), ("b", "c"));
    }

    #[test]
    fn host_files_replace_the_last_entry_with_that_dest() {
        // fullsend merges host files by dest: child [x→/b, y→/b] over base
        // [z→/a] = [/a←z, /b←y].
        let child = merged(
            "host_files:\n  - {src: z, dest: /a}\n",
            "host_files:\n  - {src: x, dest: /b}\n  - {src: y, dest: /b}\n",
        );
        assert_eq!(
            files(&child.cfg.host_files.unwrap()),
            [("z", "/a"), ("y", "/b")]
        );
        // In place, exact text, taking over expand/optional.
        let child = merged(
            "host_files:\n  - {src: a, dest: /x}\n  - {src: b, dest: /y, expand: true}\n",
            "host_files:\n  - {src: c, dest: /z}\n  - {src: d, dest: /y}\n  - {src: e, dest: /X}\n",
        );
        let hf = child.cfg.host_files.unwrap();
        assert_eq!(
            files(&hf),
            [("a", "/x"), ("d", "/y"), ("c", "/z"), ("e", "/X")]
        );
        assert!(!hf[1].expand);
        // Duplicates within the base stay; the child replaces the last.
        let got = merge_host_files(
            &h("host_files: [{src: 1, dest: /d}, {src: 2, dest: /d}]\n")
                .cfg
                .host_files
                .unwrap(),
            &h("host_files: [{src: 3, dest: /d}]\n")
                .cfg
                .host_files
                .unwrap(),
        );
        assert_eq!(files(&got), [("1", "/d"), ("3", "/d")]);
        // A block collapses its own duplicates even over an empty top.
        let mut top = h("agent: a\n").cfg;
        apply_block(
            &mut top,
            &h("host_files: [{src: 1, dest: /d}, {src: 2, dest: /d}]\n").cfg,
        );
        assert_eq!(files(&top.host_files.unwrap()), [("2", "/d")]);
        // No base list: the child's list is kept as written.
        let child = merged(
            "agent: a\n",
            "host_files: [{src: 1, dest: /d}, {src: 2, dest: /d}]\n",
        );
        assert_eq!(child.cfg.host_files.unwrap().len(), 2);
    }

    #[test]
    fn host_file_merge_is_linear() {
        let mk = |n: usize, tag: &str| -> Vec<HostFile> {
            (0..n)
                .map(|i| HostFile {
                    src: format!("{tag}{i}"),
                    dest: format!("/sandbox/{i}"),
                    ..Default::default()
                })
                .collect()
        };
        let (b, c) = (mk(150_000, "b"), mk(150_000, "c"));
        let t = std::time::Instant::now();
        let got = merge_host_files(&b, &c);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
        assert_eq!(got.len(), 150_000);
        assert_eq!(got[149_999].src, "c149999");
    }

    #[test]
    fn validation_loop_merges_field_by_field() {
        let child = merged("validation_loop: {script: s1, schema: sc1, max_iterations: 3, feedback_mode: append, preflight_check: p1}\n", "validation_loop: {schema: sc2, max_iterations: 0}\n");
        let vl = child.cfg.validation_loop.unwrap();
        assert_eq!(
            (
                vl.script.as_str(),
                vl.schema.as_str(),
                vl.max_iterations.as_str(),
                vl.feedback_mode.as_str(),
                vl.preflight_check.as_str()
            ),
            ("s1", "sc2", "3", "append", "p1")
        );
        // A block too: it may omit script.
        let mut top = h("validation_loop: {script: top.sh, schema: a}\n").cfg;
        apply_block(&mut top, &h("validation_loop: {schema: b}\n").cfg);
        let vl = top.validation_loop.unwrap();
        assert_eq!((vl.script.as_str(), vl.schema.as_str()), ("top.sh", "b"));
    }

    #[test]
    fn block_wins_over_top() {
        let mut top =
            h("env:\n  runner: {K: top, T: top}\nhost_files:\n  - {src: a, dest: /d}\n").cfg;
        let block = h("env:\n  runner: {K: blk}\nhost_files:\n  - {src: b, dest: /d}\nvalidation_loop: {script: x}\n").cfg;
        apply_block(&mut top, &block);
        let r = top.env.as_ref().unwrap().runner.as_ref().unwrap();
        assert_eq!((r["K"].as_str(), r["T"].as_str()), ("blk", "top"));
        assert_eq!(top.host_files.unwrap()[0].src, "b");
        assert_eq!(top.validation_loop.unwrap().script, "x");
    }
}
