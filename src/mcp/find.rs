//! Which strings of a server are literal secrets: a value the stores hold
//! (any form of the masker, [`crate::mask::Masker`]), a known token shape
//! (`ghp_…`, `sk-ant-…`, `AKIA…`), a password or a secret query parameter
//! in a URL, or a credential-like literal under a secret name (`API_KEY`,
//! `Authorization`, `--token`).
//!
//! Near misses are not findings: references (`${VAR}`, `$VAR`,
//! `${env:VAR}`, `{env:VAR}`, `${input:id}`, `op://…`), placeholders
//! (`<your-token>`, `xxx…`, `changeme`, `YOUR_API_KEY`), short words,
//! numbers and `true`/`false`.

use super::{Field, Literal};
use crate::mask::Masker;

/// Why a string is a finding (never the string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The stores hold this value (the variable, the form found).
    Stored {
        /// The store's variable.
        name: String,
        /// The masker's form (`raw`, `base64`, …).
        form: &'static str,
    },
    /// A known token shape.
    Shape(&'static str),
    /// A URL with a password in it.
    UrlPassword,
    /// A URL query parameter with a secret name.
    UrlQuery(String),
    /// A credential-like literal under a secret name.
    SecretName,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Stored { name, form } if *form == "raw" => {
                write!(f, "the value of {name} in the stores")
            }
            Why::Stored { name, form } => {
                write!(f, "the value of {name} in the stores, {form}")
            }
            Why::Shape(s) => write!(f, "{s}"),
            Why::UrlPassword => f.write_str("a password in the URL"),
            Why::UrlQuery(p) => write!(f, "the URL's {p} parameter"),
            Why::SecretName => f.write_str("a literal under a secret's name"),
        }
    }
}

impl Why {
    /// A short machine word for `--format json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Why::Stored { .. } => "stored-value",
            Why::Shape(_) => "token-shape",
            Why::UrlPassword => "url-password",
            Why::UrlQuery(_) => "url-query",
            Why::SecretName => "secret-name",
        }
    }
}

/// One token shape: a prefix, the bytes its body may hold, and the
/// body's least length.
struct Shape {
    prefix: &'static str,
    body: fn(u8) -> bool,
    min: usize,
    label: &'static str,
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn dashed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}
fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

