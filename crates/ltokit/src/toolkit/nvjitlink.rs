//! nvJitLink: links LTO-IR, PTX, cubins and fatbins into a cubin for one architecture.
//!
//! Symbols are resolved version-agnostically: the plain name first (exported by 12.3+),
//! then `__<name>_<major>_<minor>` from the newest minor down. A binary built against a
//! newer header can therefore never fail with "undefined symbol" on an older 13.x
//! library, which is what broke cuVS's wheels.

use std::ffi::{c_char, c_void};
use std::path::Path;
use std::sync::Arc;

use super::{
    c_strings, library_accessors, log_to_string, open_library, require_cuda_major, resolve, Lazy,
    LibrarySpec, OpenedLibrary, Version, CUDA_MAJOR,
};
use crate::error::{Error, Result};

/// What is looked for.
pub const SPEC: LibrarySpec = LibrarySpec {
    name: "nvJitLink",
    soname: "libnvJitLink.so.13",
    wheel: "nvidia-nvjitlink==13.0.88",
};

/// Highest minor version probed for versioned symbols.
const MAX_PROBED_MINOR: u32 = 20;

type Handle = *mut c_void;
type Res = u32;

/// What kind of bytes an input is, as nvJitLink's `nvJitLinkInputType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u32)]
pub enum InputType {
    /// A cubin (ELF for a CUDA GPU).
    Cubin = 1,
    /// PTX text.
    Ptx = 2,
    /// LTO-IR (NVVM IR made with `-dlto`).
    LtoIr = 3,
    /// A fatbin container; nvJitLink picks the compatible entry.
    Fatbin = 4,
    /// A host object with embedded device code.
    Object = 5,
    /// A host static library (`.a`) with embedded device code.
    Library = 6,
}

/// The raw function table.
struct Fns {
    create: unsafe extern "C" fn(*mut Handle, u32, *const *const c_char) -> Res,
    destroy: unsafe extern "C" fn(*mut Handle) -> Res,
    add_data: unsafe extern "C" fn(Handle, u32, *const c_void, usize, *const c_char) -> Res,
    complete: unsafe extern "C" fn(Handle) -> Res,
    cubin_size: unsafe extern "C" fn(Handle, *mut usize) -> Res,
    cubin: unsafe extern "C" fn(Handle, *mut c_void) -> Res,
    error_log_size: unsafe extern "C" fn(Handle, *mut usize) -> Res,
    error_log: unsafe extern "C" fn(Handle, *mut c_char) -> Res,
    info_log_size: unsafe extern "C" fn(Handle, *mut usize) -> Res,
    info_log: unsafe extern "C" fn(Handle, *mut c_char) -> Res,
}

/// A loaded nvJitLink library.
pub struct NvJitLink {
    fns: Fns,
    version: Version,
    plain_symbols: bool,
    opened: OpenedLibrary,
    supported: std::sync::OnceLock<Vec<String>>,
}

/// The result of a successful link.
#[derive(Debug, Clone)]
pub struct Linked {
    /// The cubin (ELF) bytes.
    pub cubin: Vec<u8>,
    /// nvJitLink's info log (filled by `-verbose` / `-time`).
    pub info_log: String,
}

/// One input of a link.
#[derive(Debug, Clone, Copy)]
pub struct LinkData<'a> {
    /// What the bytes are.
    pub kind: InputType,
    /// The bytes.
    pub data: &'a [u8],
    /// A name for logs and errors.
    pub name: &'a str,
}

static LOADED: Lazy<NvJitLink> = Lazy::new();

impl NvJitLink {
    /// The process-wide nvJitLink, loaded on first use.
    pub fn get() -> Result<Arc<NvJitLink>> {
        LOADED.get_or_load(Self::load)
    }

    /// Loads nvJitLink on a background thread and reads its library file through once,
    /// then returns at once: on a machine where nothing has used the library since boot,
    /// its pages would otherwise come from disk during the first links. (On an H200 host
    /// the first eight links of a fresh machine took 83–250 ms each and 6–11 ms in later
    /// processes; how much of that the page cache explains, and how much a cache of links
    /// outside ltokit, was not measured apart.) A process calls this where it sets up its
    /// GPU, so that the reading overlaps that; later calls do nothing. A missing library
    /// is left for the first link to report.
    pub fn warm_in_background() {
        static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if STARTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        std::thread::spawn(|| match NvJitLink::get() {
            Ok(linker) => {
                if let Err(e) = read_through(linker.path()) {
                    tracing::debug!("could not read {}: {e}", linker.path().display());
                }
            }
            Err(e) => tracing::debug!("nvJitLink not loaded ahead of the first link: {e}"),
        });
    }

