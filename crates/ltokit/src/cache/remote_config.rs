//! Settings of the fleet-shared remote level, read from `LTOKIT_REMOTE*`.
//!
//! | variable | meaning |
//! |---|---|
//! | `LTOKIT_REMOTE` | `redis://HOST:PORT/DB`: the store (unset: no remote level) |
//! | `LTOKIT_REMOTE_KEY_FILE` | a file of at least 32 secret bytes, readable by its owner only; entries are signed and checked with it (required) |
//! | `LTOKIT_REMOTE_MODE` | `read-write` (default) or `read`: deployment nodes read only |
//! | `LTOKIT_REMOTE_TIMEOUT_MS` | connect and per-operation timeout (default 250) |
//! | `LTOKIT_REMOTE_LOCK_TTL_MS` | lifetime of a fleet link lock (default 60000): how long others wait for a holder that died |
//! | `LTOKIT_REMOTE_BACKOFF_MS` | how long the level is skipped after repeated failures (default 30000) |

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

/// Fewest secret bytes in a fleet key file.
pub const MIN_KEY_BYTES: usize = 32;

/// Whether this node may write to the remote level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteMode {
    /// Read only (deployment nodes).
    Read,
    /// Read, and publish what this node links.
    ReadWrite,
}

/// The remote level's settings.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteConfig {
    /// `redis://HOST:PORT/DB`.
    pub url: String,
    /// Signing key derived from the fleet key file's bytes.
    pub signing_key: [u8; 32],
    /// Read only or read-write.
    pub mode: RemoteMode,
    /// Connect and per-operation timeout.
    pub timeout: Duration,
    /// Lifetime of a fleet link lock.
    pub lock_ttl: Duration,
    /// How long the level is skipped after repeated failures.
    pub backoff: Duration,
}

impl std::fmt::Debug for RemoteConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("RemoteConfig")
            .field("url", &self.url)
            .field("mode", &self.mode)
            .field("timeout", &self.timeout)
            .field("lock_ttl", &self.lock_ttl)
            .field("backoff", &self.backoff)
            .finish_non_exhaustive()
    }
}

impl RemoteConfig {
    /// A read-write level at `url`, signing with the key in `key_file`, default timings.
    pub fn new(url: &str, key_file: &Path) -> Result<Self> {
        Ok(RemoteConfig {
            url: url.to_string(),
            signing_key: read_key_file(key_file)?,
            mode: RemoteMode::ReadWrite,
            timeout: Duration::from_millis(250),
            lock_ttl: Duration::from_secs(60),
            backoff: Duration::from_secs(30),
        })
    }

    /// The settings of `LTOKIT_REMOTE*`; `None` when `LTOKIT_REMOTE` is unset or empty.
    pub fn from_env() -> Result<Option<Self>> {
        let Some(url) = std::env::var("LTOKIT_REMOTE")
            .ok()
            .filter(|v| !v.is_empty())
        else {
            return Ok(None);
        };
        if !cfg!(feature = "remote") {
            return Err(Error::BadEnvironment {
                variable: "LTOKIT_REMOTE",
                value: url,
                why: "this build of ltokit has no remote level; build it with the cargo feature `remote`, or unset the variable".into(),
            });
        }
        if !url.starts_with("redis://") {
            return Err(Error::BadEnvironment {
                variable: "LTOKIT_REMOTE",
                value: url,
                why: "not a Redis address; use redis://HOST:PORT/DB".into(),
            });
        }
        let key_file = std::env::var_os("LTOKIT_REMOTE_KEY_FILE").ok_or_else(|| {
            Error::BadEnvironment {
                variable: "LTOKIT_REMOTE_KEY_FILE",
                value: String::new(),
                why: "a shared cache needs a fleet key: set it to a file of at least 32 secret bytes (e.g. `head -c 32 /dev/urandom > fleet.key; chmod 600 fleet.key`)".into(),
            }
        })?;
        let mut config = RemoteConfig::new(&url, Path::new(&key_file))?;
        config.mode = match std::env::var("LTOKIT_REMOTE_MODE").as_deref() {
            Err(_) | Ok("read-write") => RemoteMode::ReadWrite,
            Ok("read") => RemoteMode::Read,
            Ok(other) => {
                return Err(Error::BadEnvironment {
                    variable: "LTOKIT_REMOTE_MODE",
                    value: other.to_string(),
                    why: "use read-write (the default) or read".into(),
                })
            }
        };
        let millis = |variable: &'static str, default: Duration| -> Result<Duration> {
            match std::env::var(variable) {
                Err(_) => Ok(default),
                Ok(v) => v
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&ms| ms > 0)
                    .map(Duration::from_millis)
                    .ok_or(Error::BadEnvironment {
                        variable,
                        value: v,
                        why: "not a positive number of milliseconds".into(),
                    }),
            }
        };
        config.timeout = millis("LTOKIT_REMOTE_TIMEOUT_MS", config.timeout)?;
        config.lock_ttl = millis("LTOKIT_REMOTE_LOCK_TTL_MS", config.lock_ttl)?;
        config.backoff = millis("LTOKIT_REMOTE_BACKOFF_MS", config.backoff)?;
        Ok(Some(config))
    }
}

/// Reads a fleet key file: at least [`MIN_KEY_BYTES`] bytes, used as they are, and not
/// readable or writable by group or others.
pub fn read_key_file(path: &Path) -> Result<[u8; 32]> {
    let bad = |why: String| Error::BadEnvironment {
        variable: "LTOKIT_REMOTE_KEY_FILE",
        value: path.display().to_string(),
        why,
    };
    let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(bad(format!(
                "its mode is {:o}: a fleet key must be readable by its owner only; run `chmod 600 {}`",
                mode & 0o777,
                path.display()
            )));
        }
    }
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    if bytes.len() < MIN_KEY_BYTES {
        return Err(bad(format!(
            "it holds {} bytes; a fleet key needs at least {MIN_KEY_BYTES} secret bytes (e.g. `head -c 32 /dev/urandom`)",
            bytes.len()
        )));
    }
    Ok(blake3::derive_key(
        "ltokit remote cache entry signing v1",
        &bytes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_must_be_long_and_private() {
        let dir = std::env::temp_dir().join(format!("ltokit-keyfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, bytes: &[u8], mode: u32| {
            use std::os::unix::fs::PermissionsExt;
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            p
        };
        let good = write("good", &[7u8; 32], 0o600);
        let other = write("other", &[8u8; 40], 0o400);
        assert_ne!(
            read_key_file(&good).unwrap(),
            read_key_file(&other).unwrap()
        );
        let short = write("short", &[7u8; 31], 0o600);
        assert!(read_key_file(&short)
            .unwrap_err()
            .to_string()
            .contains("holds 31 bytes"));
        let loose = write("loose", &[7u8; 32], 0o640);
        assert!(read_key_file(&loose)
            .unwrap_err()
            .to_string()
            .contains("chmod 600"));
        assert!(read_key_file(&dir.join("missing")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
