//! `${VAR}` expansion of the resolved harness (fullsend's mappings and its
//! deny list): the expander mapping (`FULLSEND_DIR` → the fullsend dir, a
//! denied name → "", anything else → the host value or ""), applied to the env
//! maps. Values are bytes from here on: a host value that is not UTF-8 is
//! substituted unchanged.

use super::schema::EnvMap;
use crate::core::Env;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// Names never visible to expansion: they expand to "", count as unset in the
/// validation, are stripped from the `run` child's environment and are
/// reserved `env.sandbox` keys. The four OIDC keys, then the ones fullsend
/// main added by 2026-10-01.
pub const DENIED: [&str; 14] = [
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "FULLSEND_GCP_OIDC_URL",
    "FULLSEND_GCP_OIDC_AUTH_FILE",
    "FULLSEND_GCP_PROJECT_ID",
    "FULLSEND_GCP_WIF_PROVIDER",
    "FULLSEND_OPENAI_AUDIENCE",
    "FULLSEND_OPENAI_IDENTITY_PROVIDER_ID",
    "FULLSEND_OPENAI_SERVICE_ACCOUNT_ID",
    "OPENAI_API_KEY",
    "FULLSEND_OPENAI_API_KEY",
    "FULLSEND_TRIGGER_TOKEN",
    "FULLSEND_WEBHOOK_SECRET",
    "GH_WORKFLOW_TOKEN",
];

pub fn is_denied(name: &str) -> bool {
    DENIED.contains(&name)
}

/// The validation's lookup: `FULLSEND_DIR` is always set, a denied name
/// never, else the host decides (set-but-empty is set).
pub fn is_set(name: &str, host: &Env) -> bool {
    name == "FULLSEND_DIR" || (!is_denied(name) && host.contains_key(OsStr::new(name)))
}

/// A map after expansion: names stay text, values are bytes.
pub type ValueMap = BTreeMap<String, OsString>;

/// The expander mapping fullsend uses for the harness.
pub struct Expander<'a> {
    pub fullsend_dir: &'a OsStr,
    pub host: &'a Env,
}

impl Expander<'_> {
    pub fn lookup(&self, name: &str) -> Vec<u8> {
        if name == "FULLSEND_DIR" {
            self.fullsend_dir.as_bytes().to_vec()
        } else if is_denied(name) {
            Vec::new()
        } else {
            self.host
                .get(OsStr::new(name))
                .map(|v| v.as_bytes().to_vec())
                .unwrap_or_default()
        }
    }

    pub fn value(&self, raw: &str) -> OsString {
        OsString::from_vec(crate::expand::expand_bytes(raw, |n| self.lookup(n)))
    }

    pub fn map(&self, m: &EnvMap) -> ValueMap {
        m.iter().map(|(k, v)| (k.clone(), self.value(v))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expander_mapping() {
        let mut host = Env::new();
        host.insert("SET".into(), "v".into());
        host.insert("FULLSEND_DIR".into(), "/host".into());
        host.insert("OPENAI_API_KEY".into(), "sk".into());
        host.insert("RAW".into(), OsString::from_vec(b"a\xffb".to_vec()));
        let x = Expander {
            fullsend_dir: OsStr::new("/fs"),
            host: &host,
        };
        assert_eq!(x.value("$SET ${FULLSEND_DIR}/x"), "v /fs/x");
        assert_eq!(
            x.value("[${OPENAI_API_KEY}${GH_WORKFLOW_TOKEN}]$NOPE."),
            "[]."
        );
        assert_eq!(x.value("<${RAW}>").as_bytes(), b"<a\xffb>");
        assert!(is_set("FULLSEND_DIR", &Env::new()));
        assert!(!is_set("OPENAI_API_KEY", &host));
        assert!(is_set("SET", &host));
    }
}
