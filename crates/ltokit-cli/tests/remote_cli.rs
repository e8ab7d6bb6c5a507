//! The fleet-shared remote level through the `ltokit` command: eight processes with
//! separate disk caches and one Redis (Debian's `redis-server` on a free loopback
//! port), real links with nvJitLink.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{command, repo, run, scratch, text, toolkit_scratch};
use ltokit_demo::redis_server::RedisServer;

#[test]
fn eight_processes_link_each_plan_once_and_get_identical_cubins() {
    let Some(dir) = toolkit_scratch("fleet") else {
        return;
    };
    let Some(mut server) = RedisServer::start(&dir.join("redis")) else {
        return;
    };
    let key = dir.join("fleet.key");
    std::fs::write(&key, b"0123456789abcdef0123456789abcdef-fleet").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let bundle = repo().join("tests/fixtures/ltk-demo.ltkb");
    // 20 plans of the demo bundle.
    let o = run(
        &["bundle", "inspect", "--json", bundle.to_str().unwrap()],
        &[],
    );
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<String> = m["plans"].as_array().unwrap()[..20]
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    let list = dir.join("plans.txt");
    std::fs::write(&list, names.join("\n")).unwrap();
    let url = server.url();
    let env = [
        ("LTOKIT_REMOTE", url.as_str()),
        ("LTOKIT_REMOTE_KEY_FILE", key.to_str().unwrap()),
        ("LTOKIT_REMOTE_TIMEOUT_MS", "2000"),
    ];
    let caches: Vec<_> = (0..8).map(|i| dir.join(format!("node{i}"))).collect();
    let children: Vec<_> = caches
        .iter()
        .map(|cache| {
            command(
                &[
                    "warmup",
                    "--bundle",
                    bundle.to_str().unwrap(),
                    "--arch",
                    "sm_90",
                    "--plans",
                    list.to_str().unwrap(),
                    "--jobs",
                    "4",
                    "--json",
                    "--cache-dir",
                    cache.to_str().unwrap(),
                ],
                &env,
            )
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut links = 0;
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        links += report["links"].as_u64().unwrap();
    }
    assert_eq!(
        links, 20,
        "each plan linked once across the eight processes"
    );
    // Every node's disk now holds all 20, byte for byte the same.
    let entries = |cache: &std::path::Path| {
        let o = run(
            &[
                "cache",
                "ls",
                "--json",
                "--cache-dir",
                cache.to_str().unwrap(),
            ],
            &[],
        );
        let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut files: Vec<(String, Vec<u8>)> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let path = e["path"].as_str().unwrap();
                (
                    e["key"].as_str().unwrap().to_string(),
                    std::fs::read(path).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let first = entries(&caches[0]);
    assert_eq!(first.len(), 20);
    for cache in &caches[1..] {
        assert!(entries(cache) == first, "{} differs", cache.display());
    }
    // The persisted counters show every level; `links` stays at the top.
    let o = run(
        &[
            "cache",
            "stats",
            "--json",
            "--cache-dir",
            caches[0].to_str().unwrap(),
        ],
        &env,
    );
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(stats["links"].is_u64());
    let remote = &stats["levels"]["remote"];
    assert_eq!(remote["configured"], url.as_str());
    assert_eq!(
        remote["hits"].as_u64().unwrap() + stats["links"].as_u64().unwrap(),
        20,
        "{stats}"
    );
    // doctor sees the store, and says when it is gone.
    let o = run(&["doctor", "--json"], &env);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(d["remote"]["ping_ms"].is_f64(), "{d}");
    server.kill();
    let o = run(&["doctor", "--json"], &env);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(d["remote"]["error"].is_string(), "{d}");
    // A fresh, empty store: push publishes what a warm node holds.
    server.restart();
    let o = run(
        &[
            "cache",
            "push",
            "--remote",
            "--cache-dir",
            caches[3].to_str().unwrap(),
        ],
        &env,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("pushed 20 entries"), "{}", text(&o));
    let read_only = [env[0], env[1], ("LTOKIT_REMOTE_MODE", "read")];
    let o = run(
        &[
            "cache",
            "push",
            "--remote",
            "--cache-dir",
            caches[3].to_str().unwrap(),
        ],
        &read_only,
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("read-only"), "{}", text(&o));
}

#[test]
fn bad_remote_settings_are_named() {
    let dir = scratch("settings");
    let key = dir.join("loose.key");
    std::fs::write(&key, [1u8; 40]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cache = dir.join("cache");
    let args = ["cache", "stats", "--cache-dir", cache.to_str().unwrap()];
    let o = run(&args, &[("LTOKIT_REMOTE", "redis://127.0.0.1:1/0")]);
    assert!(!o.status.success());
    assert!(text(&o).contains("LTOKIT_REMOTE_KEY_FILE"), "{}", text(&o));
    let o = run(
        &args,
        &[
            ("LTOKIT_REMOTE", "redis://127.0.0.1:1/0"),
            ("LTOKIT_REMOTE_KEY_FILE", key.to_str().unwrap()),
        ],
    );
    assert!(text(&o).contains("chmod 600"), "{}", text(&o));
    let o = run(&args, &[("LTOKIT_REMOTE", "http://cache:6379")]);
    assert!(text(&o).contains("not a Redis address"), "{}", text(&o));
}