/// Longest prefixes first: `sk-ant-` before `sk-`.
const SHAPES: &[Shape] = &[
    Shape {
        prefix: "github_pat_",
        body: word,
        min: 22,
        label: "a GitHub fine-grained token (github_pat_)",
    },
    Shape {
        prefix: "ghp_",
        body: alnum,
        min: 30,
        label: "a GitHub token (ghp_)",
    },
    Shape {
        prefix: "gho_",
        body: alnum,
        min: 30,
        label: "a GitHub OAuth token (gho_)",
    },
    Shape {
        prefix: "ghu_",
        body: alnum,
        min: 30,
        label: "a GitHub token (ghu_)",
    },
    Shape {
        prefix: "ghs_",
        body: alnum,
        min: 30,
        label: "a GitHub token (ghs_)",
    },
    Shape {
        prefix: "ghr_",
        body: alnum,
        min: 30,
        label: "a GitHub token (ghr_)",
    },
    Shape {
        prefix: "glpat-",
        body: dashed,
        min: 20,
        label: "a GitLab token (glpat-)",
    },
    Shape {
        prefix: "sk-ant-",
        body: dashed,
        min: 20,
        label: "an Anthropic key (sk-ant-)",
    },
    Shape {
        prefix: "sk-or-",
        body: dashed,
        min: 20,
        label: "an OpenRouter key (sk-or-)",
    },
    Shape {
        prefix: "sk-",
        body: dashed,
        min: 20,
        label: "an API key (sk-)",
    },
    Shape {
        prefix: "sk_live_",
        body: alnum,
        min: 20,
        label: "a Stripe key (sk_live_)",
    },
    Shape {
        prefix: "sk_test_",
        body: alnum,
        min: 20,
        label: "a Stripe key (sk_test_)",
    },
    Shape {
        prefix: "rk_live_",
        body: alnum,
        min: 20,
        label: "a Stripe key (rk_live_)",
    },
    Shape {
        prefix: "xoxb-",
        body: dashed,
        min: 10,
        label: "a Slack token (xoxb-)",
    },
    Shape {
        prefix: "xoxp-",
        body: dashed,
        min: 10,
        label: "a Slack token (xoxp-)",
    },
    Shape {
        prefix: "xoxa-",
        body: dashed,
        min: 10,
        label: "a Slack token (xoxa-)",
    },
    Shape {
        prefix: "xoxe-",
        body: dashed,
        min: 10,
        label: "a Slack token (xoxe-)",
    },
    Shape {
        prefix: "xapp-",
        body: dashed,
        min: 10,
        label: "a Slack app token (xapp-)",
    },
    Shape {
        prefix: "AKIA",
        body: upper_digit,
        min: 16,
        label: "an AWS access key id (AKIA)",
    },
    Shape {
        prefix: "ASIA",
        body: upper_digit,
        min: 16,
        label: "an AWS access key id (ASIA)",
    },
    Shape {
        prefix: "AIza",
        body: dashed,
        min: 35,
        label: "a Google API key (AIza)",
    },
    Shape {
        prefix: "hf_",
        body: alnum,
        min: 30,
        label: "a Hugging Face token (hf_)",
    },
    Shape {
        prefix: "npm_",
        body: alnum,
        min: 30,
        label: "an npm token (npm_)",
    },
    Shape {
        prefix: "pypi-",
        body: dashed,
        min: 50,
        label: "a PyPI token (pypi-)",
    },
    Shape {
        prefix: "gsk_",
        body: alnum,
        min: 30,
        label: "a Groq key (gsk_)",
    },
    Shape {
        prefix: "pplx-",
        body: alnum,
        min: 30,
        label: "a Perplexity key (pplx-)",
    },
    Shape {
        prefix: "lin_api_",
        body: alnum,
        min: 30,
        label: "a Linear key (lin_api_)",
    },
    Shape {
        prefix: "shpat_",
        body: alnum,
        min: 30,
        label: "a Shopify token (shpat_)",
    },
    Shape {
        prefix: "dop_v1_",
        body: alnum,
        min: 40,
        label: "a DigitalOcean token (dop_v1_)",
    },
    Shape {
        prefix: "figd_",
        body: dashed,
        min: 30,
        label: "a Figma token (figd_)",
    },
    Shape {
        prefix: "ntn_",
        body: alnum,
        min: 30,
        label: "a Notion token (ntn_)",
    },
    Shape {
        prefix: "secret_",
        body: alnum,
        min: 40,
        label: "a Notion token (secret_)",
    },
    Shape {
        prefix: "SG.",
        body: dashed,
        min: 40,
        label: "a SendGrid key (SG.)",
    },
    Shape {
        prefix: "eyJ",
        body: jwt,
        min: 30,
        label: "a JSON Web Token (eyJ…)",
    },
];

fn jwt(b: u8) -> bool {
    dashed(b) || b == b'.'
}

/// The token shape `s` holds, if any: a prefix at a word start, a body
/// long enough, mixed like a random token (a letter and a digit), not a
/// placeholder.
pub fn shape(s: &str) -> Option<&'static str> {
    let b = s.as_bytes();
    for sh in SHAPES {
        let p = sh.prefix.as_bytes();
        let mut from = 0;
        while let Some(at) = find(&b[from..], p).map(|i| i + from) {
            from = at + 1;
            if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
                continue;
            }
            let body_start = at + p.len();
            let body_len = b[body_start..]
                .iter()
                .take_while(|&&c| (sh.body)(c))
                .count();
            let body = &s[body_start..body_start + body_len];
            if body_len < sh.min || !random_like(body) || placeholder(body) {
                continue;
            }
            if sh.prefix == "eyJ" && body.matches('.').count() != 2 {
                continue;
            }
            return Some(sh.label);
        }
    }
    None
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// A letter and a digit: what a random token has and a word does not.
fn random_like(s: &str) -> bool {
    s.bytes().any(|c| c.is_ascii_digit()) && s.bytes().any(|c| c.is_ascii_alphabetic())
}

