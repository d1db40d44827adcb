//! `harness run --redact`: the values its masker hides.

/// `harness run --redact`: every value of the resolved runner and sandbox
/// maps is sensitive (one pair per name; the runner's value first).
pub(crate) fn sensitive_pairs(r: &super::Resolved) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let maps = [
        &r.effective_runner_env,
        &r.runner_env,
        &r.env_runner,
        &r.env_sandbox,
    ];
    let entries = maps
        .into_iter()
        .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())))
        .chain(r.sandbox_entries.iter().cloned());
    for (k, v) in entries {
        let v = v.as_encoded_bytes().to_vec();
        if !out.iter().any(|(k2, v2)| *k2 == k && *v2 == v) {
            out.push((k, v));
        }
    }
    out
}
