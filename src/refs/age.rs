//! `age:FILE#NAME`: a dotenv file encrypted with age (`age -r`/`-R`, also
//! to `ssh-ed25519` keys: a team encrypts to its members' SSH keys), FILE
//! relative to the store. Natively with the `age` crate; one decryption
//! per file, its plaintext kept in memory only for this load.
//!
//! Identity: `AGENTENV_AGE_IDENTITY` (a file), else
//! `~/.config/agentenv/age/identity.txt`, else `~/.ssh/id_ed25519` (an
//! unencrypted OpenSSH key: a passphrase-protected one is refused, with a
//! reason).

use super::{Ctx, Outcome, Provider, Ref};
use std::path::{Path, PathBuf};

pub(crate) struct Age;

fn parts(r: &Ref) -> (&str, &str) {
    match r {
        Ref::Age { file, name } => (file, name),
        _ => unreachable!("age provider given another scheme"),
    }
}

/// The identity file to use.
fn identity_path(ctx: &Ctx<'_>) -> Result<PathBuf, String> {
    if let Some(p) = ctx.var("AGENTENV_AGE_IDENTITY") {
        return Ok(PathBuf::from(p));
    }
    let home = ctx
        .home()
        .ok_or("no identity: set AGENTENV_AGE_IDENTITY (no HOME)")?;
    let own = home.join(".config/agentenv/age/identity.txt");
    if own.is_file() {
        return Ok(own);
    }
    let ssh = home.join(".ssh/id_ed25519");
    if ssh.is_file() {
        return Ok(ssh);
    }
    Err("no identity: set AGENTENV_AGE_IDENTITY, or put one in ~/.config/agentenv/age/identity.txt, or have ~/.ssh/id_ed25519".into())
}

type Identities = Vec<Box<dyn age::Identity + Send + Sync>>;

/// The identities in `path` (age's own format or an OpenSSH key).
fn identities(path: &Path) -> Result<Identities, String> {
    let shown = path.display();
    let bytes = crate::fsutil::read_input(path, 1 << 20).map_err(|e| {
        format!(
            "identity {shown}: cannot read it ({})",
            crate::fsutil::io_kind(&e)
        )
    })?;
    if bytes.starts_with(b"-----BEGIN") {
        let id = age::ssh::Identity::from_buffer(&bytes[..], Some(shown.to_string()))
            .map_err(|_| format!("identity {shown}: not an SSH key age can use"))?;
        return match id {
            age::ssh::Identity::Unencrypted(_) => Ok(vec![Box::new(id)]),
            age::ssh::Identity::Encrypted(_) => Err(format!(
                "identity {shown}: the SSH key has a passphrase; point AGENTENV_AGE_IDENTITY at an age identity instead"
            )),
            age::ssh::Identity::Unsupported(_) => Err(format!(
                "identity {shown}: this SSH key type is not supported (ssh-ed25519 and ssh-rsa are)"
            )),
        };
    }
    let file = age::IdentityFile::from_buffer(&bytes[..])
        .map_err(|_| format!("identity {shown}: not an age identity file"))?;
    file.into_identities()
        .map_err(|_| format!("identity {shown}: cannot use its identities"))
}

/// Decrypt `file` with `ids`: the plaintext, or why not.
fn decrypt(file: &Path, ids: &Identities) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let shown = file.display();
    let data = crate::fsutil::read_input(file, 16 << 20)
        .map_err(|e| format!("{shown}: cannot read it ({})", crate::fsutil::io_kind(&e)))?;
    let reader = age::armor::ArmoredReader::new(&data[..]);
    let d = age::Decryptor::new(reader).map_err(|_| format!("{shown}: not an age file"))?;
    let mut r = d
        .decrypt(ids.iter().map(|i| i.as_ref() as &dyn age::Identity))
        .map_err(|e| match e {
            age::DecryptError::NoMatchingKeys => {
                format!("{shown}: not encrypted to this identity (ask a teammate to add your key to its recipients)")
            }
            _ => format!("{shown}: cannot decrypt it"),
        })?;
    let mut out = Vec::new();
    r.read_to_end(&mut out)
        .map_err(|_| format!("{shown}: its ciphertext is damaged"))?;
    Ok(out)
}

/// The store-relative FILE, refused when it leaves the store.
fn file_in_store(ctx: &Ctx<'_>, file: &str) -> Result<PathBuf, String> {
    let p = Path::new(file);
    if p.is_absolute() || p.components().any(|c| c == std::path::Component::ParentDir) {
        return Err("age: FILE must be inside the store (a relative path without ..)".into());
    }
    Ok(ctx.cwd.join(ctx.store).join(p))
}

