//! Shared by the GPU test binaries of ltokit and ltokit-ivf (included with `#[path]`).

/// Points the CUDA compute cache (compiled code the driver keeps across processes, by
/// default under `~/.nv`) into the temporary directory before the first CUDA call, so
/// that the tests write nowhere else; a `CUDA_CACHE_PATH` the caller set is kept.
pub fn keep_the_cuda_cache_in_temp() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("CUDA_CACHE_PATH").is_none() {
            let dir = std::env::temp_dir().join("ltokit-test-cuda-compute-cache");
            std::env::set_var("CUDA_CACHE_PATH", dir);
        }
    });
}
