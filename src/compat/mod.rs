//! How other runtimes see text and paths: each rule agentenv reproduces
//! from another language's standard library, written once.
//!
//! | module | runtime | what |
//! | --- | --- | --- |
//! | [`js`] | ECMAScript | whitespace (`\s`, `String.prototype.trim`) |
//! | [`python`] | CPython 3.11 | `str.isspace`, `str.strip`, `str.splitlines`' breaks, `str.isprintable`; `pathlib.PurePosixPath`, `posixpath.normpath`/`join`/`split`/`abspath` |
//! | [`go`] | Go | `unicode.IsSpace`, `strings.TrimSpace` on bytes, `path.Clean` |
//! | [`node`] | Node.js | `path.posix.normalize`/`resolve`/`join` |
//! | [`sh`] | POSIX shells (and the references' quoting functions) | single quoting, each rule named for whose it is |
//! | [`ident`] | POSIX shells (and every reference that copies them) | the name rule `[A-Za-z_][A-Za-z0-9_]*` |
//!
//! Everything here is *pure*: no I/O, no environment, no allocation beyond
//! the result. Paths are bytes and are never decoded. What touches the file
//! system on top of these rules (`realpath`, `shutil.which`, `~` expansion,
//! symlink containment) stays with its caller.
//!
//! Each rule is tested against its runtime where the runtime is installed
//! (`tests/it/compat.rs`: `node`, `python3`); Go is not installed, so the Go
//! rules are tested against the cases of the fullsend reference and the
//! rules `path.Clean` documents.

pub mod go;
pub mod ident;
pub mod js;
pub mod node;
pub mod python;
pub mod sh;
