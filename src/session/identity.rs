//! dotagents' identity stamp and its proxy normalisation: two pure functions
//! from the accumulated environment to a change set.

use crate::core::{ChangeSet, Env};
use std::ffi::OsStr;

/// One known agent harness.
#[derive(Debug, Clone, Copy)]
pub struct Agent {
    pub name: &'static str,
    pub harness_id: &'static str,
    pub vendor: &'static str,
    pub markers: &'static [&'static str],
    /// Any variable whose name starts with this is a marker too.
    pub marker_prefix: Option<&'static str>,
    pub model_vars: &'static [&'static str],
}

/// The registry, in detection order.
pub const REGISTRY: &[Agent] = &[
    Agent {
        name: "claude",
        harness_id: "claude-code",
        vendor: "anthropic",
        markers: &["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"],
        marker_prefix: None,
        model_vars: &["ANTHROPIC_MODEL"],
    },
    Agent {
        name: "gemini",
        harness_id: "gemini-cli",
        vendor: "google",
        markers: &["GEMINI_CLI"],
        marker_prefix: None,
        model_vars: &["GEMINI_MODEL"],
    },
    Agent {
        name: "antigravity",
        harness_id: "antigravity",
        vendor: "google",
        markers: &[],
        marker_prefix: None,
        model_vars: &[],
    },
    Agent {
        name: "codex",
        harness_id: "codex",
        vendor: "openai",
        markers: &["CODEX_SANDBOX"],
        marker_prefix: Some("CODEX_SANDBOX"),
        model_vars: &["OPENAI_MODEL"],
    },
    Agent {
        name: "cursor",
        harness_id: "cursor",
        vendor: "cursor",
        markers: &["CURSOR_AGENT"],
        marker_prefix: None,
        model_vars: &["CURSOR_DEFAULT_MODEL"],
    },
    Agent {
        name: "copilot",
        harness_id: "copilot",
        vendor: "github",
        markers: &[],
        marker_prefix: None,
        model_vars: &["COPILOT_MODEL"],
    },
    Agent {
        name: "pi",
        harness_id: "pi",
        vendor: "",
        markers: &["PI_CODING_AGENT"],
        marker_prefix: None,
        model_vars: &["PI_MODEL"],
    },
];

/// A registry entry by name or harness id.
pub fn lookup(name: &str) -> Option<&'static Agent> {
    REGISTRY
        .iter()
        .find(|a| a.name == name)
        .or_else(|| REGISTRY.iter().find(|a| a.harness_id == name))
}

fn get<'a>(env: &'a Env, k: &str) -> Option<&'a OsStr> {
    crate::core::get(env, k)
}

impl Agent {
    fn detected(&self, env: &Env) -> bool {
        self.markers.iter().any(|m| get(env, m).is_some())
            || self.marker_prefix.is_some_and(|p| {
                env.keys()
                    .any(|k| k.as_encoded_bytes().starts_with(p.as_bytes()))
            })
    }
}

/// The agent driving this process: `explicit` (a registry name) >
/// `$AGENTS_HARNESS` (name or harness id) > markers. `None` in a plain shell.
pub fn detect(env: &Env, explicit: Option<&str>) -> Option<&'static Agent> {
    if let Some(a) = explicit.and_then(|e| REGISTRY.iter().find(|a| a.name == e)) {
        return Some(a);
    }
    if let Some(h) = get(env, "AGENTS_HARNESS").filter(|v| !v.is_empty()) {
        if let Some(a) = h.to_str().and_then(lookup) {
            return Some(a);
        }
    }
    REGISTRY.iter().find(|a| a.detected(env))
}

