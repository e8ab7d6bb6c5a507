//! The CUDA compiler libraries: NVRTC, nvJitLink and nvFatbin.
//!
//! This is ltokit's FFI layer. Each library gets a small module with three layers, as in
//! cudarc: a table of raw function pointers resolved from the library, checked calls that
//! turn result codes into [`Error`]s, and a safe API (`compile`, `link`, `build`) that
//! owns every handle and destroys it on every path.
//!
//! Libraries are found by [`discovery`] and opened **by absolute path**. Nothing here
//! needs a GPU or libcuda. Each library is opened at most once per process; the handles
//! are shared.

pub mod discovery;
pub mod nvfatbin;
pub mod nvjitlink;
pub mod nvrtc;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};
pub use crate::version::Version;
pub use discovery::Origin;

/// The CUDA major version ltokit is built for.
pub const CUDA_MAJOR: u32 = 13;

/// Static description of one library to look for.
#[derive(Debug, Clone, Copy)]
pub struct LibrarySpec {
    /// Human name ("NVRTC").
    pub name: &'static str,
    /// File name looked for in each directory and given to the system loader.
    pub soname: &'static str,
    /// The pip wheel that provides it, as an error message tells the user to install it
    /// (`nvidia-cuda-nvrtc==13.0.88`).
    pub wheel: &'static str,
}

/// The error for a library whose version call failed (`found`: what it gave, and its
/// return code): reinstall it.
pub(crate) fn version_unreported(
    spec: &LibrarySpec,
    opened: &OpenedLibrary,
    found: String,
) -> Error {
    Error::UnsupportedVersion {
        library: spec.name,
        found,
        why: format!(
            "{} could not report its version; reinstall {} or point LTOKIT_CUDA_LIB_DIR at a working {}",
            opened.path.display(),
            spec.wheel,
            spec.name
        ),
    }
}

/// `version` where it is of [`CUDA_MAJOR`]; else an error naming it, why ltokit needs
/// that major version (`needs`: "LTO-IR does not cross major versions") and what to
/// install.
pub(crate) fn require_cuda_major(
    spec: &LibrarySpec,
    version: Version,
    needs: &str,
) -> Result<Version> {
    if version.major == CUDA_MAJOR {
        return Ok(version);
    }
    Err(Error::UnsupportedVersion {
        library: spec.name,
        found: version.to_string(),
        why: format!(
            "ltokit needs {} {CUDA_MAJOR}.x ({needs}); install {} (or any {CUDA_MAJOR}.x) or point LTOKIT_CUDA_LIB_DIR at one",
            spec.name, spec.wheel
        ),
    })
}

/// The accessors every library wrapper has: its version and where and how it was found
/// (the wrapper's `version` and `opened` fields).
macro_rules! library_accessors {
    () => {
        /// The library's version.
        pub fn version(&self) -> $crate::toolkit::Version {
            self.version
        }

        /// Where it was loaded from.
        pub fn path(&self) -> &std::path::Path {
            &self.opened.path
        }

        /// Which search step found it.
        pub fn origin(&self) -> $crate::toolkit::Origin {
            self.opened.origin
        }
    };
}
pub(crate) use library_accessors;

/// A library that was found and opened.
#[derive(Debug)]
pub struct OpenedLibrary {
    /// The loaded library; dropping it unloads the code its function pointers point to,
    /// so it is kept alive as long as they are.
    pub(crate) library: libloading::Library,
    /// Absolute path it was loaded from (for system-loader hits, as the loader resolved it).
    pub path: PathBuf,
    /// The search step that found it.
    pub origin: Origin,
}

/// The file `spec` would be opened from, without opening it: the first hit of the
/// directory search. `None` when only the system loader could find it.
pub fn locate(spec: &LibrarySpec) -> Option<PathBuf> {
    discovery::candidate_dirs()
        .into_iter()
        .map(|(dir, _)| dir.join(spec.soname))
        .find(|p| p.is_file())
}

