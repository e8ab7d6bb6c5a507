//! Provides the IVF-Flat kernel bundle (LTO-IR fragments) that the crate embeds with
//! `include_bytes!`: the checked-in `kernels/prebuilt/ivf.ltkb` where it matches the
//! current sources (so a machine without NVRTC still builds, and every build embeds the
//! bytes the providers and warmed caches were made from), else compiled by ltokit-build
//! with NVRTC when the CUDA compiler libraries are installed.

use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("ivf.ltkb");
    if let Err(e) = ltokit_build::build_or_prebuilt(
        Path::new("kernels/bundle.json"),
        Path::new("kernels/prebuilt/ivf.ltkb"),
        &out,
        0,
    ) {
        eprintln!("error: providing the IVF kernel bundle failed: {e}");
        std::process::exit(1);
    }
}
