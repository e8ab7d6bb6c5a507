//! GPU tests: run only on a machine with an NVIDIA GPU, with `--ignored`
//! (scripts/gpu-run.sh does). Every result is compared with the CPU reference on fresh
//! random inputs; output buffers start poisoned.

use ltokit::formats::fatbin::{Codec, EntryKind, FatbinWriter};
use ltokit::launch::{Gpu, LaunchConfig, Param};
use ltokit::link::{self, LinkInput};
use ltokit::{Error, Target};
use ltokit_demo as demo;

#[path = "support/cuda_cache.rs"]
mod cuda_cache;
use cuda_cache::keep_the_cuda_cache_in_temp;

fn gpu() -> Gpu {
    keep_the_cuda_cache_in_temp();
    Gpu::open(0).expect("these tests need a GPU; run them on the GPU machine (scripts/gpu-run.sh)")
}

fn seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn demo_cubin(target: Target) -> Vec<u8> {
    keep_the_cuda_cache_in_temp();
    let fragments = demo::compile_fragments(target).unwrap();
    let inputs: Vec<LinkInput> = fragments.iter().map(LinkInput::from_fragment).collect();
    link::link(&inputs, target, &["-O3".into()]).unwrap().cubin
}

#[test]
#[ignore = "needs a GPU"]
fn three_fragment_kernel_matches_the_cpu_reference() {
    let gpu = gpu();
    let target = Target::native(gpu.compute_capability());
    let cubin = demo_cubin(target);
    for len in [1usize, 255, 256, 257, 100_003, (1 << 22) + 5] {
        let seed = seed();
        let check = demo::check_on_gpu(&gpu, &cubin, len, seed).unwrap();
        println!(
            "{target} n={len}: max rel error {:.2e}, {} mismatches (seed {seed})",
            check.max_rel_error, check.mismatches
        );
        assert_eq!(check.mismatches, 0, "n={len} seed={seed}");
    }
}

#[test]
#[ignore = "needs a GPU"]
fn arch_specific_target_runs_too() {
    let gpu = gpu();
    let cc = gpu.compute_capability();
    let target: Target = format!("sm_{}{}a", cc.major, cc.minor).parse().unwrap();
    let check = demo::check_on_gpu(&gpu, &demo_cubin(target), 10_000, seed()).unwrap();
    assert_eq!(check.mismatches, 0);
}

#[test]
#[ignore = "needs a GPU"]
fn fatbin_from_our_writer_loads_in_the_driver() {
    let gpu = gpu();
    let target = Target::native(gpu.compute_capability());
    let cubin = demo_cubin(target);
    let mut w = FatbinWriter::new();
    // An entry for another major first, then ours compressed: the driver must pick ours.
    w.add(
        EntryKind::Cubin,
        "sm_80".parse().unwrap(),
        &demo_cubin("sm_80".parse().unwrap()),
        Codec::None,
    )
    .unwrap();
    w.add(EntryKind::Cubin, target, &cubin, Codec::Zstd)
        .unwrap();
    let check = demo::check_on_gpu(&gpu, &w.finish(), 4096, seed()).unwrap();
    assert_eq!(check.mismatches, 0);
}

