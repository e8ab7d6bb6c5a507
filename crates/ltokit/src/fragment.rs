//! Fragments: pieces of a kernel compiled from CUDA C++ to LTO-IR with NVRTC.
//!
//! A fragment is compiled once (at build time or on first use) for a *virtual*
//! architecture (`compute_XY`, optionally `a`/`f`) and later linked by nvJitLink for the
//! exact GPU present. The options always include `-dlto -rdc=true -std=c++17`, the
//! caller's include directories and defines, then the CUDA headers found next to the
//! toolkit (the toolkit's `include/` or the pip wheels' `nvidia/cu13/include` and its
//! `cccl/`).

use std::path::{Path, PathBuf};

use crate::arch::{CodeKind, Target};
use crate::error::{Error, Result};
use crate::toolkit::nvrtc::{Nvrtc, Output};
use crate::toolkit::{discovery, Version};

/// How to compile a fragment.
#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// The architecture the IR is for; its kind is ignored (IR is always for
    /// `compute_XY[a|f]`). Base IR links for this and every newer architecture.
    pub target: Target,
    /// Extra include directories, searched before the CUDA headers.
    pub include_dirs: Vec<PathBuf>,
    /// Preprocessor defines: `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Template instantiations to force and report the lowered names of,
    /// e.g. `scan<float, 4>`.
    pub name_expressions: Vec<String>,
    /// Further NVRTC options, passed as given (e.g. `-use_fast_math`).
    pub extra_options: Vec<String>,
    /// Add the CUDA headers found next to the toolkit (default true).
    pub cuda_headers: bool,
}

impl CompileOptions {
    /// Options for `target` with the CUDA headers and nothing else.
    pub fn new(target: Target) -> Self {
        CompileOptions {
            target,
            include_dirs: Vec::new(),
            defines: Vec::new(),
            name_expressions: Vec::new(),
            extra_options: Vec::new(),
            cuda_headers: true,
        }
    }

    /// Adds a `-D` define.
    pub fn define(mut self, define: impl Into<String>) -> Self {
        self.defines.push(define.into());
        self
    }

    /// Adds an include directory.
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Adds a name expression.
    pub fn name_expression(mut self, expr: impl Into<String>) -> Self {
        self.name_expressions.push(expr.into());
        self
    }

    /// The full NVRTC option list, given where NVRTC was loaded from.
    fn nvrtc_options(&self, nvrtc_path: &Path) -> Result<Vec<String>> {
        let mut opts = vec![
            "-dlto".to_string(),
            "-rdc=true".to_string(),
            "-std=c++17".to_string(),
            format!("-arch={}", self.target.nvrtc_arch()),
        ];
        for define in &self.defines {
            let name = define.split('=').next().unwrap_or_default();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(Error::InvalidArgument(format!(
                    "define {define:?} is not NAME or NAME=VALUE"
                )));
            }
            opts.push(format!("-D{define}"));
        }
        for dir in &self.include_dirs {
            opts.push(format!("-I{}", dir.display()));
        }
        if self.cuda_headers {
            let mut headers = nvrtc_path
                .parent()
                .map(discovery::include_dirs_near)
                .unwrap_or_default();
            if headers.is_empty() {
                headers = discovery::all_include_dirs();
            }
            for dir in headers {
                opts.push(format!("-I{}", dir.display()));
            }
        }
        opts.extend(self.extra_options.iter().cloned());
        Ok(opts)
    }
}

/// A compiled fragment: LTO-IR plus what is known about how it was made.
#[derive(Debug, Clone)]
pub struct Fragment {
    /// Its name (the source file name, or one given by the caller).
    pub name: String,
    /// The LTO-IR bytes.
    pub ltoir: Vec<u8>,
    /// The IR's target (`lto_XY[a|f]`).
    pub target: Target,
    /// The NVRTC version that produced it; nvJitLink must be of the same major and at
    /// least this new.
    pub producer: Version,
    /// Lowered names of the requested name expressions.
    pub lowered_names: Vec<(String, String)>,
    /// NVRTC's log (warnings), empty when clean.
    pub log: String,
    /// The options it was compiled with.
    pub options: Vec<String>,
}

impl Fragment {
    /// The lowered (mangled) name NVRTC gave a name expression.
    pub fn lowered_name(&self, expression: &str) -> Option<&str> {
        self.lowered_names
            .iter()
            .find(|(e, _)| e == expression)
            .map(|(_, lowered)| lowered.as_str())
    }
}

/// Compiles CUDA C++ `source` (named `name` in logs) to LTO-IR.
pub fn compile(source: &str, name: &str, options: &CompileOptions) -> Result<Fragment> {
    let nvrtc = Nvrtc::get()?;
    let opts = options.nvrtc_options(nvrtc.path())?;
    let compiled = nvrtc.compile(
        source,
        name,
        &opts,
        &options.name_expressions,
        Output::LtoIr,
    )?;
    Ok(Fragment {
        name: name.to_string(),
        ltoir: compiled.code,
        target: options.target.with_kind(CodeKind::Lto),
        producer: nvrtc.version(),
        lowered_names: compiled.lowered_names,
        log: compiled.log,
        options: opts,
    })
}

/// Reads and compiles a `.cu` file; the directory it is in is searched for includes.
pub fn compile_file(path: &Path, options: &CompileOptions) -> Result<Fragment> {
    let source = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut options = options.clone();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        options.include_dirs.insert(0, dir.to_owned());
    }
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    compile(&source, &name, &options)
}

/// Compiles CUDA C++ to PTX (for callers that want to ship or link PTX).
pub fn compile_ptx(source: &str, name: &str, options: &CompileOptions) -> Result<String> {
    let nvrtc = Nvrtc::get()?;
    let opts: Vec<String> = options
        .nvrtc_options(nvrtc.path())?
        .into_iter()
        .filter(|o| o != "-dlto")
        .collect();
    let compiled = nvrtc.compile(source, name, &opts, &options.name_expressions, Output::Ptx)?;
    Ok(String::from_utf8_lossy(&compiled.code).into_owned())
}