/// A placeholder a user is meant to replace.
pub fn placeholder(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    let words = [
        "xxxx",
        "your",
        "changeme",
        "change_me",
        "change-me",
        "placeholder",
        "example",
        "dummy",
        "redacted",
        "replace",
        "insert",
        "todo",
        "fixme",
        "<",
        "...",
        "***",
        "…",
        "0000000000",
    ];
    words.iter().any(|w| l.contains(w)) || l.chars().all(|c| c == 'x' || c == '*' || c == '-')
}

/// `s` with every reference (`${…}`, `$NAME`, `{env:…}`, `{file:…}`) cut
/// out: what is left is literal. `op://…` and `vault://…` leave nothing.
pub fn literal_part(s: &str) -> String {
    let t = s.trim();
    if ["op://", "vault://", "keychain:", "bws://", "sops://"]
        .iter()
        .any(|p| t.starts_with(p))
    {
        return String::new();
    }
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'$' && b.get(i + 1) == Some(&b'{') {
            if let Some(end) = s[i..].find('}') {
                i += end + 1;
                out.push(' ');
                continue;
            }
        }
        if c == b'$'
            && b.get(i + 1)
                .is_some_and(|&n| n.is_ascii_alphabetic() || n == b'_')
        {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(' ');
            continue;
        }
        if c == b'{' && (s[i..].starts_with("{env:") || s[i..].starts_with("{file:")) {
            if let Some(end) = s[i..].find('}') {
                i += end + 1;
                out.push(' ');
                continue;
            }
        }
        let ch = s[i..].chars().next().expect("in bounds");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// A variable, header or flag name that says "secret": one of its words
/// (split at `_` and `-`) is `TOKEN`, `SECRET`, `PASSWORD`, `AUTH`,
/// `AUTHORIZATION`, `APIKEY`, `PAT`, `COOKIE`, `CREDENTIAL(S)`, … or it
/// ends in `KEY`; not when it names a file, path, URL, id, … of one.
pub fn secret_name(name: &str) -> bool {
    let n = name
        .trim_start_matches('-')
        .to_ascii_uppercase()
        .replace('-', "_");
    let words: Vec<&str> = n.split('_').filter(|w| !w.is_empty()).collect();
    let not = [
        "FILE", "PATH", "DIR", "URL", "URI", "ENV", "VAR", "NAME", "HELPER", "CMD", "COMMAND",
        "TYPE", "MODE", "ID", "HOST", "PORT", "LENGTH", "LEN", "EXPIRY", "EXPIRES", "TTL",
    ];
    if words.last().is_some_and(|w| not.contains(w)) {
        return false;
    }
    let secret = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "APIKEY",
        "AUTH",
        "AUTHORIZATION",
        "CREDENTIAL",
        "CREDENTIALS",
        "COOKIE",
        "PAT",
        "BEARER",
        "KEY",
        "PRIVATEKEY",
        "ACCESSKEY",
    ];
    words.iter().any(|w| secret.contains(w)) || words.last().is_some_and(|w| w.ends_with("KEY"))
}

/// A string that could be a credential: long enough, no blanks after an
/// auth scheme word, not a path, a URL, a number or a word.
pub fn credential_like(s: &str) -> bool {
    let mut t = s.trim();
    for scheme in ["Bearer ", "bearer ", "Basic ", "basic ", "token ", "Token "] {
        if let Some(rest) = t.strip_prefix(scheme) {
            t = rest.trim();
        }
    }
    if t.len() < 8 || t.contains(char::is_whitespace) || placeholder(t) {
        return false;
    }
    if t.starts_with('/') || t.starts_with("~/") || t.starts_with("./") || t.contains("://") {
        return false;
    }
    if t.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let classes = [
        t.bytes().any(|c| c.is_ascii_lowercase()),
        t.bytes().any(|c| c.is_ascii_uppercase()),
        t.bytes().any(|c| c.is_ascii_digit()),
    ]
    .iter()
    .filter(|&&x| x)
    .count();
    classes >= 2 || t.len() >= 24
}

/// Secret-named query parameters of a URL.
const QUERY_SECRETS: &[&str] = &[
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "auth",
    "sig",
    "signature",
    "client_secret",
];