/// Finds `spec` in the search order and opens it by absolute path.
pub(crate) fn open_library(spec: &LibrarySpec) -> Result<OpenedLibrary> {
    let mut searched = Vec::new();
    for (dir, origin) in discovery::candidate_dirs() {
        let path = dir.join(spec.soname);
        if path.is_file() {
            tracing::debug!(library = spec.name, path = %path.display(), %origin, "opening");
            let library = load_by_path(&path)?;
            return Ok(OpenedLibrary {
                library,
                path,
                origin,
            });
        }
        searched.push(path);
    }
    if std::env::var_os(discovery::ENV_LIB_DIR).is_none_or(|v| v.is_empty()) {
        // SAFETY: loading a CUDA library runs its initialisers, which have no
        // preconditions; the soname is a constant naming an NVIDIA library.
        if let Ok(library) = unsafe { libloading::Library::new(spec.soname) } {
            let path = discovery::loaded_path_of(spec.soname)
                .unwrap_or_else(|| PathBuf::from(spec.soname));
            return Ok(OpenedLibrary {
                library,
                path,
                origin: Origin::SystemLoader,
            });
        }
        searched.push(PathBuf::from(format!(
            "{} (system loader: LD_LIBRARY_PATH, ld.so.cache)",
            spec.soname
        )));
    }
    Err(Error::LibraryNotFound {
        library: spec.name,
        soname: spec.soname,
        searched,
    })
}

/// Opens a shared library by absolute path.
pub(crate) fn load_by_path(path: &Path) -> Result<libloading::Library> {
    // SAFETY: the path names a CUDA library found by discovery; loading it runs only its
    // own initialisers, which have no preconditions.
    unsafe { libloading::Library::new(path) }.map_err(|source| Error::LibraryLoad {
        path: path.to_owned(),
        source,
    })
}

/// Resolves one function of `opened` under the first of `names` that exists.
///
/// # Safety
/// `T` must be the exact function-pointer type of the C function.
pub(crate) unsafe fn resolve<T: Copy>(
    opened: &OpenedLibrary,
    library: &'static str,
    symbol: &'static str,
    names: &[String],
) -> Result<T> {
    for name in names {
        // SAFETY: the caller guarantees T matches the symbol's C type.
        if let Ok(sym) = unsafe { opened.library.get::<T>(name.as_bytes()) } {
            return Ok(*sym);
        }
    }
    Err(Error::SymbolMissing {
        library,
        path: opened.path.clone(),
        symbol,
        tried: names.to_vec(),
    })
}

/// The version that `api` of `opened` reports through two out-parameters (`Res api(V*
/// major, V* minor)`, `V` being `int` for NVRTC and `unsigned int` for nvFatbin), required to
/// be of [`CUDA_MAJOR`] (`needs`: why ltokit needs that); an error naming the library where
/// the call fails or reports a negative number.
///
/// # Safety
/// `api` must be a C function of that signature, returning a status that is 0 on success.
pub(crate) unsafe fn reported_version<V>(
    spec: &LibrarySpec,
    opened: &OpenedLibrary,
    api: &'static str,
    needs: &str,
) -> Result<Version>
where
    V: Copy + Default + std::fmt::Display + TryInto<u32>,
{
    // SAFETY: the caller guarantees the function's C signature.
    let version_fn: unsafe extern "C" fn(*mut V, *mut V) -> std::ffi::c_int =
        unsafe { resolve(opened, spec.name, api, &[api.to_string()])? };
    let (mut major, mut minor) = (V::default(), V::default());
    // SAFETY: both out-pointers are valid for writes.
    let rc = unsafe { version_fn(&mut major, &mut minor) };
    match (rc, major.try_into(), minor.try_into()) {
        (0, Ok(ma), Ok(mi)) => require_cuda_major(spec, Version::new(ma, mi), needs),
        (0, _, _) => {
            let found = format!("{major}.{minor} (negative, from {api})");
            Err(version_unreported(spec, opened, found))
        }
        // The out-parameters are not to be trusted where the call failed.
        _ => {
            let found = format!("unknown ({api} returned {rc})");
            Err(version_unreported(spec, opened, found))
        }
    }
}

