//! `ltokit`: the command-line face of the ltokit library.
//!
//! Each subcommand lives in its own module under `commands/`; this file only parses the
//! command line, sets up logging (`LTOKIT_LOG`), and turns errors into exit status 1
//! with the error's own advice.

#![forbid(unsafe_code)]

/// `println!` that returns a failed write as an error instead of panicking, so that a
/// closed pipe (`ltokit … | head`) ends the command quietly (see [`main`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// GPU kernels as LTO-IR fragments, linked for the exact GPU present, cached, and shipped
/// as prebuilt per-architecture providers.
#[derive(Parser)]
#[command(name = "ltokit", version, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show which CUDA libraries were found (path, version) and which GPUs are present.
    Doctor {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compile CUDA C++ to LTO-IR with NVRTC.
    Compile {
        /// Architecture the IR is for: sm_XY[a|f] or compute_XY[a|f].
        #[arg(long)]
        arch: String,
        /// Include directory (repeatable).
        #[arg(short = 'I', value_name = "DIR")]
        include: Vec<PathBuf>,
        /// Preprocessor define NAME or NAME=VALUE (repeatable).
        #[arg(short = 'D', value_name = "NAME[=VALUE]")]
        define: Vec<String>,
        /// Template instantiation to force and report, e.g. "scan<float, 4>" (repeatable).
        #[arg(long = "name-expression", value_name = "EXPR")]
        name_expressions: Vec<String>,
        /// Extra NVRTC option, passed as given (repeatable).
        #[arg(long = "opt", value_name = "ARG", allow_hyphen_values = true)]
        options: Vec<String>,
        /// The CUDA C++ source.
        source: PathBuf,
        /// Where to write the LTO-IR.
        #[arg(short = 'o', value_name = "OUT")]
        output: PathBuf,
    },
    /// Link LTO-IR, fatbins, cubins, PTX or host objects into a cubin with nvJitLink,
    /// through the kernel cache.
    Link {
        /// Target: sm_XY[a|f], or "native" for the local GPU (an error without one).
        #[arg(long)]
        arch: String,
        /// Extra nvJitLink option such as -O3 or -split-compile=0 (repeatable).
        #[arg(long = "opt", value_name = "ARG", allow_hyphen_values = true)]
        options: Vec<String>,
        /// Inputs; their kind is recognised from their content.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Where to write the cubin.
        #[arg(short = 'o', value_name = "OUT")]
        output: PathBuf,
        #[command(flatten)]
        cache: commands::cache::CacheArgs,
    },
    /// Inspect and maintain the disk cache.
    Cache {
        /// Cache directory (default: LTOKIT_CACHE_DIR, else ~/.cache/ltokit).
        #[arg(long, value_name = "DIR", global = true)]
        cache_dir: Option<PathBuf>,
        #[command(subcommand)]
        command: commands::cache::CacheCommand,
    },
    /// Link every plan of a bundle for one target into the disk cache, in parallel.
    Warmup {
        /// The bundle.
        #[arg(long)]
        bundle: PathBuf,
        /// Target: sm_XY[a|f] or native.
        #[arg(long)]
        arch: String,
        /// Parallel links (0 = one per core).
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Only the plans named in this file (one per line) instead of all.
        #[arg(long, value_name = "FILE")]
        plans: Option<PathBuf>,
        /// Also publish every warmed plan to the fleet's remote cache (LTOKIT_REMOTE,
        /// read-write): a warm-up node fills the store the fleet reads.
        #[arg(long)]
        remote: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        cache: commands::cache::CacheArgs,
    },
    /// Build or inspect bundles of LTO-IR fragments.
    Bundle {
        #[command(subcommand)]
        command: BundleCommand,
    },
    /// Build, inspect, verify, install and list prebuilt per-architecture providers.
    Provider {
        #[command(subcommand)]
        command: commands::provider::ProviderCommand,
    },
    /// Audit CUDA binaries: only the allowed kinds and targets, within a size budget.
    Check {
        /// Allowed targets, comma-separated (sm_90,sm_90a).
        #[arg(long)]
        targets: String,
        /// Allowed kinds, comma-separated (cubin, ptx, ltoir).
        #[arg(long, default_value = "cubin")]
        kinds: String,
        /// Largest allowed file size (bytes or with K/M/G).
        #[arg(long)]
        max_bytes: Option<String>,
        /// Files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Sizes: the LTO-IR bundle vs the same plans ahead of time for many architectures.
    SizeReport {
        /// The bundle.
        #[arg(long)]
        bundle: PathBuf,
        /// Architectures (default: the list libcuvs 26.10 ships).
        #[arg(long, default_value = "sm_75,sm_80,sm_86,sm_90a,sm_100,sm_120,sm_120a")]
        archs: String,
        /// Parallel links (0 = one per core).
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// IVF-Flat vector search on the GPU.
    Ivf {
        #[command(subcommand)]
        command: commands::ivf::IvfCommand,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
    /// List every device-code entry of fatbins, cubins and ELF host binaries.
    Inventory {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Files to inventory.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// IVF-Flat search with kernels assembled from LTO-IR: with a GPU, build an index of
    /// synthetic vectors, search it and print recall and QPS; without one, link the
    /// search's kernels for sm_90 through the kernel cache and show what was made.
    Demo {
        /// Where to write the demo's outputs.
        #[arg(long, default_value = "target/ltokit-demo")]
        out_dir: PathBuf,
    },
}

#[derive(Subcommand)]
enum BundleCommand {
    /// Expand a spec's variant matrix and compile its fragments (unchanged ones are reused).
    Build {
        /// The bundle spec (JSON).
        spec: PathBuf,
        /// Where to write the bundle.
        #[arg(short = 'o', value_name = "OUT")]
        output: PathBuf,
        /// Parallel compilations (0 = one per core).
        #[arg(long, default_value_t = 0)]
        jobs: usize,
    },
    /// Print a bundle's fragments and plans.
    Inspect {
        /// The bundle.
        bundle: PathBuf,
        /// Print the manifest as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Time one request at whatever cache level serves it, then L1 hits.
    Cache(commands::bench::CacheBenchArgs),
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Doctor { json } => commands::doctor::run(json),
        Command::Compile {
            arch,
            include,
            define,
            name_expressions,
            options,
            source,
            output,
        } => commands::compile::run(
            &arch,
            include,
            define,
            name_expressions,
            options,
            &source,
            &output,
        ),
        Command::Link {
            arch,
            options,
            inputs,
            output,
            cache,
        } => commands::link::run(&arch, &options, &inputs, &output, &cache),
        Command::Cache { cache_dir, command } => commands::cache::run(cache_dir, command),
        Command::Warmup {
            bundle,
            arch,
            jobs,
            plans,
            remote,
            json,
            cache,
        } => commands::warmup::run(
            &bundle,
            &arch,
            commands::warmup::Options {
                jobs,
                plans,
                remote,
                json,
            },
            &cache,
        ),
        Command::Bundle {
            command: BundleCommand::Build { spec, output, jobs },
        } => commands::bundle::build(&spec, &output, jobs),
        Command::Bundle {
            command: BundleCommand::Inspect { bundle, json },
        } => commands::bundle::inspect(&bundle, json),
        Command::Bench {
            command: BenchCommand::Cache(args),
        } => commands::bench::run(&args),
        Command::Ivf { command } => commands::ivf::run(command),
        Command::Provider { command } => commands::provider::run(command),
        Command::Check {
            targets,
            kinds,
            max_bytes,
            files,
        } => commands::provider::check(&targets, &kinds, max_bytes, &files),
        Command::SizeReport {
            bundle,
            archs,
            jobs,
            json,
        } => commands::provider::size_report(&bundle, &archs, jobs, json),
        Command::Inventory { json, files } => commands::inventory::run(json, &files),
        Command::Demo { out_dir } => commands::demo::run(&out_dir),
    };
    match result {
        Ok(code) => code,
        // Like other Unix tools, end quietly when the reader of stdout went away
        // (`ltokit … | head`): status 141 = 128 + SIGPIPE.
        Err(e) if is_broken_pipe(&e) => ExitCode::from(141),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether `e` is a write to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Logs go to stderr, filtered by `LTOKIT_LOG` (e.g. `LTOKIT_LOG=ltokit=debug`).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("LTOKIT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
