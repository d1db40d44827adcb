//! `vault://MOUNT/PATH#FIELD`: OpenBao / HashiCorp Vault, the KV version
//! 2 HTTP API (`GET /v1/MOUNT/data/PATH`), natively with `ureq` (rustls on
//! the `ring` provider). One read per distinct path, shared by its fields.
//!
//! - Address: `BAO_ADDR`, else `VAULT_ADDR`. `https://` is verified
//!   against the system roots (the first CA bundle found of the usual
//!   places; Mozilla's roots when there is none) plus `VAULT_CACERT`
//!   (`BAO_CACERT`); plain `http://` only to a loopback address.
//! - Token: `BAO_TOKEN`, else `VAULT_TOKEN`, else `~/.vault-token`. Never in a
//!   message; the daemon's key holds a hash of it.
//! - `VAULT_NAMESPACE` (`BAO_NAMESPACE`) as the `X-Vault-Namespace` header.
//! - No redirects are followed (a token is never sent elsewhere).

use super::{Ctx, Outcome, Provider, Ref};
use std::sync::Arc;

pub(crate) struct Vault;

fn parts(r: &Ref) -> (&str, &str, &str) {
    match r {
        Ref::Vault { mount, path, field } => (mount, path, field),
        _ => unreachable!("vault provider given another scheme"),
    }
}

/// The first of `names` set in the load's environment.
fn first<'a>(ctx: &'a Ctx<'_>, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| ctx.var(n))
}

/// The server's address without a trailing `/`, checked.
fn address(ctx: &Ctx<'_>) -> Result<String, String> {
    let addr = first(ctx, &["BAO_ADDR", "VAULT_ADDR"])
        .ok_or("no server address: set BAO_ADDR or VAULT_ADDR")?
        .trim_end_matches('/')
        .to_string();
    if let Some(rest) = addr.strip_prefix("http://") {
        let host = host_of(rest);
        if !loopback(host) {
            return Err(format!(
                "{addr}: plain http only to a loopback address (127.0.0.1, ::1, localhost); use https"
            ));
        }
    } else if !addr.starts_with("https://") {
        return Err("the server address is not an http(s) URL".into());
    }
    Ok(addr)
}

/// The host of `authority[/...]` (brackets of an IPv6 address removed).
fn host_of(rest: &str) -> &str {
    let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
    let auth = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    if let Some(v6) = auth.strip_prefix('[') {
        return v6.split(']').next().unwrap_or("");
    }
    auth.split(':').next().unwrap_or("")
}

fn loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// The token, or why there is none.
fn token(ctx: &Ctx<'_>) -> Result<String, String> {
    if let Some(t) = first(ctx, &["BAO_TOKEN", "VAULT_TOKEN"]) {
        return Ok(t.to_string());
    }
    let file = ctx
        .home()
        .map(|h| h.join(".vault-token"))
        .ok_or("no token: set BAO_TOKEN or VAULT_TOKEN (no HOME for ~/.vault-token)")?;
    match crate::fsutil::read_input(&file, 64 * 1024) {
        Ok(b) => {
            let t = String::from_utf8_lossy(&b).trim().to_string();
            if t.is_empty() {
                Err(format!("no token: {} is empty", file.display()))
            } else {
                Ok(t)
            }
        }
        Err(_) => Err("no token: set BAO_TOKEN or VAULT_TOKEN, or log in (~/.vault-token)".into()),
    }
}

/// The CA bundles of the common systems, the first that exists is read.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/etc/openssl/cert.pem",
];

fn certs_of(pem: &[u8], out: &mut Vec<ureq::tls::Certificate<'static>>) {
    for item in ureq::tls::parse_pem(pem).flatten() {
        if let ureq::tls::PemItem::Certificate(c) = item {
            out.push(c);
        }
    }
}

