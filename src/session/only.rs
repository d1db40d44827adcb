//! `--only NAME,…` of `exec`, `launch` and `harness run`: the sensitive
//! variables a command is given.

/// Remove from `env` every name of `sensitive` that `only` does not
/// list; warn (names only) about a listed name no layer set, so a
/// server started without its credential says why.
pub(crate) fn keep_only(
    only: &[String],
    command: &str,
    env: &mut crate::core::Env,
    sensitive: &[(String, Vec<u8>)],
) {
    let mut removed = 0usize;
    for (name, _) in sensitive {
        if !only.iter().any(|n| n == name) {
            env.remove(std::ffi::OsStr::new(name));
            removed += 1;
        }
    }
    for n in only {
        if !sensitive.iter().any(|(k, _)| k == n) {
            let why = if env.contains_key(std::ffi::OsStr::new(n)) {
                "it is not one of the sensitive variables the layers set (it passes as it is)"
            } else {
                "no layer sets it and the environment does not hold it"
            };
            crate::warn!("{command} --only {n}: {why}");
        }
    }
    crate::info!(
        "{command} --only: {} sensitive variable{} kept, {removed} removed",
        sensitive.len() - removed,
        if sensitive.len() - removed == 1 {
            ""
        } else {
            "s"
        }
    );
}
