//! # ltokit
//!
//! GPU kernels shipped as small link-time-optimisable fragments (LTO-IR), linked with
//! nvJitLink into machine code for the exact GPU present.
//!
//! The layers, bottom up (each uses only those below it):
//!
//! | module | job |
//! |---|---|
//! | [`toolkit`] | find and open NVRTC, nvJitLink, nvFatbin by absolute path; the FFI |
//! | [`arch`] | targets (`sm_90a`, `compute_100f`, `lto_90`) and the rules of what runs and links where |
//! | [`fatbin`], [`cubin`], [`ltoir`] | the binary formats: fatbin containers (read, write, find in ELF), cubin ELF facts, LTO-IR headers |
//! | [`inventory`] | every device-code entry of any CUDA binary |
//! | [`fragment`] | CUDA C++ → LTO-IR with NVRTC |
//! | [`link`] | LTO-IR, fatbins, cubins, PTX → cubin with nvJitLink, with producer and target checks |
//! | [`launch`] | load cubins and launch kernels with checked arguments (needs a GPU) |
//! | [`demo`] | a three-fragment example kernel with its CPU reference |
//!
//! Nothing but [`launch`] needs a GPU or libcuda.

pub mod arch;
pub mod audit;
pub mod bundle;
pub mod cache;
pub mod container;
pub mod cubin;
pub mod demo;
pub mod digest;
pub mod error;
pub mod fatbin;
pub mod fragment;
pub mod inventory;
pub mod launch;
pub mod link;
pub mod ltoir;
pub mod parallel;
pub mod plan;
pub mod provider;
pub mod toolkit;

pub use arch::{ComputeCapability, Target};
pub use error::{Error, Result};