/// An agent for `addr`: the time limit, no redirects, no proxy for a
/// loopback server, the roots.
fn agent(ctx: &Ctx<'_>, addr: &str) -> Result<ureq::Agent, String> {
    use ureq::tls::{RootCerts, TlsConfig};
    let mut roots = Vec::new();
    if addr.starts_with("https://") {
        if let Some(b) = SYSTEM_BUNDLES.iter().find_map(|p| std::fs::read(p).ok()) {
            certs_of(&b, &mut roots);
        }
        if let Some(ca) = first(ctx, &["BAO_CACERT", "VAULT_CACERT"]) {
            let pem = std::fs::read(ca).map_err(|e| {
                format!(
                    "VAULT_CACERT {ca}: cannot read it ({})",
                    crate::fsutil::io_kind(&e)
                )
            })?;
            let before = roots.len();
            certs_of(&pem, &mut roots);
            if roots.len() == before {
                return Err(format!("VAULT_CACERT {ca}: no PEM certificate in it"));
            }
        }
    }
    let tls = if roots.is_empty() {
        TlsConfig::builder().root_certs(RootCerts::WebPki).build()
    } else {
        TlsConfig::builder()
            .root_certs(RootCerts::Specific(Arc::new(roots)))
            .build()
    };
    let local = addr.starts_with("http://");
    let mut cfg = ureq::Agent::config_builder()
        .timeout_global(Some(ctx.timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .tls_config(tls);
    if local {
        cfg = cfg.proxy(None);
    }
    Ok(cfg.build().new_agent())
}

/// Why a request failed, without the URL's secrets (there are none in it)
/// or anything the server said.
fn transport(addr: &str, e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => format!("{addr} did not answer in time"),
        ureq::Error::Io(io) => format!("cannot reach {addr} ({})", crate::fsutil::io_kind(io)),
        ureq::Error::HostNotFound => format!("{addr}: host not found"),
        ureq::Error::ConnectionFailed => format!("cannot connect to {addr}"),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => {
            format!("{addr}: TLS failed (is the CA in VAULT_CACERT?)")
        }
        _ => format!("{addr}: the request failed"),
    }
}

fn status_reason(code: u16) -> String {
    match code {
        403 => "permission denied (HTTP 403: a wrong or expired token, or no read policy)".into(),
        404 => "no secret at this path (HTTP 404)".into(),
        c => format!("the server answered HTTP {c}"),
    }
}

/// `GET /v1/MOUNT/data/PATH`: the secret's `data` object.
fn read(
    agent: &ureq::Agent,
    addr: &str,
    token: &str,
    ns: Option<&str>,
    mount: &str,
    path: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let url = format!("{addr}/v1/{mount}/data/{path}");
    let mut req = agent.get(&url).header("X-Vault-Token", token);
    if let Some(ns) = ns {
        req = req.header("X-Vault-Namespace", ns);
    }
    let mut resp = req.call().map_err(|e| transport(addr, &e))?;
    let code = resp.status().as_u16();
    if code != 200 {
        return Err(status_reason(code));
    }
    let body = resp
        .body_mut()
        .with_config()
        .limit(4 << 20)
        .read_to_vec()
        .map_err(|e| transport(addr, &e))?;
    let v: serde_json::Value =
        serde_json::from_slice(&body).map_err(|_| "the server's answer is not KV v2 JSON")?;
    match v.pointer("/data/data") {
        Some(serde_json::Value::Object(m)) => Ok(m.clone()),
        Some(serde_json::Value::Null) => Err("the secret's latest version is deleted".into()),
        _ => Err("the server's answer has no data.data (is MOUNT a KV version 2 engine?)".into()),
    }
}

fn field_value(data: &serde_json::Map<String, serde_json::Value>, field: &str) -> Outcome {
    match data.get(field) {
        Some(serde_json::Value::String(s)) => Ok(s.clone().into_bytes()),
        Some(serde_json::Value::Null) | None => Err(format!("the secret has no field {field}")),
        Some(other) => Ok(other.to_string().into_bytes()),
    }
}

impl Provider for Vault {
    fn resolve(&self, refs: &[&Ref], ctx: &Ctx<'_>) -> Vec<Outcome> {
        let setup = (|| {
            let addr = address(ctx)?;
            let token = token(ctx)?;
            let agent = agent(ctx, &addr)?;
            Ok::<_, String>((addr, token, agent))
        })();
        let (addr, token, agent) = match setup {
            Ok(s) => s,
            Err(why) => return vec![Err(why); refs.len()],
        };
        let ns = first(ctx, &["BAO_NAMESPACE", "VAULT_NAMESPACE"]);
        // One read per distinct path, the reads in parallel.
        let mut paths: Vec<(&str, &str)> = Vec::new();
        for r in refs {
            let (m, p, _) = parts(r);
            if !paths.contains(&(m, p)) {
                paths.push((m, p));
            }
        }
        let reads: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = paths
                .iter()
                .map(|&(m, p)| {
                    let (agent, addr, token) = (&agent, &addr, &token);
                    s.spawn(move || read(agent, addr, token, ns, m, p))
                })
                .collect();
            hs.into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("the read failed (an internal error)".into()))
                })
                .collect()
        });
        refs.iter()
            .map(|r| {
                let (m, p, f) = parts(r);
                let i = paths.iter().position(|x| *x == (m, p)).expect("listed");
                match &reads[i] {
                    Ok(data) => field_value(data, f),
                    Err(why) => Err(why.clone()),
                }
            })
            .collect()
    }

    fn context(&self, _r: &Ref, ctx: &Ctx<'_>) -> Vec<u8> {
        let addr = first(ctx, &["BAO_ADDR", "VAULT_ADDR"]).unwrap_or("");
        let ns = first(ctx, &["BAO_NAMESPACE", "VAULT_NAMESPACE"]).unwrap_or("");
        let tok = token(ctx).unwrap_or_default();
        let th = blake3::hash(tok.as_bytes());
        format!("{addr}\n{ns}\n{}", th.to_hex()).into_bytes()
    }

    fn backend(&self, _r: &Ref, ctx: &Ctx<'_>) -> String {
        match first(ctx, &["BAO_ADDR", "VAULT_ADDR"]) {
            Some(a) => format!("OpenBao/Vault at {a}"),
            None => "OpenBao/Vault (no BAO_ADDR or VAULT_ADDR set)".into(),
        }
    }

    fn write(&self, r: &Ref, value: &[u8], ctx: &Ctx<'_>) -> Result<(), String> {
        let (mount, path, field) = parts(r);
        let addr = address(ctx)?;
        let token = token(ctx)?;
        let agent = agent(ctx, &addr)?;
        let ns = first(ctx, &["BAO_NAMESPACE", "VAULT_NAMESPACE"]);
        let value =
            std::str::from_utf8(value).map_err(|_| "the value is not UTF-8 (KV stores text)")?;
        let exists = match read(&agent, &addr, &token, ns, mount, path) {
            Ok(_) => true,
            Err(why) if why.contains("HTTP 404") => false,
            Err(why) => return Err(why),
        };
        let url = format!("{addr}/v1/{mount}/data/{path}");
        let body = serde_json::json!({ "data": { field: value } }).to_string();
        let mut req = if exists {
            agent
                .patch(&url)
                .header("Content-Type", "application/merge-patch+json")
        } else {
            agent.post(&url).header("Content-Type", "application/json")
        };
        req = req.header("X-Vault-Token", &token);
        if let Some(ns) = ns {
            req = req.header("X-Vault-Namespace", ns);
        }
        let resp = req
            .send(body.as_bytes())
            .map_err(|e| transport(&addr, &e))?;
        match resp.status().as_u16() {
            200 | 204 => Ok(()),
            c => Err(status_reason(c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_loopback() {
        for (h, ok) in [
            ("127.0.0.1:8200", true),
            ("localhost:8200/x", true),
            ("[::1]:8200", true),
            ("user@127.0.0.1", true),
            ("vault.example.com:8200", false),
            ("127.0.0.1.evil.com", false),
            ("10.0.0.1", false),
        ] {
            assert_eq!(loopback(host_of(h)), ok, "{h}");
        }
    }
}