/// A password or a secret query parameter in any URL inside `s`.
fn url_secret(s: &str) -> Option<Why> {
    let mut from = 0;
    while let Some(at) = s[from..].find("://").map(|i| i + from) {
        from = at + 3;
        let rest = &s[at + 3..];
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(rest.len());
        let url = &rest[..end];
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let authority = &url[..authority_end];
        if let Some(userinfo) = authority.rsplit_once('@').map(|(u, _)| u) {
            if let Some((_, pw)) = userinfo.split_once(':') {
                let pw = literal_part(pw);
                if !pw.trim().is_empty() && !placeholder(&pw) && pw.trim().len() >= 4 {
                    return Some(Why::UrlPassword);
                }
            }
        }
        if let Some(q) = url.find('?').map(|i| &url[i + 1..]) {
            let q = q.split('#').next().unwrap_or("");
            for pair in q.split('&') {
                if let Some((k, v)) = pair.split_once('=') {
                    let kl = k.to_ascii_lowercase();
                    let v = literal_part(v);
                    if (QUERY_SECRETS.contains(&kl.as_str()) || secret_name(k))
                        && credential_like(&v)
                    {
                        return Some(Why::UrlQuery(k.to_string()));
                    }
                }
            }
        }
    }
    None
}

/// What the finder knows: the masker of the stores' values.
pub struct Finder<'a> {
    masker: &'a Masker,
}