/// The identity vars to stamp (reference `stamp_identity`).
pub fn stamp(env: &Env, explicit: Option<&str>) -> ChangeSet {
    let mut out = ChangeSet::new();
    let Some(a) = detect(env, explicit) else {
        return out;
    };
    let over = explicit.is_some_and(|e| REGISTRY.iter().any(|a| a.name == e));
    let mut set = |k: &str, v: &OsStr| {
        if !v.is_empty() && (over || get(env, k).is_none_or(|c| c.is_empty())) {
            out.set(k, v);
        }
    };
    set("AGENTS_HARNESS", OsStr::new(a.harness_id));
    set("AGENTS_VENDOR", OsStr::new(a.vendor));
    set("AGENT", OsStr::new(a.harness_id));
    if let Some(m) = a
        .model_vars
        .iter()
        .find_map(|v| get(env, v).filter(|x| !x.is_empty()))
    {
        set("AGENTS_MODEL", m);
    }
    out
}

const PROXY_SEED_ORDER: &[&str] = &[
    "AGENTS_WEBFETCH_PROXY_URL",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];
const PROXY_BASES: &[(&str, &str)] = &[
    ("HTTP_PROXY", "http_proxy"),
    ("HTTPS_PROXY", "https_proxy"),
    ("ALL_PROXY", "all_proxy"),
    ("NO_PROXY", "no_proxy"),
];

/// The proxy model over the post-chain env.
pub fn proxy(env: &Env) -> ChangeSet {
    let mut out = ChangeSet::new();
    let ne = |k: &str| get(env, k).filter(|v| !v.is_empty());
    if ne("AGENTS_PROXY").is_none() {
        if let Some(v) = PROXY_SEED_ORDER.iter().find_map(|k| ne(k)) {
            out.set("AGENTS_PROXY", v);
        }
    }
    for (up, lo) in PROXY_BASES {
        match (ne(up), ne(lo)) {
            (Some(u), None) => out.set(*lo, u),
            (None, Some(l)) => out.set(*up, l),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::env_of as env;

    #[test]
    fn plain_shell_stamps_nothing() {
        assert!(stamp(&env(&[("CODEX_HOME", "x"), ("ANTHROPIC_MODEL", "m")]), None).is_empty());
    }

    #[test]
    fn markers_and_no_clobber() {
        let c = stamp(
            &env(&[
                ("CLAUDECODE", ""),
                ("ANTHROPIC_MODEL", "m"),
                ("AGENT", "mine"),
            ]),
            None,
        );
        assert_eq!(c.get("AGENTS_HARNESS").unwrap(), "claude-code");
        assert_eq!(c.get("AGENTS_VENDOR").unwrap(), "anthropic");
        assert_eq!(c.get("AGENTS_MODEL").unwrap(), "m");
        assert!(c.get("AGENT").is_none());
        let c = stamp(&env(&[("CODEX_SANDBOX_NETWORK_DISABLED", "1")]), None);
        assert_eq!(c.get("AGENT").unwrap(), "codex");
        let c = stamp(&env(&[("PI_CODING_AGENT", "1")]), None);
        assert!(c.get("AGENTS_VENDOR").is_none());
        let c = stamp(
            &env(&[("AGENTS_HARNESS", "nope"), ("GEMINI_CLI", "1")]),
            None,
        );
        assert_eq!(c.get("AGENT").unwrap(), "gemini-cli");
        assert!(c.get("AGENTS_HARNESS").is_none());
    }

    #[test]
    fn explicit_overrides() {
        let c = stamp(
            &env(&[("CLAUDECODE", "1"), ("AGENT", "claude-code")]),
            Some("codex"),
        );
        assert_eq!(c.get("AGENT").unwrap(), "codex");
        assert_eq!(c.get("AGENTS_HARNESS").unwrap(), "codex");
    }

    #[test]
    fn proxy_model() {
        let c = proxy(&env(&[
            ("HTTPS_PROXY", "h"),
            ("http_proxy", "l"),
            ("NO_PROXY", "n"),
        ]));
        assert_eq!(c.get("AGENTS_PROXY").unwrap(), "h");
        assert_eq!(c.get("https_proxy").unwrap(), "h");
        assert_eq!(c.get("HTTP_PROXY").unwrap(), "l");
        assert_eq!(c.get("no_proxy").unwrap(), "n");
        assert!(c.get("ALL_PROXY").is_none());
        assert!(proxy(&env(&[("AGENTS_PROXY", "x")])).is_empty());
    }
}