#[test]
#[ignore = "needs a GPU"]
fn wrong_signatures_and_launches_are_errors() {
    let gpu = gpu();
    let cubin = demo_cubin(Target::native(gpu.compute_capability()));
    let wrong = [Param::Ptr, Param::Ptr, Param::F32];
    let err = gpu
        .load_kernel(&cubin, demo::KERNEL, &wrong)
        .err()
        .expect("a short signature must be refused");
    assert!(matches!(err, Error::Launch { .. }), "{err}");
    let err = gpu
        .load_kernel(&cubin, "no_such_kernel", demo::SIGNATURE)
        .err()
        .expect("unknown kernel");
    assert!(err.to_string().contains("no_such_kernel"), "{err}");

    let kernel = gpu
        .load_kernel(&cubin, demo::KERNEL, demo::SIGNATURE)
        .unwrap();
    let x = gpu.upload(&[1f32; 32]).unwrap();
    let mut y = gpu.upload(&[1f32; 32]).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    // Scalars swapped: f32 where an i32 goes.
    let (a, n) = (2.0f32, 32i32);
    let swapped = gpu
        .launch(&kernel, cfg)
        .buffer(&x)
        .buffer_mut(&mut y)
        .scalar(&n)
        .scalar(&a);
    // SAFETY: the launch is refused before it reaches the GPU (that is what is tested);
    // were it not, ltk_demo would touch 32 elements of 32-element buffers.
    let err = unsafe { swapped.run() }.unwrap_err();
    assert!(err.to_string().contains("do not match"), "{err}");
    let bad_shape = LaunchConfig {
        block_dim: (2048, 1, 1),
        ..cfg
    };
    let too_wide = gpu
        .launch(&kernel, bad_shape)
        .buffer(&x)
        .buffer_mut(&mut y)
        .scalar(&a)
        .scalar(&n);
    // SAFETY: as above: refused before launch; n = 32 bounds every access.
    assert!(unsafe { too_wide.run() }.is_err());
    // Buffers are checked against the declared element type and length: n = 33 is one
    // more element than either buffer holds; an i32 buffer is not a float buffer; a
    // buffer the kernel writes must be passed as writable.
    let n33 = 33i32;
    let short = gpu
        .launch(&kernel, cfg)
        .buffer(&x)
        .buffer_mut(&mut y)
        .scalar(&a)
        .scalar(&n33);
    // SAFETY: refused before launch (what is tested).
    let err = unsafe { short.run() }.unwrap_err().to_string();
    assert!(
        err.contains("argument 0: 32 elements, the kernel needs 33"),
        "{err}"
    );
    let ints = gpu.upload(&[1i32; 32]).unwrap();
    let wrong_type = gpu
        .launch(&kernel, cfg)
        .buffer(&ints)
        .buffer_mut(&mut y)
        .scalar(&a)
        .scalar(&n);
    // SAFETY: refused before launch.
    let err = unsafe { wrong_type.run() }.unwrap_err().to_string();
    assert!(err.contains("a buffer of Some(I32), declared F32"), "{err}");
    let y2 = gpu.upload(&[1f32; 32]).unwrap();
    let read_only = gpu
        .launch(&kernel, cfg)
        .buffer(&x)
        .buffer(&y2)
        .scalar(&a)
        .scalar(&n);
    // SAFETY: refused before launch.
    let err = unsafe { read_only.run() }.unwrap_err().to_string();
    assert!(err.contains("argument 1: a read-only buffer"), "{err}");
    // Nothing ran: y is untouched.
    assert_eq!(gpu.download(&y).unwrap(), vec![1f32; 32]);
}

