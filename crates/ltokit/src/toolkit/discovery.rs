//! Where the CUDA compiler libraries are looked for, in order.
//!
//! 1. `LTOKIT_CUDA_LIB_DIR` — when set, it is the only place searched (explicit wins).
//! 2. `CUDA_HOME`, then `CUDA_PATH`: `lib64/`, then `lib/`.
//! 3. `/usr/local/cuda/lib64`.
//! 4. Python wheels: `nvidia/cu13/lib` under the project-local prefix (`.cuda/pip` in the
//!    current directory or an ancestor of it or of the running executable), then the
//!    user's and the system's site-packages directories.
//! 5. The system loader (`LD_LIBRARY_PATH`, `ld.so.cache`) by soname.
//!
//! Libraries are always opened by absolute path when found in steps 1–4, so a stray
//! `libnvJitLink.so` earlier on the loader path can never win over the one that was found.

use std::path::{Path, PathBuf};

/// Environment variable naming the one directory to load CUDA libraries from.
pub const ENV_LIB_DIR: &str = "LTOKIT_CUDA_LIB_DIR";

/// The project-local wheel prefix that `scripts/setup-cuda.sh` installs into.
pub const PROJECT_PREFIX: &str = ".cuda/pip";

/// The wheel layout of CUDA 13 libraries below a site-packages directory.
const WHEEL_LIB_DIR: &str = "nvidia/cu13/lib";

/// Which step of the search order a library was found by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// `LTOKIT_CUDA_LIB_DIR`.
    EnvLibDir,
    /// `CUDA_HOME`.
    CudaHome,
    /// `CUDA_PATH`.
    CudaPath,
    /// `/usr/local/cuda`.
    UsrLocalCuda,
    /// A pip wheel under a site-packages directory or the project-local prefix.
    PythonWheel,
    /// The system loader, by soname.
    SystemLoader,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Origin::EnvLibDir => ENV_LIB_DIR,
            Origin::CudaHome => "CUDA_HOME",
            Origin::CudaPath => "CUDA_PATH",
            Origin::UsrLocalCuda => "/usr/local/cuda",
            Origin::PythonWheel => "python wheel",
            Origin::SystemLoader => "system loader",
        })
    }
}

/// The directories to look in, in search order, each with the step that produced it.
/// The system loader (step 5) is not a directory and is tried by the caller last.
pub fn candidate_dirs() -> Vec<(PathBuf, Origin)> {
    if let Some(dir) = env_path(ENV_LIB_DIR) {
        return vec![(dir, Origin::EnvLibDir)];
    }
    let mut dirs = Vec::new();
    for (var, origin) in [
        ("CUDA_HOME", Origin::CudaHome),
        ("CUDA_PATH", Origin::CudaPath),
    ] {
        if let Some(root) = env_path(var) {
            dirs.push((root.join("lib64"), origin));
            dirs.push((root.join("lib"), origin));
        }
    }
    dirs.push((PathBuf::from("/usr/local/cuda/lib64"), Origin::UsrLocalCuda));
    for site in site_packages_dirs() {
        dirs.push((site.join(WHEEL_LIB_DIR), Origin::PythonWheel));
    }
    dedup_keep_first(dirs)
}

/// The CUDA header directories that go with the libraries: the toolkit's `include/`
/// (next to `lib64/`) or the wheels' `nvidia/cu13/include` (+ `cccl/`), whichever exist.
pub fn include_dirs_near(lib_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(root) = lib_dir.parent() {
        let include = root.join("include");
        if include.join("cuda_runtime.h").is_file() || include.join("cuda_fp16.h").is_file() {
            out.push(include.clone());
        }
        if include.join("cccl").is_dir() {
            out.push(include.join("cccl"));
        }
    }
    out
}

/// Every header directory that can be found, in search order (used when the
/// libraries' own neighbourhood has no headers, e.g. a system-loader hit).
pub fn all_include_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (dir, _) in candidate_dirs() {
        for inc in include_dirs_near(&dir) {
            if !out.contains(&inc) {
                out.push(inc);
            }
        }
    }
    out
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Site-packages directories: the project-local prefix first, then virtual and conda
/// environments, the user's, and the system's.
fn site_packages_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut starts = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    if let Ok(exe) = std::env::current_exe() {
        starts.push(exe);
    }
    for start in starts {
        for dir in start.ancestors() {
            let prefix = dir.join(PROJECT_PREFIX);
            if prefix.is_dir() {
                out.push(prefix);
                break;
            }
        }
    }
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(root) = env_path(var) {
            out.extend(python_lib_dirs(&root.join("lib")));
        }
    }
    if let Some(home) = env_path("HOME") {
        out.extend(python_lib_dirs(&home.join(".local/lib")));
        // pyenv keeps one site-packages per installed interpreter.
        if let Ok(versions) = std::fs::read_dir(home.join(".pyenv/versions")) {
            let mut roots: Vec<PathBuf> =
                versions.flatten().map(|e| e.path().join("lib")).collect();
            roots.sort();
            for root in roots {
                out.extend(python_lib_dirs(&root));
            }
        }
    }
    for root in ["/usr/local/lib", "/usr/lib", "/usr/lib64"] {
        out.extend(python_lib_dirs(Path::new(root)));
    }
    out
}

/// `ROOT/python3.*/{site,dist}-packages` that exist, newest Python first.
fn python_lib_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut pythons: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path())
        .collect();
    pythons.sort();
    pythons.reverse();
    let mut out = Vec::new();
    for py in pythons {
        for leaf in ["site-packages", "dist-packages"] {
            let dir = py.join(leaf);
            if dir.is_dir() {
                out.push(dir);
            }
        }
    }
    out
}

fn dedup_keep_first(dirs: Vec<(PathBuf, Origin)>) -> Vec<(PathBuf, Origin)> {
    let mut out: Vec<(PathBuf, Origin)> = Vec::with_capacity(dirs.len());
    for (dir, origin) in dirs {
        if !out.iter().any(|(d, _)| *d == dir) {
            out.push((dir, origin));
        }
    }
    out
}

/// Finds the absolute path of an already-loaded shared object by file name, from
/// `/proc/self/maps` (used to report where the system loader found a library).
pub fn loaded_path_of(file_name: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| Path::new(path).file_name().is_some_and(|n| n == file_name))
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_lib_dirs_finds_site_and_dist_packages_newest_first() {
        let root = std::env::temp_dir().join(format!("ltokit-disc-{}", std::process::id()));
        for d in [
            "python3.10/site-packages",
            "python3.12/dist-packages",
            "python3.12/site-packages",
            "perl5",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let found = python_lib_dirs(&root);
        let rel: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().to_owned())
            .collect();
        assert_eq!(
            rel,
            [
                PathBuf::from("python3.12/site-packages"),
                PathBuf::from("python3.12/dist-packages"),
                PathBuf::from("python3.10/site-packages")
            ]
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn dedup_keeps_the_first_origin() {
        let d = dedup_keep_first(vec![
            (PathBuf::from("/a"), Origin::CudaHome),
            (PathBuf::from("/b"), Origin::CudaPath),
            (PathBuf::from("/a"), Origin::UsrLocalCuda),
        ]);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].1, Origin::CudaHome);
    }
}