    fn load() -> Result<Self> {
        let opened = open_library(&SPEC)?;
        let names = |api: &str| -> Vec<String> {
            let mut v = vec![api.to_string()];
            v.extend(
                (0..=MAX_PROBED_MINOR)
                    .rev()
                    .map(|m| format!("__{api}_{CUDA_MAJOR}_{m}")),
            );
            v
        };
        macro_rules! sym {
            ($api:literal) => {
                // SAFETY: the field's type is the C signature of this nvJitLink API
                // (nvJitLink.h, CUDA 13.0; identical for every 13.x suffix).
                unsafe { resolve(&opened, SPEC.name, $api, &names($api))? }
            };
        }
        let fns = Fns {
            create: sym!("nvJitLinkCreate"),
            destroy: sym!("nvJitLinkDestroy"),
            add_data: sym!("nvJitLinkAddData"),
            complete: sym!("nvJitLinkComplete"),
            cubin_size: sym!("nvJitLinkGetLinkedCubinSize"),
            cubin: sym!("nvJitLinkGetLinkedCubin"),
            error_log_size: sym!("nvJitLinkGetErrorLogSize"),
            error_log: sym!("nvJitLinkGetErrorLog"),
            info_log_size: sym!("nvJitLinkGetInfoLogSize"),
            info_log: sym!("nvJitLinkGetInfoLog"),
        };
        // SAFETY: probing for a symbol has no side effects.
        let plain_symbols =
            unsafe { opened.library.get::<*const c_void>(b"nvJitLinkCreate") }.is_ok();
        let version = require_cuda_major(
            &SPEC,
            Self::detect_version(&opened)?,
            "LTO-IR does not cross major versions",
        )?;
        Ok(NvJitLink {
            fns,
            version,
            plain_symbols,
            opened,
            supported: std::sync::OnceLock::new(),
        })
    }

    /// `nvJitLinkVersion` when exported, else the highest versioned suffix present.
    fn detect_version(opened: &OpenedLibrary) -> Result<Version> {
        type VersionFn = unsafe extern "C" fn(*mut u32, *mut u32) -> Res;
        // SAFETY: nvJitLinkVersion has this C signature in every release that exports it.
        if let Ok(f) = unsafe { opened.library.get::<VersionFn>(b"nvJitLinkVersion") } {
            let (mut major, mut minor) = (0u32, 0u32);
            // SAFETY: both out-pointers are valid for writes.
            if unsafe { f(&mut major, &mut minor) } == 0 {
                return Ok(Version::new(major, minor));
            }
        }
        for minor in (0..=MAX_PROBED_MINOR).rev() {
            let name = format!("__nvJitLinkCreate_{CUDA_MAJOR}_{minor}");
            // SAFETY: probing for a symbol has no side effects.
            if unsafe { opened.library.get::<*const c_void>(name.as_bytes()) }.is_ok() {
                return Ok(Version::new(CUDA_MAJOR, minor));
            }
        }
        Err(Error::UnsupportedVersion {
            library: SPEC.name,
            found: "unknown".into(),
            why: "neither nvJitLinkVersion nor any __nvJitLinkCreate_13_N is exported; install a CUDA 13 nvJitLink".into(),
        })
    }

    library_accessors!();

