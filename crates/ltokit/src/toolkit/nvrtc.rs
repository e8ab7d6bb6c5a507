//! NVRTC: compiles CUDA C++ to LTO-IR (or PTX) at run time.
//!
//! NVRTC 13.0 from pip has no RUNPATH and opens `libnvrtc-builtins.so.13.0` by bare name,
//! so every compile fails unless the builtins are already loaded: they are preloaded here
//! by absolute path from the directory NVRTC came from.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    c_string, c_strings, library_accessors, load_by_path, log_to_string, open_library,
    reported_version, resolve, Lazy, LibrarySpec, OpenedLibrary, Version,
};
use crate::error::{Error, Result};

const SPEC: LibrarySpec = LibrarySpec {
    name: "NVRTC",
    soname: "libnvrtc.so.13",
    wheel: "nvidia-cuda-nvrtc==13.0.88",
};

type Program = *mut c_void;
type Res = c_int;

struct Fns {
    error_string: unsafe extern "C" fn(Res) -> *const c_char,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Res,
    destroy: unsafe extern "C" fn(*mut Program) -> Res,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Res,
    ltoir_size: unsafe extern "C" fn(Program, *mut usize) -> Res,
    ltoir: unsafe extern "C" fn(Program, *mut c_char) -> Res,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> Res,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> Res,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> Res,
    log: unsafe extern "C" fn(Program, *mut c_char) -> Res,
    add_name_expression: unsafe extern "C" fn(Program, *const c_char) -> Res,
    lowered_name: unsafe extern "C" fn(Program, *const c_char, *mut *const c_char) -> Res,
}

/// A loaded NVRTC, with its builtins preloaded.
pub struct Nvrtc {
    fns: Fns,
    version: Version,
    builtins_path: PathBuf,
    // Kept loaded for NVRTC's lifetime; NVRTC finds it by soname once it is resident.
    _builtins: libloading::Library,
    opened: OpenedLibrary,
}

/// What NVRTC produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// LTO-IR (the options must contain `-dlto`).
    LtoIr,
    /// PTX text.
    Ptx,
}

/// The result of one successful compilation.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The LTO-IR or PTX bytes.
    pub code: Vec<u8>,
    /// NVRTC's log (warnings).
    pub log: String,
    /// Each requested name expression with its lowered (mangled) name.
    pub lowered_names: Vec<(String, String)>,
}

static LOADED: Lazy<Nvrtc> = Lazy::new();

impl Nvrtc {
    /// The process-wide NVRTC, loaded on first use.
    pub fn get() -> Result<Arc<Nvrtc>> {
        LOADED.get_or_load(Self::load)
    }

    fn load() -> Result<Self> {
        let opened = open_library(&SPEC)?;
        macro_rules! sym {
            ($api:literal) => {
                // SAFETY: the field's type is the C signature of this NVRTC API (nvrtc.h, 13.0).
                unsafe { resolve(&opened, SPEC.name, $api, &[$api.to_string()])? }
            };
        }
        // SAFETY: nvrtcResult nvrtcVersion(int* major, int* minor) (nvrtc.h, 13.0).
        let version = unsafe {
            reported_version::<c_int>(
                &SPEC,
                &opened,
                "nvrtcVersion",
                "the LTO-IR it makes links only within that major version",
            )?
        };
        let (builtins, builtins_path) = preload_builtins(&opened.path, version)?;
        let fns = Fns {
            error_string: sym!("nvrtcGetErrorString"),
            create: sym!("nvrtcCreateProgram"),
            destroy: sym!("nvrtcDestroyProgram"),
            compile: sym!("nvrtcCompileProgram"),
            ltoir_size: sym!("nvrtcGetLTOIRSize"),
            ltoir: sym!("nvrtcGetLTOIR"),
            ptx_size: sym!("nvrtcGetPTXSize"),
            ptx: sym!("nvrtcGetPTX"),
            log_size: sym!("nvrtcGetProgramLogSize"),
            log: sym!("nvrtcGetProgramLog"),
            add_name_expression: sym!("nvrtcAddNameExpression"),
            lowered_name: sym!("nvrtcGetLoweredName"),
        };
        Ok(Nvrtc {
            fns,
            version,
            builtins_path,
            _builtins: builtins,
            opened,
        })
    }

    // NVRTC's version: LTO-IR it makes needs an nvJitLink at least this new.
    library_accessors!();

    /// Where the builtins library was preloaded from.
    pub fn builtins_path(&self) -> &Path {
        &self.builtins_path
    }

    fn check(&self, call: &'static str, rc: Res) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: nvrtcGetErrorString accepts any code and returns a static string (or
        // null, which c_string handles).
        let message = unsafe { c_string((self.fns.error_string)(rc)) };
        Err(Error::Nvrtc {
            call,
            code: rc,
            message,
        })
    }

