//! Compiles this crate's kernel fragments to an LTO-IR bundle that `main.rs` embeds.

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("kernels.ltkb");
    match ltokit_build::build_bundle(std::path::Path::new("kernels/bundle.json"), &out, 0) {
        Ok(report) => ltokit_build::emit_rerun_if_changed(&report),
        Err(e) => {
            eprintln!("error: compiling the kernels failed: {e}");
            std::process::exit(1);
        }
    }
}