    /// "plain" when unversioned names are exported, else "versioned".
    pub fn symbol_flavour(&self) -> &'static str {
        if self.plain_symbols {
            "plain"
        } else {
            "versioned"
        }
    }

    /// The machine targets this nvJitLink accepts, among the architectures CUDA has
    /// named (probed once per process by creating and destroying a handle for each; only
    /// called to explain a refused `-arch`).
    pub fn supported_targets(&self) -> &[String] {
        self.supported.get_or_init(|| {
            const KNOWN: &[u32] = &[
                50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110,
                120, 121,
            ];
            KNOWN
                .iter()
                .map(|n| format!("sm_{n}"))
                .filter(|arch| self.accepts_arch(arch))
                .collect()
        })
    }

    fn accepts_arch(&self, arch: &str) -> bool {
        let Ok(option) = std::ffi::CString::new(format!("-arch={arch}")) else {
            return false;
        };
        let ptrs = [option.as_ptr()];
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; `ptrs` holds one NUL-terminated string
        // that outlives the call.
        let rc = unsafe { (self.fns.create)(&mut raw, 1, ptrs.as_ptr()) };
        // Destroys the handle (if any) on drop.
        drop(HandleGuard { lib: self, raw });
        rc == 0
    }

    /// Links `inputs` with `options` (which must include `-arch=sm_XY`) into a cubin.
    /// The handle is destroyed on every path; errors carry nvJitLink's error log.
    pub fn link(&self, options: &[String], inputs: &[LinkData<'_>]) -> Result<Linked> {
        let c_opts = c_strings(options)?;
        let ptrs: Vec<*const c_char> = c_opts.iter().map(|s| s.as_ptr()).collect();
        let count = u32::try_from(ptrs.len())
            .map_err(|_| Error::InvalidArgument("too many link options".into()))?;
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; `ptrs` holds `count` NUL-terminated
        // strings that outlive the call.
        let rc = unsafe { (self.fns.create)(&mut raw, count, ptrs.as_ptr()) };
        // nvJitLinkCreate can hand back a handle holding an error log even on failure.
        let handle = HandleGuard { lib: self, raw };
        handle.check("nvJitLinkCreate", rc)?;
        for input in inputs {
            let name = std::ffi::CString::new(input.name.replace('\0', "?")).unwrap_or_default();
            // SAFETY: the data pointer and length describe a live slice; name is
            // NUL-terminated; the handle is live.
            let rc = unsafe {
                (self.fns.add_data)(
                    handle.raw,
                    input.kind as u32,
                    input.data.as_ptr().cast(),
                    input.data.len(),
                    name.as_ptr(),
                )
            };
            handle
                .check("nvJitLinkAddData", rc)
                .map_err(|e| with_input(e, input.name))?;
        }
        // SAFETY: the handle is live.
        let rc = unsafe { (self.fns.complete)(handle.raw) };
        handle.check("nvJitLinkComplete", rc)?;
        let mut size = 0usize;
        // SAFETY: the handle is live and `size` a valid out-pointer.
        handle.check("nvJitLinkGetLinkedCubinSize", unsafe {
            (self.fns.cubin_size)(handle.raw, &mut size)
        })?;
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` has exactly the size nvJitLink reported.
        handle.check("nvJitLinkGetLinkedCubin", unsafe {
            (self.fns.cubin)(handle.raw, cubin.as_mut_ptr().cast())
        })?;
        Ok(Linked {
            cubin,
            info_log: handle.log(self.fns.info_log_size, self.fns.info_log),
        })
    }
}

/// Owns an nvJitLink handle; destroys it when dropped, whatever path was taken.
struct HandleGuard<'a> {
    lib: &'a NvJitLink,
    raw: Handle,
}

type LogSizeFn = unsafe extern "C" fn(Handle, *mut usize) -> Res;
type LogFn = unsafe extern "C" fn(Handle, *mut c_char) -> Res;

impl HandleGuard<'_> {
    fn check(&self, call: &'static str, rc: Res) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        let log = self.log(self.lib.fns.error_log_size, self.lib.fns.error_log);
        Err(Error::Link {
            call,
            code: rc,
            reason: describe(rc).to_string(),
            log,
        })
    }

    fn log(&self, size_fn: LogSizeFn, log_fn: LogFn) -> String {
        if self.raw.is_null() {
            return String::new();
        }
        let mut size = 0usize;
        // SAFETY: the handle is live and `size` a valid out-pointer.
        if unsafe { size_fn(self.raw, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` has exactly the size nvJitLink reported.
        if unsafe { log_fn(self.raw, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        log_to_string(buf)
    }
}

impl Drop for HandleGuard<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: the handle came from nvJitLinkCreate and is destroyed only here.
            let rc = unsafe { (self.lib.fns.destroy)(&mut self.raw) };
            if rc != 0 {
                tracing::warn!(code = rc, "nvJitLinkDestroy failed");
            }
        }
    }
}

fn with_input(err: Error, input: &str) -> Error {
    match err {
        Error::Link {
            call,
            code,
            reason,
            log,
        } => Error::Link {
            call,
            code,
            reason: format!("{reason} (input {input})"),
            log,
        },
        other => other,
    }
}

/// What an `nvJitLinkResult` means, with advice where there is any.
pub fn describe(code: u32) -> &'static str {
    match code {
        1 => "unrecognized option (check --opt values against nvJitLink's documented options)",
        2 => "missing -arch=sm_XY option",
        3 => "invalid input (a fatbin with no entry compatible with the target, or corrupt data)",
        4 => "PTX compilation failed",
        5 => "NVVM compilation failed",
        6 => "internal error in nvJitLink",
        7 => "thread pool error",
        8 => "unrecognized input (not LTO-IR, PTX, cubin or fatbin)",
        9 => "finalizer error",
        10 => "null input",
        11 => "incompatible options",
        12 => "incorrect input type",
        13 => "architecture mismatch between an input and -arch",
        14 => "outdated library: an input was made by a newer CUDA than this nvJitLink; install a newer nvJitLink of the same major version",
        15 => "missing fatbin",
        16 => "unrecognized -arch value",
        17 => "unsupported -arch value for this nvJitLink",
        18 => "LTO-IR input needs the -lto option",
        _ => "unknown nvJitLink error",
    }
}

/// Reads the file at `path` to its end, discarding the bytes (which leaves them in the
/// operating system's page cache); returns how many there were.
fn read_through(path: &Path) -> std::io::Result<u64> {
    std::io::copy(&mut std::fs::File::open(path)?, &mut std::io::sink())
}
