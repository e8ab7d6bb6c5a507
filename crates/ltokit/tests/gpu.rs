//! GPU tests: run only on a machine with an NVIDIA GPU, with `--ignored`
//! (scripts/gpu-run.sh does). Every result is compared with the CPU reference on fresh
//! random inputs; output buffers start poisoned.

use ltokit::formats::fatbin::{Codec, EntryKind, FatbinWriter};
use ltokit::launch::{Gpu, LaunchConfig, Param};
use ltokit::link::{self, LinkInput};
use ltokit::{Error, Target};
use ltokit_demo as demo;

fn gpu() -> Gpu {
    Gpu::open(0).expect("these tests need a GPU; run them on the GPU machine (scripts/gpu-run.sh)")
}

fn seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn demo_cubin(target: Target) -> Vec<u8> {
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
    // Nothing ran: y is untouched.
    assert_eq!(gpu.download(&y).unwrap(), vec![1f32; 32]);
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
