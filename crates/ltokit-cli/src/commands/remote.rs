//! The remote cache level as the commands use it directly (`doctor`, `cache push`).

use std::sync::Arc;

use ltokit::cache::level::Recorder;
use ltokit::cache::remote::RemoteLevel;
use ltokit::cache::{CacheConfig, RemoteConfig, RemoteMode};

/// A remote level for `config`, counting into this process only.
pub fn level(config: &RemoteConfig) -> RemoteLevel {
    RemoteLevel::new(config.clone(), Arc::new(Recorder::default()))
}

/// The configured remote level, which must allow writing (for commands that publish).
pub fn writable(config: &CacheConfig) -> anyhow::Result<RemoteConfig> {
    let remote = config.remote.clone().ok_or_else(|| {
        anyhow::anyhow!(
            "no remote cache is configured; set LTOKIT_REMOTE=redis://HOST:PORT/DB and LTOKIT_REMOTE_KEY_FILE"
        )
    })?;
    anyhow::ensure!(
        remote.mode == RemoteMode::ReadWrite,
        "the remote cache {} is read-only here (LTOKIT_REMOTE_MODE=read); publish from a node with LTOKIT_REMOTE_MODE=read-write",
        remote.url
    );
    Ok(remote)
}