#[test]
#[ignore = "needs a GPU"]
fn launches_on_the_callers_own_context_and_stream_with_views() {
    // The caller's cudarc objects: a context and a stream of its own.
    keep_the_cuda_cache_in_temp();
    let ctx = cudarc::driver::CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let gpu = Gpu::from_stream(std::sync::Arc::clone(&stream)).unwrap();
    let kernel = gpu
        .load_kernel(
            &demo_cubin(Target::native(gpu.compute_capability())),
            demo::KERNEL,
            demo::SIGNATURE,
        )
        .unwrap();
    let len = 100_003usize;
    let seed = seed();
    let x = demo::random_floats(len, seed);
    let y = demo::random_floats(len, seed ^ 0xA5A5);
    let a = 0.75f32;
    // Only the middle part, through views: elements [1000, 1000 + n).
    let n = 50_000i32;
    let dx = stream.clone_htod(&x).unwrap();
    let mut dy = stream.clone_htod(&y).unwrap();
    let xv = dx.slice(1000..1000 + n as usize);
    let mut yv = dy.slice_mut(1000..1000 + n as usize);
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let launch = ltokit::launch::Launch::on(&stream, &kernel, cfg)
        .view(&xv)
        .view_mut(&mut yv)
        .scalar(&a)
        .scalar(&n);
    // SAFETY: ltk_demo touches elements [0, n) of both views, which hold n each.
    unsafe { launch.run() }.unwrap();
    let got = stream.clone_dtoh(&dy).unwrap();
    let mid = demo::reference(&x[1000..1000 + n as usize], &y[1000..1000 + n as usize], a);
    let mut mismatches = 0;
    for (i, g) in got.iter().enumerate() {
        let want = if (1000..1000 + n as usize).contains(&i) {
            mid[i - 1000]
        } else {
            y[i] // outside the views: untouched
        };
        if (g - want).abs() > 1e-5 * want.abs().max(1.0) {
            mismatches += 1;
        }
    }
    println!("own stream, views of {n} of {len}: {mismatches} mismatches (seed {seed})");
    assert_eq!(mismatches, 0);
}

#[test]
#[ignore = "needs a GPU"]
fn cubin_for_another_architecture_is_refused_by_the_driver() {
    let gpu = gpu();
    let err = gpu
        .load_kernel(
            &demo_cubin("sm_80".parse().unwrap()),
            demo::KERNEL,
            demo::SIGNATURE,
        )
        .err()
        .expect("sm_80 code must not load on this GPU");
    assert!(err.to_string().contains("architecture"), "{err}");
}

/// Bytes from a 64-bit xorshift of `seed`.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
#[ignore = "needs a GPU"]
fn pinned_staging_carries_uploads_and_downloads_of_every_size_intact() {
    use ltokit::pinned::PinnedStaging;
    let gpu = gpu();
    let mut up = PinnedStaging::<u8>::for_uploads();
    let mut down_u8 = PinnedStaging::<u8>::for_downloads();
    let mut down_i64 = PinnedStaging::<i64>::for_downloads();
    // One chunk and less, a chunk ± 1, the threaded copy (2 MiB on), then smaller again
    // into the grown buffer; each checked through ordinary (pageable) copies.
    for len in [
        1usize,
        1000,
        (1 << 20) - 1,
        (1 << 20) + 1,
        (5 << 20) + 3,
        77_777,
    ] {
        let seed = seed();
        let host = random_bytes(len, seed);
        let mut device = gpu.zeros::<u8>(len + 16).unwrap();
        up.upload(&gpu, &host, &mut device.slice_mut(0..len))
            .unwrap();
        let back = gpu.download(&device).unwrap();
        assert_eq!(
            &back[..len],
            &host[..],
            "upload of {len} bytes, seed {seed}"
        );
        assert!(
            back[len..].iter().all(|&b| b == 0),
            "upload of {len} bytes wrote past its end"
        );

        // Two downloads in flight at once, then their waits.
        let ids: Vec<i64> = host.iter().map(|&b| b as i64 * 1_000_003 - 7).collect();
        let ids_device = gpu.upload(&ids).unwrap();
        down_u8.start_download(&gpu, &device.slice(0..len)).unwrap();
        down_i64
            .start_download(&gpu, &ids_device.slice(0..len))
            .unwrap();
        assert_eq!(
            down_u8.finish_download().unwrap(),
            host,
            "download of {len} bytes"
        );
        assert_eq!(
            down_i64.finish_download().unwrap(),
            ids,
            "download of {len} i64"
        );
    }
    println!("pinned staging: 6 sizes from 1 byte to 5 MiB up and down intact");
    let device = gpu.zeros::<u8>(4).unwrap();
    assert!(matches!(
        up.start_download(&gpu, &device.slice(0..4)),
        Err(Error::InvalidArgument(_))
    ));
}
