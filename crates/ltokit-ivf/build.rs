//! Compiles the IVF-Flat kernel fragments to an LTO-IR bundle (ltokit-build), embedded by
//! the crate with include_bytes!. Needs NVRTC: run scripts/setup-cuda.sh first.

use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("ivf.ltkb");
    match ltokit_build::build_bundle(Path::new("kernels/bundle.json"), &out, 0) {
        Ok(report) => ltokit_build::emit_rerun_if_changed(&report),
        Err(e) => {
            eprintln!("error: building the IVF kernel bundle failed: {e}");
            eprintln!(
                "hint: the build needs the CUDA compiler libraries; run scripts/setup-cuda.sh"
            );
            std::process::exit(1);
        }
    }
}
