//! `keychain:SERVICE/ACCOUNT`: the OS keychain. On Linux the Secret
//! Service through libsecret's `secret-tool` (attributes `service` and
//! `account`, the ones the `keyring` crate uses); on macOS the login
//! keychain through `security`. The `keyring` crate would link zbus or
//! libdbus and an async runtime for one lookup per load (see
//! ARCHITECTURE.md); the two CLIs ship with the desktops that have the
//! stores.

use super::{Ctx, Outcome, Provider, Ref};

pub(crate) struct Keychain;

fn parts(r: &Ref) -> (&str, &str) {
    match r {
        Ref::Keychain { service, account } => (service, account),
        _ => unreachable!("keychain provider given another scheme"),
    }
}

fn macos() -> bool {
    cfg!(target_os = "macos")
}

impl Provider for Keychain {
    fn resolve(&self, refs: &[&Ref], ctx: &Ctx<'_>) -> Vec<Outcome> {
        refs.iter()
            .map(|r| {
                let (service, account) = parts(r);
                let (cmd, what) = if macos() {
                    let mut c = ctx.command("security");
                    c.args(["find-generic-password", "-s", service, "-a", account, "-w"]);
                    (c, "security find-generic-password")
                } else {
                    let mut c = ctx.command("secret-tool");
                    c.args(["lookup", "service", service, "account", account]);
                    (c, "secret-tool lookup")
                };
                let mut v = ctx.run(cmd, what)?;
                if macos() && v.last() == Some(&b'\n') {
                    v.pop();
                }
                if v.is_empty() {
                    return Err(format!("{what} found no such item"));
                }
                Ok(v)
            })
            .collect()
    }

    fn context(&self, _r: &Ref, ctx: &Ctx<'_>) -> Vec<u8> {
        ctx.var("DBUS_SESSION_BUS_ADDRESS")
            .unwrap_or("")
            .as_bytes()
            .to_vec()
    }

    fn backend(&self, _r: &Ref, _ctx: &Ctx<'_>) -> String {
        if macos() {
            "keychain (macOS login keychain)".into()
        } else {
            "keychain (Secret Service, secret-tool)".into()
        }
    }

    fn check(&self, value: &[u8]) -> Result<(), String> {
        // `secret-tool lookup` finds no item in an empty value, and
        // libsecret keeps a text value only up to a NUL byte.
        if value.is_empty() {
            return Err(
                "keychain: the value is empty (a load reads an empty item as no such item)".into(),
            );
        }
        if value.contains(&0) {
            return Err(
                "keychain: the value holds a NUL byte, which the Secret Service does not keep"
                    .into(),
            );
        }
        Ok(())
    }

    fn write(&self, r: &Ref, value: &[u8], ctx: &Ctx<'_>) -> Result<(), String> {
        let (service, account) = parts(r);
        if macos() {
            // `security` takes the password only in argv (-w): refused
            // rather than shown in the process list.
            return Err("writing the macOS keychain is not supported yet (use Keychain Access or `security add-generic-password` yourself)".into());
        }
        self.check(value)?;
        let mut cmd = ctx.command("secret-tool");
        let label = format!("agentenv {service}/{account}");
        cmd.args([
            "store", "--label", &label, "service", service, "account", account,
        ]);
        super::run_with_stdin(cmd, value, ctx.timeout, "secret-tool store").map(|_| ())
    }
}
