//! The binary formats ltokit reads and writes, and what is built directly on reading them.
//!
//! | module | job |
//! |---|---|
//! | [`fatbin`] | NVIDIA's fatbin container: read, write, find inside ELF host binaries |
//! | [`cubin`] | cubin ELF facts: machine, architecture from `e_flags`, kernels |
//! | [`ltoir`] | LTO-IR header facts: the producing toolkit's version |
//! | `container` | ltokit's own envelope (magic, version, digested manifest) shared by bundles and providers (internal) |
//! | `blocks` | solid zstd blocks of many small items, read back one at a time (internal) |
//! | [`inventory`] | every device-code entry of any CUDA binary |
//! | [`audit`] | the policy check behind `ltokit check` |

pub mod audit;
#[doc(hidden)] // the payload encoding of bundles and providers, not part of the API
pub mod blocks;
#[doc(hidden)] // the envelope of bundles and providers, not part of the API
pub mod container;
pub mod cubin;
pub mod fatbin;
pub mod inventory;
pub mod ltoir;