    /// Compiles one CUDA C++ source. `options` are passed as given (the caller adds
    /// `-dlto` for LTO-IR); `name_expressions` are template instantiations whose lowered
    /// names are returned. Compilation errors carry NVRTC's log.
    pub fn compile(
        &self,
        source: &str,
        name: &str,
        options: &[String],
        name_expressions: &[String],
        output: Output,
    ) -> Result<Compiled> {
        let src = CString::new(source)
            .map_err(|_| Error::InvalidArgument(format!("{name}: source contains a NUL byte")))?;
        let c_name = CString::new(name).map_err(|_| {
            Error::InvalidArgument(format!("program name {name:?} contains a NUL byte"))
        })?;
        let mut raw: Program = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; source and name are NUL-terminated; no
        // headers are passed (count 0, null arrays).
        let rc = unsafe {
            (self.fns.create)(
                &mut raw,
                src.as_ptr(),
                c_name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.check("nvrtcCreateProgram", rc)?;
        let program = ProgramGuard { nvrtc: self, raw };
        let c_exprs = c_strings(name_expressions)?;
        for expr in &c_exprs {
            // SAFETY: the program is live; `expr` is NUL-terminated.
            self.check("nvrtcAddNameExpression", unsafe {
                (self.fns.add_name_expression)(program.raw, expr.as_ptr())
            })?;
        }
        let c_opts = c_strings(options)?;
        let ptrs: Vec<*const c_char> = c_opts.iter().map(|s| s.as_ptr()).collect();
        let count = c_int::try_from(ptrs.len())
            .map_err(|_| Error::InvalidArgument("too many NVRTC options".into()))?;
        // SAFETY: the program is live; `ptrs` holds `count` NUL-terminated strings.
        let rc = unsafe { (self.fns.compile)(program.raw, count, ptrs.as_ptr()) };
        let log = program.log();
        if rc != 0 {
            let mut log = log;
            if log.contains("libnvrtc-builtins") {
                log.push_str("\n(hint: NVRTC could not open its builtins library; set LTOKIT_CUDA_LIB_DIR to the directory holding libnvrtc-builtins.so.13.*)");
            }
            return Err(Error::Compile {
                name: name.to_string(),
                options: options.join(" "),
                log: if log.trim().is_empty() {
                    self.check("nvrtcCompileProgram", rc)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default()
                } else {
                    log
                },
            });
        }
        let (size_fn, get_fn, what) = match output {
            Output::LtoIr => (self.fns.ltoir_size, self.fns.ltoir, "nvrtcGetLTOIR"),
            Output::Ptx => (self.fns.ptx_size, self.fns.ptx, "nvrtcGetPTX"),
        };
        let mut size = 0usize;
        // SAFETY: the program is live and `size` a valid out-pointer.
        self.check(what, unsafe { size_fn(program.raw, &mut size) })?;
        let mut code = vec![0u8; size];
        // SAFETY: `code` has exactly the size NVRTC reported.
        self.check(what, unsafe {
            get_fn(program.raw, code.as_mut_ptr().cast())
        })?;
        if output == Output::Ptx {
            while code.last() == Some(&0) {
                code.pop();
            }
        }
        let mut lowered_names = Vec::with_capacity(c_exprs.len());
        for (expr, c_expr) in name_expressions.iter().zip(&c_exprs) {
            let mut lowered: *const c_char = std::ptr::null();
            // SAFETY: the program is live and compiled; the returned string lives as long
            // as the program and is copied before the program is destroyed.
            self.check("nvrtcGetLoweredName", unsafe {
                (self.fns.lowered_name)(program.raw, c_expr.as_ptr(), &mut lowered)
            })?;
            // SAFETY: `lowered` is null or points into the program's storage, which
            // `program` keeps alive until after this copy.
            lowered_names.push((expr.clone(), unsafe { c_string(lowered) }));
        }
        Ok(Compiled {
            code,
            log,
            lowered_names,
        })
    }
}

/// Owns an NVRTC program; destroys it on every path.
struct ProgramGuard<'a> {
    nvrtc: &'a Nvrtc,
    raw: Program,
}

impl ProgramGuard<'_> {
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: the program is live and `size` a valid out-pointer.
        if unsafe { (self.nvrtc.fns.log_size)(self.raw, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` has exactly the size NVRTC reported.
        if unsafe { (self.nvrtc.fns.log)(self.raw, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        log_to_string(buf)
    }
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the program came from nvrtcCreateProgram and is destroyed only here.
        let rc = unsafe { (self.nvrtc.fns.destroy)(&mut self.raw) };
        if rc != 0 {
            tracing::warn!(code = rc, "nvrtcDestroyProgram failed");
        }
    }
}

/// Loads `libnvrtc-builtins.so.<major>.<minor>` from NVRTC's own directory, else by
/// soname; it must be resident before the first compile.
fn preload_builtins(nvrtc_path: &Path, version: Version) -> Result<(libloading::Library, PathBuf)> {
    let file = format!("libnvrtc-builtins.so.{}.{}", version.major, version.minor);
    let resolved = std::fs::canonicalize(nvrtc_path).unwrap_or_else(|_| nvrtc_path.to_owned());
    let mut searched = Vec::new();
    for dir in [nvrtc_path.parent(), resolved.parent()]
        .into_iter()
        .flatten()
    {
        let candidate = dir.join(&file);
        if candidate.is_file() {
            return Ok((load_by_path(&candidate)?, candidate));
        }
        searched.push(candidate);
    }
    // SAFETY: loading the builtins runs only their initialisers.
    if let Ok(lib) = unsafe { libloading::Library::new(&file) } {
        let path = super::discovery::loaded_path_of(&file).unwrap_or_else(|| PathBuf::from(&file));
        return Ok((lib, path));
    }
    searched.push(PathBuf::from(format!("{file} (system loader)")));
    Err(Error::LibraryNotFound {
        library: "NVRTC builtins",
        soname: "libnvrtc-builtins.so.13.*",
        searched,
    })
}