impl<'a> Finder<'a> {
    /// A finder looking for `masker`'s needles (and the shapes).
    pub fn new(masker: &'a Masker) -> Finder<'a> {
        Finder { masker }
    }

    /// Why the string `lit` (with `prev`, the argument before it, for
    /// `--token VALUE`) is a literal secret, or `None`.
    pub fn why(&self, lit: &Literal, prev: Option<&str>) -> Option<Why> {
        let literal = literal_part(&lit.value);
        if literal.trim().is_empty() {
            return None;
        }
        if let Some(f) = self.masker.find_iter(literal.as_bytes()).next() {
            let n = &self.masker.needles()[f.needle];
            return Some(Why::Stored {
                name: n.name.clone(),
                form: n.form.as_str(),
            });
        }
        if let Some(s) = shape(&literal) {
            return Some(Why::Shape(s));
        }
        if literal.contains("://") {
            if let Some(w) = url_secret(&lit.value) {
                return Some(w);
            }
        }
        let name: Option<&str> = match &lit.field {
            Field::Env(k) | Field::Header(k) => Some(k),
            Field::Arg(_) => {
                // --token=VALUE, or --token VALUE.
                match lit.value.split_once('=') {
                    Some((flag, v)) if flag.starts_with("--") && secret_name(flag) => {
                        return credential_like(&literal_part(v)).then_some(Why::SecretName);
                    }
                    _ => prev.filter(|p| p.starts_with('-') && !p.contains('=')),
                }
            }
            Field::Url(_) => None,
        };
        match name {
            Some(n) if secret_name(n) && credential_like(&literal) => Some(Why::SecretName),
            _ => None,
        }
    }
}

/// The findings of one server: `(literal index, why)`.
pub fn server_findings(finder: &Finder, server: &super::Server) -> Vec<(usize, Why)> {
    let mut out = Vec::new();
    let mut prev: Option<&str> = None;
    for (i, lit) in server.literals.iter().enumerate() {
        let p = if matches!(lit.field, Field::Arg(_)) {
            prev
        } else {
            None
        };
        if let Some(w) = finder.why(lit, p) {
            out.push((i, w));
        }
        prev = match lit.field {
            Field::Arg(_) => Some(lit.value.as_str()),
            _ => prev,
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(field: Field, v: &str) -> Literal {
        Literal {
            field,
            value: v.to_string(),
        }
    }

    fn why(m: &Masker, field: Field, v: &str) -> Option<Why> {
        Finder::new(m).why(&lit(field, v), None)
    }

    #[test]
    fn shapes_and_near_misses() {
        let m = Masker::new(Vec::new());
        let env = |v: &str| why(&m, Field::Env("X".into()), v);
        for v in [
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "sk-ant-api03-AbCdEf0123456789-xyzXYZ",
            "sk-proj-0123456789abcdefABCDEF",
            "xoxb-123456789012-abcdefABCDEF",
            "AKIAIOSFODNN7EXAMPL2",
            "AIzaSyA-0123456789abcdefghijABCDEFGHIJK",
            "glpat-0123456789abcdefABCD",
            "Bearer sk-0123456789abcdefABCDEFxyz",
        ] {
            assert!(matches!(env(v), Some(Why::Shape(_))), "{v}");
        }
        for v in [
            "${GITHUB_TOKEN}",
            "$GITHUB_TOKEN",
            "{env:GITHUB_TOKEN}",
            "${env:GITHUB_TOKEN}",
            "${input:github-token}",
            "<your-token>",
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "xxx",
            "true",
            "3000",
            "debug",
            "op://vault/item/field",
            "sk-your-key-here-000000000000",
            "mask-secrets-before-sending-them",
            "Bearer ${API_TOKEN}",
        ] {
            assert_eq!(env(v), None, "{v}");
        }
    }

    #[test]
    fn secret_names_and_urls() {
        let m = Masker::new(Vec::new());
        let e = |k: &str, v: &str| why(&m, Field::Env(k.into()), v);
        assert_eq!(
            e("BRAVE_API_KEY", "BSAq1w2e3r4t5y6u7i8o9p0"),
            Some(Why::SecretName)
        );
        assert_eq!(e("BRAVE_API_KEY", "${BRAVE_API_KEY}"), None);
        assert_eq!(e("API_KEY_FILE", "AbCd1234EfGh5678"), None);
        assert_eq!(e("LOG_LEVEL", "AbCd1234EfGh5678"), None);
        assert_eq!(e("API_KEY", "changeme"), None);
        assert_eq!(e("AUTHOR", "JohnDoe1234"), None);
        assert_eq!(e("TOKENIZERS_PARALLELISM", "FalseTrue12"), None);
        assert_eq!(e("apiKey", "AbCd1234EfGh5678"), Some(Why::SecretName));
        assert_eq!(e("DB_PASS", "AbCd1234EfGh5678"), Some(Why::SecretName));
        assert_eq!(e("TOKEN", "short1"), None);
        let h = |k: &str, v: &str| why(&m, Field::Header(k.into()), v);
        assert_eq!(
            h("Authorization", "Bearer AbCd1234EfGh5678"),
            Some(Why::SecretName)
        );
        assert_eq!(h("Authorization", "Bearer ${TOKEN}"), None);
        let u = |v: &str| why(&m, Field::Url("url".into()), v);
        assert_eq!(u("postgres://app:Hunter2pw@db/x"), Some(Why::UrlPassword));
        assert_eq!(
            u("https://h/mcp?api_key=Ab12Cd34Ef56"),
            Some(Why::UrlQuery("api_key".into()))
        );
        assert_eq!(u("https://h/mcp?api_key=${KEY}"), None);
        assert_eq!(u("https://user:${PW}@h/"), None);
        assert_eq!(u("https://h/mcp"), None);
        let f = Finder::new(&m);
        let a = |v: &str, prev| f.why(&lit(Field::Arg(1), v), prev);
        assert_eq!(a("--api-key=AbCd1234EfGh5678", None), Some(Why::SecretName));
        assert_eq!(
            a("AbCd1234EfGh5678", Some("--token")),
            Some(Why::SecretName)
        );
        assert_eq!(a("AbCd1234EfGh5678", Some("--name")), None);
        assert_eq!(a("@modelcontextprotocol/server-github", Some("-y")), None);
    }

    #[test]
    fn stored_values_in_any_form() {
        let m = Masker::new([("MY_KEY".to_string(), b"plain-Secret-42".to_vec())]);
        let e = |v: &str| why(&m, Field::Env("X".into()), v);
        assert_eq!(
            e("plain-Secret-42"),
            Some(Why::Stored {
                name: "MY_KEY".into(),
                form: "raw"
            })
        );
        let b64 = crate::mask::base64_padded(b"plain-Secret-42");
        assert!(matches!(
            e(std::str::from_utf8(&b64).unwrap()),
            Some(Why::Stored { .. })
        ));
        let hex: String = b"plain-Secret-42"
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(matches!(e(&hex), Some(Why::Stored { .. })));
        assert_eq!(e("plain-Secret-4"), None);
    }
}
