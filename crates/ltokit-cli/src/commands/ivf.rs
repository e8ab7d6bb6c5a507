//! `ltokit ivf build|search|bench`: IVF-Flat on the GPU.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use ltokit::cache::CacheConfig;
use ltokit::launch::Gpu;
use ltokit_ivf::data::{parse_synthetic, read_vectors, synthetic_pair};
use ltokit_ivf::gpu::{
    DeviceLists, FirstSearch, GpuIndex, IndexShape, IvfGpu, LinkAhead, Neighbors, ProbePhases,
    ScanPath, TileArith, EXACT_CHUNK,
};
use ltokit_ivf::kmeans::KMeansParams;
use ltokit_ivf::{Filter, IvfIndex, Matrix, Metric};

use super::cache::CacheArgs;

/// `ltokit ivf` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum IvfCommand {
    /// Build an index on the GPU.
    Build {
        /// Base vectors: .npy, .fvecs, .bvecs, or `synthetic:ROWS:DIM[:DTYPE]`.
        #[arg(long)]
        base: String,
        /// Number of lists.
        #[arg(long, default_value_t = 1024)]
        lists: usize,
        /// Metric: l2 (squared), l2sqrt, ip, cosine.
        #[arg(long, default_value = "l2")]
        metric: String,
        /// K-means iterations.
        #[arg(long, default_value_t = 20)]
        iters: usize,
        /// Fraction of the base used to train k-means.
        #[arg(long, default_value_t = 0.5)]
        train_fraction: f64,
        /// Where to write the index.
        #[arg(short = 'o')]
        output: PathBuf,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Search an index.
    Search {
        /// The index file.
        #[arg(long)]
        index: PathBuf,
        /// Query vectors (.npy, .fvecs, .bvecs).
        #[arg(long)]
        queries: String,
        /// Neighbours per query.
        #[arg(long)]
        k: usize,
        /// Lists probed per query.
        #[arg(long)]
        probes: usize,
        /// Write "query rank id distance" lines here.
        #[arg(short = 'o')]
        output: Option<PathBuf>,
        /// The scan: per-query, list-major (each probed list read once per tile of the
        /// queries that probe it; fastest for large batches) or auto (chosen from the
        /// batch shape).
        #[arg(long, default_value = "auto")]
        scan: String,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Build, compute exact ground truth on the GPU, and time searches over n_probes.
    Bench {
        /// Base vectors: a file, or `synthetic:ROWS:DIM[:DTYPE]` (queries then come from the same clusters).
        #[arg(long)]
        base: String,
        /// Query vectors: a file, or synthetic:ROWS.
        #[arg(long)]
        queries: String,
        /// Number of lists.
        #[arg(long, default_value_t = 1024)]
        lists: usize,
        /// n_probes values to time, comma-separated.
        #[arg(long, default_value = "10,20,30,50,100", value_delimiter = ',')]
        probes: Vec<usize>,
        /// Neighbours per query.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Queries per search call, comma-separated (each is timed).
        #[arg(long, default_value = "10000", value_delimiter = ',')]
        batch: Vec<usize>,
        /// Scan paths to time, comma-separated: per-query, list-major, auto.
        #[arg(long, default_value = "auto", value_delimiter = ',')]
        scan: Vec<String>,
        /// Metric.
        #[arg(long, default_value = "l2")]
        metric: String,
        /// Timed repetitions per n_probes (after one warm-up).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// The tiles of list-major scans: mma (mma.sync on the tensor cores where the GPU
        /// has it, sm_80 on: 3xTF32 for f32, f16, exact 8-bit) or portable (FMA for f32,
        /// WMMA for f16 and 8-bit: what sm_75 runs).
        #[arg(long, default_value = "mma")]
        tile: String,
        /// Whether list-major batches scan each query's first probe alone first, then the
        /// rest from its bounds: auto (batches with 300 or more pairs a probed list),
        /// always or never.
        #[arg(long, default_value = "auto")]
        phases: String,
        /// Whether repeated device-resident searches replay a recording of their launches
        /// (a CUDA graph): on (the library's default) or off (every call launches its
        /// kernels one by one).
        #[arg(long, default_value = "on")]
        replay: String,
        /// Where the index is built: device (the base goes up once and the lists are laid
        /// out there; build_on_device_s in the JSON leaves out the upload, as cuVS's
        /// timing of a base already on the GPU does) or host (lists laid out on the host,
        /// then uploaded).
        #[arg(long, default_value = "device")]
        build: String,
        #[command(flatten)]
        cache: CacheArgs,
    },
}

fn engine(cache: &CacheArgs) -> anyhow::Result<IvfGpu> {
    open_engine(cache.config()?)
}

fn open_engine(config: CacheConfig) -> anyhow::Result<IvfGpu> {
    let gpu = Arc::new(Gpu::open(0).context("IVF-Flat runs on the GPU; none could be opened")?);
    Ok(IvfGpu::new(gpu, config)?)
}

/// [`engine`], with the kernels an index of `shape` needs first (its build on the device,
/// the search `first`) linking into the disk cache while the GPU's context is created
/// ([`LinkAhead`]; the links are waited for when the returned handle drops).
fn engine_linking_ahead(
    cache: &CacheArgs,
    shape: IndexShape,
    first: FirstSearch,
) -> anyhow::Result<(IvfGpu, LinkAhead)> {
    let config = cache.config()?;
    let ahead = LinkAhead::start(&config, 0, shape, Some(first));
    Ok((open_engine(config)?, ahead))
}

fn load(
    spec: &str,
    seed: u64,
    query_rows: Option<usize>,
) -> anyhow::Result<(Matrix, Option<Matrix>)> {
    if let Some((rows, dim, dtype)) = parse_synthetic(spec)? {
        let (b, q) = synthetic_pair(rows, query_rows.unwrap_or(0), dim, dtype, seed);
        return Ok((b, query_rows.map(|_| q)));
    }
    Ok((read_vectors(std::path::Path::new(spec))?, None))
}

/// Runs an ivf subcommand.
pub fn run(command: IvfCommand) -> anyhow::Result<ExitCode> {
    match command {
        IvfCommand::Build {
            base,
            lists,
            metric,
            iters,
            train_fraction,
            output,
            cache,
        } => {
            let metric: Metric = metric.parse()?;
            let (base, _) = load(&base, 42, None)?;
            let engine = engine(&cache)?;
            let started = Instant::now();
            let params = KMeansParams {
                n_lists: lists,
                iters,
                train_fraction,
                ..Default::default()
            };
            let index = ltokit_ivf::build::build(&engine, &base, metric, &params)?;
            let secs = started.elapsed().as_secs_f64();
            index.save(&output)?;
            let empty = index.list_size.iter().filter(|&&s| s == 0).count();
            outln!(
                "built {} lists over {} × {} {} vectors in {secs:.2} s ({empty} empty lists) → {}",
                lists,
                base.rows,
                base.dim,
                base.dtype.name(),
                output.display()
            );
        }
        IvfCommand::Search {
            index,
            queries,
            k,
            probes,
            output,
            scan,
            cache,
        } => {
            let scan = ScanPath::parse(&scan)?;
            let index = IvfIndex::load(&index)?;
            let (queries, _) = load(&queries, 43, None)?;
            let shape = IndexShape {
                dtype: index.dtype,
                dim: index.dim,
                metric: index.metric,
                n_lists: index.n_lists(),
            };
            let first = FirstSearch {
                k,
                n_probes: probes,
                batch: queries.rows,
            };
            let (engine, _links) = engine_linking_ahead(&cache, shape, first)?;
            let gindex = GpuIndex::upload(&engine, &index)?;
            gindex.set_scan_path(scan);
            let started = Instant::now();
            let found = gindex.search(&engine, &queries, k, probes, &Filter::None)?;
            let secs = started.elapsed().as_secs_f64();
            outln!(
                "searched {} queries (k = {k}, n_probes = {probes}) in {:.2} ms",
                queries.rows,
                secs * 1e3
            );
            if let Some(path) = output {
                let mut text = String::new();
                for q in 0..queries.rows {
                    for r in 0..k {
                        text.push_str(&format!(
                            "{q} {r} {} {}\n",
                            found.ids_of(q)[r],
                            found.distances_of(q)[r]
                        ));
                    }
                }
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
        IvfCommand::Bench {
            base,
            queries,
            lists,
            probes,
            k,
            batch,
            scan,
            metric,
            reps,
            json,
            tile,
            phases,
            replay,
            build,
            cache,
        } => {
            let replay = match replay.as_str() {
                "on" => true,
                "off" => false,
                other => anyhow::bail!("--replay {other:?}: expected on or off"),
            };
            let build_on_device = match build.as_str() {
                "device" => true,
                "host" => false,
                other => anyhow::bail!("--build {other:?}: expected device or host"),
            };
            let scans = scan
                .iter()
                .map(|s| ScanPath::parse(s))
                .collect::<Result<Vec<_>, _>>()?;
            return bench(
                &base,
                &queries,
                lists,
                &probes,
                k,
                &batch,
                &scans,
                metric.parse()?,
                reps,
                json,
                (
                    TileArith::parse(&tile)?,
                    ProbePhases::parse(&phases)?,
                    replay,
                ),
                build_on_device,
                &cache,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct ProbeRow {
    batch: usize,
    scan: &'static str,
    n_probes: usize,
    recall: f64,
    /// From the host: queries uploaded in their stored type, results downloaded.
    median_ms: f64,
    qps: f64,
    /// Device-resident: queries already on the GPU, results left there (stream synced).
    device_median_ms: f64,
    device_qps: f64,
    /// Bytes of the probed lists' rows over the device-resident time.
    scanned_gb_per_s: f64,
    /// Rows of the probed lists per query (the work the partition leaves per query).
    rows_per_query: f64,
    /// One call of `batch` queries, device-resident, waited for (median of 30): latency.
    device_call_ms: f64,
    /// The tile arithmetic a list-major scan of this batch shape uses (`f32tc`, `f16tc`,
    /// `i8tc`, `u8tc` for mma.sync; `f32`, `f16`, `i8`, `u8` for the portable tiles),
    /// whichever path ran; empty where none fits.
    list_major_tile: &'static str,
    /// Where one device-resident pass over all queries spends its time, stage by stage
    /// (each stage waited for: a little slower than an unprofiled pass).
    stages: ltokit_ivf::gpu::profile::StageTimes,
}

/// `queries` cut into host batches of `batch` rows (the last one shorter).
fn host_batches(queries: &Matrix, batch: usize) -> Vec<Matrix> {
    (0..queries.rows)
        .step_by(batch)
        .map(|start| {
            queries.select(&(start..(start + batch).min(queries.rows)).collect::<Vec<_>>())
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn bench(
    base_spec: &str,
    query_spec: &str,
    lists: usize,
    probe_list: &[usize],
    k: usize,
    batches: &[usize],
    scans: &[ScanPath],
    metric: Metric,
    reps: usize,
    json: bool,
    (tile_arith, phases, replay): (TileArith, ProbePhases, bool),
    build_on_device: bool,
    cache: &CacheArgs,
) -> anyhow::Result<ExitCode> {
    let query_rows = match query_spec.strip_prefix("synthetic:") {
        Some(rows) => Some(
            rows.parse::<usize>()
                .with_context(|| format!("--queries {query_spec:?}: expected synthetic:ROWS"))?,
        ),
        None => None,
    };
    anyhow::ensure!(
        query_rows.is_none() || base_spec.starts_with("synthetic:"),
        "synthetic queries need a synthetic base (they are drawn from its clusters)"
    );
    let (base, synthetic_queries) = load(
        base_spec,
        42,
        if base_spec.starts_with("synthetic:") {
            query_rows
        } else {
            None
        },
    )?;
    let queries = match synthetic_queries {
        Some(q) => q,
        None => load(query_spec, 43, None)?.0,
    };
    anyhow::ensure!(
        queries.dim == base.dim,
        "queries have {} dimensions, the base {}",
        queries.dim,
        base.dim
    );
    let started = Instant::now();
    let shape = IndexShape {
        dtype: base.dtype,
        dim: base.dim,
        metric,
        n_lists: lists,
    };
    let first = FirstSearch {
        k,
        n_probes: probe_list.first().copied().unwrap_or(1),
        batch: batches.first().copied().unwrap_or(1),
    };
    let (engine, links) = engine_linking_ahead(cache, shape, first)?;
    engine.set_tile_arith(tile_arith);
    engine.set_probe_phases(phases);
    engine.set_replay(replay);
    let context_s = started.elapsed().as_secs_f64();
    // The build, until the index is searchable on the GPU.
    let started = Instant::now();
    let params = KMeansParams {
        n_lists: lists,
        ..Default::default()
    };
    let (gindex, build_times) = if build_on_device {
        ltokit_ivf::build::build_on_gpu(&engine, &base, metric, &params)?
    } else {
        let (index, times) = ltokit_ivf::build::build_timed(&engine, &base, metric, &params)?;
        (GpuIndex::upload(&engine, &index)?, times)
    };
    let build_s = started.elapsed().as_secs_f64();
    // The first search of this process, before anything else links a search plan (the
    // exact search below shares the per-query scan's): the queries of the first batch
    // size from the host, every plan of the path linked or fetched from the caches.
    let first_search_ms = {
        let batch = batches.first().copied().unwrap_or(1).max(1);
        // Logged so that a slow first search can be set against the links' log lines.
        tracing::debug!(batch, n_probes = probe_list[0], "first search starts");
        let started = Instant::now();
        for sub in &host_batches(&queries, batch) {
            gindex.search(&engine, sub, k, probe_list[0], &Filter::None)?;
        }
        let ms = started.elapsed().as_secs_f64() * 1e3;
        tracing::debug!(ms, "first search done");
        ms
    };
    // Auto's first searches scan per-query while the list-major kernel loads in the
    // background; the timed runs below measure the path auto settles on.
    engine.wait_for_background_loads();
    let started = Instant::now();
    let flat = DeviceLists::chunked(&engine, &base, EXACT_CHUNK)?;
    let truth = engine.exact(&flat, metric, &Filter::None, &queries, k)?;
    let truth_s = started.elapsed().as_secs_f64();
    drop(flat);
    let gpu = engine.gpu();
    let q_dev = gpu.upload(&queries.bytes)?;
    let mut ids_dev = gpu.alloc::<i64>(queries.rows * k)?;
    let mut dist_dev = gpu.alloc::<f32>(queries.rows * k)?;
    let row_bytes = base.dim * base.dtype.size();
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let mut rows: Vec<ProbeRow> = Vec::new();
    for &batch in batches {
        let batch = batch.max(1);
        // The host batches, cut before timing.
        let host_batches = host_batches(&queries, batch);
        // What the host API returns, a `Neighbors` a batch; turning them into rows for the
        // recall is the bench's own work and stays out of the timing.
        let search_host = |n_probes: usize| -> anyhow::Result<Vec<Neighbors>> {
            host_batches
                .iter()
                .map(|sub| Ok(gindex.search(&engine, sub, k, n_probes, &Filter::None)?))
                .collect()
        };
        // The device-resident path: every query uploaded once, results left on the device.
        // The first `upto` queries, a batch at a time, waited for at the end.
        let mut search_device = |n_probes: usize, upto: usize| -> anyhow::Result<()> {
            for start in (0..upto).step_by(batch) {
                let end = (start + batch).min(upto);
                gindex.search_device_bytes(
                    &engine,
                    &q_dev.slice(start * row_bytes..end * row_bytes),
                    k,
                    n_probes,
                    &Filter::None,
                    &mut ids_dev.slice_mut(start * k..end * k),
                    &mut dist_dev.slice_mut(start * k..end * k),
                )?;
            }
            gpu.synchronize()?;
            Ok(())
        };
        let truth_rows = truth.rows();
        for &p in probe_list {
            // Bytes scanned: every probed list's rows for every query (the same for
            // every scan path).
            let probes = gindex.probes(&engine, &queries, p)?;
            let rows_scanned: u64 = probes
                .iter()
                .map(|&l| gindex.list_sizes()[l as usize] as u64)
                .sum();
            let bytes = rows_scanned * row_bytes as u64;
            for &path in scans {
                gindex.set_scan_path(path);
                // Auto may start loading the list-major kernel in the background at a
                // shape's first search; time the path it settles on.
                search_host(p)?;
                engine.wait_for_background_loads();
                let found: Vec<Vec<i64>> = search_host(p)? // warm-up (and the recall)
                    .iter()
                    .flat_map(Neighbors::rows)
                    .collect();
                search_device(p, queries.rows)?;
                let (mut host, mut device) = (Vec::new(), Vec::new());
                for _ in 0..reps.max(1) {
                    let t = Instant::now();
                    search_host(p)?;
                    host.push(t.elapsed().as_secs_f64());
                    let t = Instant::now();
                    search_device(p, queries.rows)?;
                    device.push(t.elapsed().as_secs_f64());
                }
                let (host, device) = (median(&mut host), median(&mut device));
                let recall = ltokit_ivf::reference::recall(&found, &truth_rows, k);
                // Latency: one batch at a time, each waited for (30 times; 3 for batches
                // of more than 10,000, whose call takes as long as the timed runs above).
                let first = batch.min(queries.rows);
                let latency_calls = if first > 10_000 { 3 } else { 30 };
                let mut calls = Vec::with_capacity(latency_calls);
                for _ in 0..latency_calls {
                    let t = Instant::now();
                    search_device(p, first)?;
                    calls.push(t.elapsed().as_secs_f64());
                }
                engine.set_profiling(true);
                search_device(p, queries.rows)?;
                let stages = engine.stage_times();
                engine.set_profiling(false);
                let list_major_tile = match engine.list_major_tile(
                    base.dtype,
                    base.dim,
                    k,
                    batch.min(queries.rows) * p,
                    lists,
                )? {
                    Ok(_) => engine.list_major_tile_arithmetic(base.dtype).name(),
                    Err(_) => "",
                };
                rows.push(ProbeRow {
                    batch,
                    scan: path.name(),
                    list_major_tile,
                    n_probes: p,
                    recall,
                    median_ms: host * 1e3,
                    qps: queries.rows as f64 / host,
                    device_median_ms: device * 1e3,
                    device_qps: queries.rows as f64 / device,
                    scanned_gb_per_s: bytes as f64 / device / 1e9,
                    rows_per_query: rows_scanned as f64 / queries.rows as f64,
                    device_call_ms: median(&mut calls) * 1e3,
                    stages,
                });
            }
        }
    }
    let stats = engine.cache().stats();
    let linked_ahead = links.wait();
    let batch = batches
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(",");
    if json {
        let v = serde_json::json!({
            "base": base_spec, "rows": base.rows, "dim": base.dim, "dtype": base.dtype.name(), "queries": queries.rows,
            "lists": lists, "k": k, "batch": batch, "metric": metric.name(), "gpu": engine.gpu().name(),
            "tile_arith": tile_arith.name(),
            "phases": phases.name(),
            "replay": replay, "replays": engine.replay_counts(),
            "context_s": context_s, "build_s": build_s, "build_on": if build_on_device { "device" } else { "host" },
            "build_on_device_s": build_times.on_device(), "build_breakdown_s": build_times, "ground_truth_s": truth_s, "first_search_ms": first_search_ms,
            "results": rows, "cache": stats, "linked_ahead": linked_ahead,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "{} × {} {} base, {} queries, {lists} lists, k = {k}, batch {batch}, metric {} on {}",
            base.rows,
            base.dim,
            base.dtype.name(),
            queries.rows,
            metric.name(),
            engine.gpu().name()
        );
        outln!("build {build_s:.2} s (upload {:.2}, training set {:.2}, k-means {:.2}, assignment {:.2}, layout {:.2}); exact ground truth {truth_s:.2} s; first search in this process {first_search_ms:.1} ms", build_times.upload, build_times.training_set, build_times.kmeans, build_times.assignment, build_times.layout);
        outln!(
            "{:>7} {:>10} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10} {:>9}   stages ms: coarse / group / scan / merge",
            "batch",
            "scan",
            "n_probes",
            "recall",
            "host ms",
            "host QPS",
            "device ms",
            "device QPS",
            "scanned GB/s",
            "rows/query",
            "call ms"
        );
        for r in &rows {
            outln!(
                "{:>7} {:>10} {:>8} {:>8.4} {:>10.2} {:>10.0} {:>10.2} {:>10.0} {:>12.0} {:>10.0} {:>9.3}   {:.2} / {:.2} / {:.2} / {:.2}",
                r.batch,
                r.scan,
                r.n_probes,
                r.recall,
                r.median_ms,
                r.qps,
                r.device_median_ms,
                r.device_qps,
                r.scanned_gb_per_s,
                r.rows_per_query,
                r.device_call_ms,
                r.stages.coarse_s * 1e3,
                r.stages.group_s * 1e3,
                r.stages.scan_s * 1e3,
                r.stages.merge_s * 1e3
            );
        }
        outln!(
            "kernel cache: {} links, {} L2 hits, {} L1 hits",
            stats.links,
            stats.l2_hits,
            stats.l1_hits
        );
    }
    Ok(ExitCode::SUCCESS)
}