/// Copies a NUL-terminated C string returned by a library into an owned `String`
/// (`"(no description)"` for a null pointer).
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string that stays valid and unchanged
/// for the duration of the call (a static string, or one owned by a handle the caller
/// keeps alive).
pub(crate) unsafe fn c_string(ptr: *const std::ffi::c_char) -> String {
    if ptr.is_null() {
        return String::from("(no description)");
    }
    // SAFETY: the caller guarantees a valid NUL-terminated string for this call.
    unsafe { std::ffi::CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// Turns a log buffer (with its trailing NUL) into a `String`.
pub(crate) fn log_to_string(mut buf: Vec<u8>) -> String {
    while buf.last() == Some(&0) {
        buf.pop();
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Converts strings for a C `const char**` argument, rejecting interior NULs.
pub(crate) fn c_strings(items: &[String]) -> Result<Vec<std::ffi::CString>> {
    items
        .iter()
        .map(|s| {
            std::ffi::CString::new(s.as_bytes())
                .map_err(|_| Error::InvalidArgument(format!("option {s:?} contains a NUL byte")))
        })
        .collect()
}

/// A once-per-process slot for a loaded library; failures are not cached, so a fix
/// (e.g. installing the wheels) is picked up by the next attempt.
pub(crate) struct Lazy<T>(Mutex<Option<Arc<T>>>);

impl<T> Lazy<T> {
    pub(crate) const fn new() -> Self {
        Lazy(Mutex::new(None))
    }

    pub(crate) fn get_or_load(&self, load: impl FnOnce() -> Result<T>) -> Result<Arc<T>> {
        let mut slot = self.0.lock();
        if let Some(loaded) = slot.as_ref() {
            return Ok(Arc::clone(loaded));
        }
        let loaded = Arc::new(load()?);
        *slot = Some(Arc::clone(&loaded));
        Ok(loaded)
    }
}

/// Why the compiler libraries (NVRTC and nvJitLink) cannot be used, when they cannot:
/// one line per library that failed to load. `None` when both load. Tests that need them
/// use this to skip with a reason instead of failing on a machine without them.
pub fn compiler_unavailable() -> Option<String> {
    let errors: Vec<String> = [nvrtc::Nvrtc::get().err(), nvjitlink::NvJitLink::get().err()]
        .into_iter()
        .flatten()
        .map(|e| e.to_string().lines().next().unwrap_or_default().to_string())
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// What `ltokit doctor` reports for one library.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LibraryReport {
    /// Human name.
    pub name: &'static str,
    /// Whether it was found and loaded.
    pub found: bool,
    /// Whether a file of its name was found at all (false: it is missing; true with
    /// `found` false: it was found but cannot be used, e.g. another major version).
    pub present: bool,
    /// Where it was loaded from.
    pub path: Option<PathBuf>,
    /// Which search step found it.
    pub origin: Option<Origin>,
    /// The version it reports.
    pub version: Option<Version>,
    /// Extra facts (e.g. the preloaded builtins, the symbol flavour).
    pub detail: Option<String>,
    /// The error, when not found or not loadable.
    pub error: Option<String>,
}

/// Loads every library and reports on each; never fails.
pub fn report() -> Vec<LibraryReport> {
    fn row<T>(
        name: &'static str,
        loaded: Result<Arc<T>>,
        describe: impl Fn(&T) -> (PathBuf, Origin, Version, Option<String>),
    ) -> LibraryReport {
        match loaded {
            Ok(lib) => {
                let (path, origin, version, detail) = describe(&lib);
                LibraryReport {
                    name,
                    found: true,
                    present: true,
                    path: Some(path),
                    origin: Some(origin),
                    version: Some(version),
                    detail,
                    error: None,
                }
            }
            Err(e) => LibraryReport {
                name,
                found: false,
                present: !matches!(e, Error::LibraryNotFound { .. }),
                path: None,
                origin: None,
                version: None,
                detail: None,
                error: Some(e.to_string()),
            },
        }
    }
    vec![
        row("NVRTC", nvrtc::Nvrtc::get(), |l| {
            (
                l.path().to_owned(),
                l.origin(),
                l.version(),
                Some(format!("builtins: {}", l.builtins_path().display())),
            )
        }),
        row("nvJitLink", nvjitlink::NvJitLink::get(), |l| {
            (
                l.path().to_owned(),
                l.origin(),
                l.version(),
                Some(format!(
                    "symbols: {}; links for: {}",
                    l.symbol_flavour(),
                    l.supported_targets().join(", ")
                )),
            )
        }),
        row("nvFatbin", nvfatbin::NvFatbin::get(), |l| {
            (l.path().to_owned(), l.origin(), l.version(), None)
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: LibrarySpec = LibrarySpec {
        name: "nvExample",
        soname: "libnvexample.so.13",
        wheel: "nvidia-example==13.0.1",
    };

    #[test]
    fn a_library_of_another_cuda_major_is_refused_with_what_to_install() {
        assert_eq!(
            require_cuda_major(&SPEC, Version::new(CUDA_MAJOR, 7), "why").unwrap(),
            Version::new(CUDA_MAJOR, 7)
        );
        let err = require_cuda_major(&SPEC, Version::new(12, 4), "LTO-IR does not cross")
            .unwrap_err()
            .to_string();
        for part in [
            "nvExample",
            "12.4",
            "LTO-IR does not cross",
            "nvidia-example==13.0.1",
            "LTOKIT_CUDA_LIB_DIR",
        ] {
            assert!(err.contains(part), "{part:?} missing from: {err}");
        }
    }
}
