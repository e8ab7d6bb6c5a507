//! The one error type of the library.
//!
//! Every variant says what went wrong *and* what to do about it, in the style of
//! ripgrep's messages: a user reading the text alone should know the next step.

use std::path::PathBuf;

/// Result alias used across ltokit.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in ltokit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A CUDA library could not be found anywhere on the search path.
    #[error(
        "{library} was not found; searched:\n{}\nfix: install the CUDA 13 compiler libraries — the PyPI wheels nvidia-cuda-nvrtc, nvidia-nvjitlink and nvidia-nvfatbin (13.x) in an environment ltokit searches, or the CUDA toolkit (set CUDA_HOME) — or set LTOKIT_CUDA_LIB_DIR to the directory that holds {soname} (in ltokit's own repository, scripts/setup-cuda.sh installs the wheels into .cuda/pip)",
        searched.iter().map(|p| format!("  - {}", p.display())).collect::<Vec<_>>().join("\n")
    )]
    LibraryNotFound {
        /// Human name of the library, e.g. "nvJitLink".
        library: &'static str,
        /// The file name looked for, e.g. `libnvJitLink.so.13`.
        soname: &'static str,
        /// Every place that was tried, in order.
        searched: Vec<PathBuf>,
    },

    /// A library file exists but could not be opened by the dynamic loader.
    #[error("could not load {}: {source}; fix: check that the file is an x86-64 shared library of CUDA 13 and that its dependencies resolve (ldd)", path.display())]
    LibraryLoad {
        /// The path that was opened.
        path: PathBuf,
        /// The loader's own error.
        source: libloading::Error,
    },

    /// A required function is missing from a library that did load.
    #[error("{library} at {} has no symbol {symbol} (tried: {}); fix: install a CUDA 13 build of {library} (e.g. pip wheel 13.0.88) or point LTOKIT_CUDA_LIB_DIR at one", path.display(), tried.join(", "))]
    SymbolMissing {
        /// Human name of the library.
        library: &'static str,
        /// Path of the library that was searched.
        path: PathBuf,
        /// The API name that was wanted.
        symbol: &'static str,
        /// Every symbol name that was tried.
        tried: Vec<String>,
    },

    /// A library reported a version that ltokit cannot work with.
    #[error("{library} {found} is not supported: {why}")]
    UnsupportedVersion {
        /// Human name of the library.
        library: &'static str,
        /// The version found, as `major.minor`.
        found: String,
        /// Why it is not usable and what to do.
        why: String,
    },

    /// An NVRTC call failed outside compilation proper.
    #[error("NVRTC {call} failed: {message} (code {code})")]
    Nvrtc {
        /// The API function.
        call: &'static str,
        /// NVRTC's result code.
        code: i32,
        /// NVRTC's description of the code.
        message: String,
    },

    /// NVRTC rejected a source file; the log says why.
    #[error("NVRTC could not compile {name} (options: {options}):\n{log}")]
    Compile {
        /// The program name (usually the source file name).
        name: String,
        /// The options it was compiled with.
        options: String,
        /// NVRTC's program log.
        log: String,
    },

    /// An nvJitLink call failed; `log` is nvJitLink's error log.
    #[error("nvJitLink {call} failed: {reason} (code {code}){}", if log.trim().is_empty() { String::new() } else { format!("\nnvJitLink log:\n{}", log.trim_end()) })]
    Link {
        /// The API function that failed.
        call: &'static str,
        /// nvJitLink's result code.
        code: u32,
        /// What the code means, with advice.
        reason: String,
        /// nvJitLink's error log at the time of failure.
        log: String,
    },

    /// LTO-IR was produced by a newer toolkit than the nvJitLink that would link it.
    #[error("{input}: LTO-IR made by CUDA {producer} is newer than nvJitLink {linker}; nvJitLink must be of the same major version and at least as new as the producer. fix: install nvJitLink >= {producer} (same major), or rebuild the IR with NVRTC <= {linker}")]
    IrNewerThanLinker {
        /// Name of the offending input.
        input: String,
        /// Producer toolkit version `major.minor`.
        producer: String,
        /// nvJitLink version `major.minor`.
        linker: String,
    },

    /// An nvFatbin call failed.
    #[error("nvFatbin {call} failed: {message} (code {code})")]
    Nvfatbin {
        /// The API function.
        call: &'static str,
        /// nvFatbin's result code.
        code: i32,
        /// nvFatbin's description of the code.
        message: String,
    },

    /// A fatbin container is malformed.
    #[error("malformed fatbin at byte {offset}: {what}")]
    Fatbin {
        /// Byte offset in the input where the problem was found.
        offset: usize,
        /// What is wrong.
        what: String,
    },

    /// An ELF file (host binary or cubin) is malformed or not what was expected.
    #[error("{what}")]
    Elf {
        /// What is wrong.
        what: String,
    },

    /// An input file's content was not recognised.
    #[error("{input}: {what}")]
    UnrecognizedInput {
        /// Name of the input.
        input: String,
        /// What was found instead and what is accepted.
        what: String,
    },

    /// A fatbin entry could not be decompressed.
    #[error("cannot decompress {what}")]
    Decompress {
        /// What failed and why.
        what: String,
    },

    /// A target architecture string did not parse, or a target is not valid where used.
    #[error("invalid target {text:?}: {why}")]
    InvalidTarget {
        /// The text given.
        text: String,
        /// Why it is invalid, with the accepted forms.
        why: String,
    },

    /// A caller-supplied parameter is out of range or inconsistent.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// File-system error with the path it concerns.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path being read or written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// The CUDA driver is missing or a driver call failed.
    #[error("CUDA driver: {0}")]
    Driver(String),

    /// Another thread's computation of the same cache entry failed.
    #[error("the link of plan key {key} by another thread failed: {message}")]
    Flight {
        /// The plan key.
        key: String,
        /// That thread's error, as text.
        message: String,
    },

    /// A plan was asked for a target that does not meet its requirements.
    #[error("plan {plan} cannot run on {target}: it {requirement}; fix: ask for a target that meets the requirement (e.g. --arch), or pick another plan of the bundle")]
    UnsupportedPlan {
        /// The plan's name.
        plan: String,
        /// The target asked for.
        target: crate::arch::Target,
        /// What the target lacks, e.g. "needs sm_100 or newer".
        requirement: String,
    },

    /// A bundle has no plan of the name asked for.
    #[error("bundle {bundle} has no plan {plan:?} (it has {count} plans; `ltokit bundle inspect` lists them)")]
    UnknownPlan {
        /// The bundle's label.
        bundle: String,
        /// The name asked for.
        plan: String,
        /// How many plans it has.
        count: usize,
    },

    /// Linking one plan failed (warm-up, provider builds); the linker's own error, log
    /// included, is the source.
    #[error("linking plan {plan} for {target}: {source}")]
    PlanLink {
        /// The plan's name.
        plan: String,
        /// The target it was linked for.
        target: crate::arch::Target,
        /// What the linker said.
        source: Box<Error>,
    },

    /// zstd could not compress a payload.
    #[error("cannot compress {what}: {source}; fix: this is a zstd failure (usually out of memory) — retry with more memory")]
    Compress {
        /// What was being compressed.
        what: String,
        /// zstd's error.
        source: std::io::Error,
    },

    /// A manifest could not be written as JSON.
    #[error("cannot serialise {what}: {source}")]
    Serialize {
        /// What was being written.
        what: String,
        /// serde_json's error.
        source: serde_json::Error,
    },

    /// An `LTOKIT_*` environment variable holds a value ltokit cannot use.
    #[error("{variable}={value:?}: {why}")]
    BadEnvironment {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is accepted.
        why: String,
    },

    /// The disk cache directory cannot be used (not creatable, untrusted owner or mode).
    #[error("the disk cache at {} cannot be used: {why}", dir.display())]
    CacheUnusable {
        /// The directory.
        dir: PathBuf,
        /// Why, and what to do.
        why: String,
    },

    /// A bundle spec (ltokit-build) is malformed or inconsistent.
    #[error("bundle spec {spec}: {why}")]
    BadSpec {
        /// The spec's file or name.
        spec: String,
        /// What is wrong, and how to fix it.
        why: String,
    },

    /// A checked-in prebuilt bundle no longer matches the spec and sources it was built
    /// from, and NVRTC is not available to rebuild it.
    #[error("the prebuilt bundle {} is stale: {why}; fix: install the CUDA compiler libraries (the nvidia-cuda-nvrtc wheel, or set LTOKIT_CUDA_LIB_DIR) so that the bundle is compiled, then refresh the prebuilt copy from the fresh build (`ltokit bundle build SPEC -o PREBUILT`; in ltokit's repository scripts/update-prebuilt.sh)", prebuilt.display())]
    StalePrebuilt {
        /// The prebuilt bundle.
        prebuilt: PathBuf,
        /// The first difference found.
        why: String,
    },

    /// `native` was given as a target and no GPU could say what it is.
    #[error("--arch native needs a GPU to name the target, but {why}; fix: name the target instead, e.g. --arch sm_90 (H100/H200), sm_80 (A100), sm_89 (L4/L40), sm_100 (B200), sm_120 (RTX 50xx)")]
    NoNativeTarget {
        /// Why no GPU answered.
        why: String,
    },

    /// Strict mode (`LTOKIT_JIT=off`) and the plan is in no cache.
    #[error("LTOKIT_JIT=off and {plan} is not cached (looked in: {looked_in}); fix: run `ltokit warmup` for this target, install a provider, or allow linking (unset LTOKIT_JIT)")]
    NotCached {
        /// The plan, described.
        plan: String,
        /// The levels searched.
        looked_in: String,
    },

    /// A kernel launch was refused before reaching the GPU.
    #[error("launch of {kernel}: {why}")]
    Launch {
        /// The kernel's name.
        kernel: String,
        /// Why the launch was refused.
        why: String,
    },
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn fatbin(offset: usize, what: impl Into<String>) -> Self {
        Error::Fatbin {
            offset,
            what: what.into(),
        }
    }
}