impl Provider for Age {
    fn resolve(&self, refs: &[&Ref], ctx: &Ctx<'_>) -> Vec<Outcome> {
        let ids = identity_path(ctx).and_then(|p| identities(&p));
        let mut plain: Vec<(&str, Result<crate::dotenv::Parsed, String>)> = Vec::new();
        refs.iter()
            .map(|r| {
                let (file, name) = parts(r);
                let ids = ids.as_ref().map_err(Clone::clone)?;
                if !plain.iter().any(|(f, _)| *f == file) {
                    let parsed = file_in_store(ctx, file)
                        .and_then(|p| decrypt(&p, ids))
                        .map(|text| crate::dotenv::parse_bytes(&text));
                    plain.push((file, parsed));
                }
                let parsed = &plain.iter().find(|(f, _)| *f == file).expect("kept").1;
                let parsed = parsed.as_ref().map_err(Clone::clone)?;
                parsed
                    .entries
                    .iter()
                    .find(|e| e.key == name)
                    .map(|e| e.value.clone().into_bytes())
                    .ok_or_else(|| format!("{file} has no {name}"))
            })
            .collect()
    }

    fn context(&self, r: &Ref, ctx: &Ctx<'_>) -> Vec<u8> {
        // The file's identity: an edited file is read again.
        let (file, _) = parts(r);
        let p = file_in_store(ctx, file).unwrap_or_default();
        let sig = std::fs::metadata(&p).map_or(String::from("-"), |m| {
            use std::os::unix::fs::MetadataExt;
            format!("{}:{}:{}:{}", m.ino(), m.mtime(), m.mtime_nsec(), m.size())
        });
        let id = identity_path(ctx).unwrap_or_default();
        format!("{}\n{sig}\n{}", p.display(), id.display()).into_bytes()
    }

    fn backend(&self, r: &Ref, ctx: &Ctx<'_>) -> String {
        let (file, _) = parts(r);
        let id = identity_path(ctx).map_or_else(|w| w, |p| p.display().to_string());
        format!(
            "age file {} (identity {id})",
            ctx.store.join(file).display()
        )
    }

    fn write(&self, r: &Ref, value: &[u8], ctx: &Ctx<'_>) -> Result<(), String> {
        use std::io::Write;
        let (file, name) = parts(r);
        let path = file_in_store(ctx, file)?;
        let value = std::str::from_utf8(value).map_err(|_| "the value is not UTF-8")?;
        let line = crate::dotenv::write_value(name, value)
            .ok_or("the value cannot be written as a dotenv line")?;
        // The recipients: FILE.recipients, one per line (age or ssh keys).
        let rfile = PathBuf::from(format!("{}.recipients", path.display()));
        let text = std::fs::read_to_string(&rfile).map_err(|e| {
            format!(
                "{}: cannot read the recipients ({}); list the team's public keys there, one a line",
                rfile.display(),
                crate::fsutil::io_kind(&e)
            )
        })?;
        let mut recipients: Vec<Box<dyn age::Recipient + Send>> = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            if let Ok(x) = l.parse::<age::x25519::Recipient>() {
                recipients.push(Box::new(x));
            } else if let Ok(s) = l.parse::<age::ssh::Recipient>() {
                recipients.push(Box::new(s));
            } else {
                return Err(format!(
                    "{}:{}: not an age or SSH public key",
                    rfile.display(),
                    i + 1
                ));
            }
        }
        if recipients.is_empty() {
            return Err(format!("{}: no recipient in it", rfile.display()));
        }
        // The old plaintext (in memory), NAME's line replaced or added.
        let old = if path.exists() {
            let ids = identity_path(ctx).and_then(|p| identities(&p))?;
            decrypt(&path, &ids)?
        } else {
            Vec::new()
        };
        let old = String::from_utf8(old).map_err(|_| format!("{file}: not UTF-8 inside"))?;
        let parsed = crate::dotenv::parse(&old);
        let at = parsed
            .entries
            .iter()
            .find(|e| e.key == name)
            .map(|e| e.line);
        let mut lines: Vec<String> = old.lines().map(str::to_string).collect();
        match at {
            Some(n) if (n as usize) <= lines.len() && !lines[n as usize - 1].ends_with('\\') => {
                lines[n as usize - 1] = line
            }
            Some(_) => return Err(format!("{file}: {name} spans lines; edit it by hand")),
            None => lines.push(line),
        }
        let mut plain = lines.join("\n");
        plain.push('\n');
        let enc = age::Encryptor::with_recipients(recipients.iter().map(|r| r.as_ref() as _))
            .map_err(|_| "cannot encrypt to these recipients")?;
        let mut out = Vec::new();
        let mut w = enc.wrap_output(&mut out).map_err(|_| "cannot encrypt")?;
        w.write_all(plain.as_bytes())
            .and_then(|_| w.finish().map(|_| ()))
            .map_err(|_| "cannot encrypt")?;
        crate::fsutil::write_atomic(&path, &out, crate::fsutil::Mode::KeepOrUmask, false).map_err(
            |e| {
                format!(
                    "{}: cannot write it ({})",
                    path.display(),
                    crate::fsutil::io_kind(&e)
                )
            },
        )
    }
}
