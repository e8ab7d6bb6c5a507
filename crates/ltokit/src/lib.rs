//! # ltokit
//!
//! GPU kernels shipped as small link-time-optimisable fragments (LTO-IR), linked with
//! nvJitLink into machine code for the exact GPU present.
//!
//! The layers, bottom up (each uses only those below it):
//!
//! | module | job |
//! |---|---|
//! | [`error`], [`version`], [`digest`] | the error type; toolkit versions; BLAKE3 digests and field hashing |
//! | [`toolkit`] | find and open NVRTC, nvJitLink, nvFatbin by absolute path; the FFI |
//! | [`arch`] | targets (`sm_90a`, `compute_100f`, `lto_90`) and the rules of what runs and links where |
//! | [`formats`] | fatbin containers, cubin ELF facts, LTO-IR headers, ltokit's own envelope, inventory, audit |
//! | [`fragment`] | CUDA C++ → LTO-IR with NVRTC |
//! | [`link`] | LTO-IR, fatbins, cubins, PTX → cubin with nvJitLink, with producer and target checks |
//! | [`plan`] | what to link for one kernel variant on one exact target, its requirements and its key |
//! | [`bundle`] | one versioned file of named LTO-IR fragments and the plans that combine them |
//! | [`provider`] | prebuilt cubins for one exact target: files, discovery and matching, building |
//! | [`cache`] | the kernel cache: memory (single flight) → providers → disk → link; warm-up |
//! | `launch` | load cubins and launch kernels with checked arguments (feature `gpu`; needs a GPU) |
//!
//! Nothing but `launch` needs a GPU or libcuda, and it is compiled only with the `gpu`
//! feature: a link-only user needs no driver bindings at all.
//!
//! ## At run time, in four calls
//!
//! ```no_run
//! # fn main() -> ltokit::Result<()> {
//! use ltokit::{bundle::Bundle, cache::{CacheConfig, KernelCache}};
//! // 1. A bundle of LTO-IR fragments (usually `include_bytes!` of what build.rs made).
//! let bundle = Bundle::open(std::path::Path::new("kernels.ltkb"))?;
//! // 2. The plan a call needs, for the exact GPU present.
//! let plan = bundle.plan("scan_f32_l2", "sm_90".parse()?)?;
//! // 3. A cache from the environment (LTOKIT_CACHE_DIR, LTOKIT_JIT, providers …).
//! let cache = KernelCache::new(CacheConfig::from_env()?);
//! // 4. The cubin: from memory, a provider, the disk cache, or a fresh link.
//! let cubin = cache.get(&plan)?;
//! # let _ = cubin; Ok(()) }
//! ```

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod arch;
pub mod bundle;
pub mod cache;
pub mod digest;
pub mod error;
pub mod formats;
pub mod fragment;
#[cfg(feature = "gpu")]
pub mod graph;
#[cfg(feature = "gpu")]
pub mod launch;
pub mod link;
#[doc(hidden)] // the job runner of ltokit-build, not part of the API
pub mod parallel;
#[cfg(feature = "gpu")]
pub mod pinned;
pub mod plan;
pub mod provider;
pub mod toolkit;
pub mod version;

pub use arch::{ComputeCapability, Target};
pub use error::{Error, Result};
