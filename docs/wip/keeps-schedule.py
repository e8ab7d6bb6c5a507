"""Rows kept a query by the list-major scan with the grid's schedule modelled (session 39).

Tiles of a batch's pairs run in grid order on SLOTS concurrent blocks (default 396: 132
SMs × 3), each lasting its list's steps plus one. A pair's bound at each step is the smaller
of its query's seed (the k-th of its first probe's first 128 rows, nearest-first layout)
and the k-th of every pair of that query whose tile ended before that step. Within its
list the pair's threshold is its running k-th after each step (keeps-windows.py's step
model). Tile durations do not depend on the rows kept.

Variants (VARIANTS, default "main rb rbs rbs1") order each list's pairs and cut its tiles:
  main    first probes at the front, the rest in any order; the grid runs every list's
          first tile, then the rest;
  rb      first, near (ranks 1 .. n_probes / 2), far, tiled as main (rank-buckets.patch);
  rbsN    first and near (ranks 1 .. N; rbs: n_probes / 2) in the first run, far in the
          second, no tile holding both (rank-split.patch; rbs1 = rank-near1.patch).
It prints the rows kept a query, the tiles and tile-steps, and a rough count of the scan's
warp instructions. That count uses session 32's profile of lowdim-i8 × 10 (133 M): a
tile-step 8 warps of about 60 fixed instructions and 110 × its products' share (ts: 16,
32 or 64 slots), and a kept row about 120 (its keep path and its offer).

usage: PYTHONPATH=<numpy> [VARIANTS=...] python3 docs/wip/keeps-schedule.py DATA_DIR/SET
         N_LISTS N_PROBES QUERIES    e.g. DATA/lowdim-i8 1024 10 10000 (about 30 s a variant)
"""
import heapq
import importlib.util
import os
import sys

import numpy as np

# keeps-sim.py's k-means, distances and lists (its name has a dash: loaded by path).
_spec = importlib.util.spec_from_file_location("ks", os.path.join(os.path.dirname(os.path.abspath(__file__)), "keeps-sim.py"))
ks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ks)
K, STEP, QT, SLOTS, SEED = 10, 64, 64, int(os.environ.get("SLOTS", "396")), 128

data, n_lists, n_probes, nq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(1)
_s = ks.Setup(data, n_lists, n_probes, nq)
x, xn, q, qn, probes, nf = _s.x, _s.xn, _s.q, _s.qn, _s.probes, _s.nf
# SEED_FORM=sub:M:N (sub-cluster seed): each list's rows k-means'd into M sub-clusters
# (ROUNDS rounds, default 2) and stored grouped by them; a query's seed scores the rows of
# the N sub-clusters of its first probe nearest it; the scan reads the grouped order.
# SEED_FORM=sub:kd:N: the sub-clusters are compact 32-row groups (Setup.split_groups).
# SEED_FORM=none / none:kd: no seed, nearest-first lists / compact groups.
# HEAD=64 (with kd): each list's 64 rows nearest its centre first, compact groups after.
# SPREAD=1 (with kd): the groups (after the head) in bit-reversed leaf order.
SEED_FORM = os.environ.get("SEED_FORM", "")
SPREAD = os.environ.get("SPREAD", "") == "1"
HEAD = int(os.environ.get("HEAD", "0"))
if SEED_FORM.startswith("sub:"):
    _, m, n_sub = SEED_FORM.split(":")
    subs = _s.split_groups(HEAD, SPREAD) if m == "kd" else _s.subclusters(int(m), int(os.environ.get("ROUNDS", "2")))
    nf = [order for order, _, _ in subs]
    seed_of = _s.sub_seeded(subs, int(n_sub))
    seed = np.array([seed_of(i) for i in range(nq)])
    print(f"seed {SEED_FORM}: {np.mean(seed_of.rows):.0f} rows read a query", flush=True)
elif SEED_FORM.startswith("none"):
    # SEED_FORM=none (unseeded, nearest-first lists) or none:kd (unseeded, compact groups):
    # what the list order alone does to a batch that does not seed (f32, images × 2).
    if SEED_FORM == "none:kd":
        nf = [order for order, _, _ in _s.split_groups(HEAD, SPREAD)]
    seed = np.full(nq, np.inf)
else:
    seed = np.array([_s.seeded(nf, SEED)(i) for i in range(nq)])
# pairs of each list: (query, rank)
by_list = [[] for _ in range(n_lists)]
for i in range(nq):
    for r in range(n_probes):
        by_list[probes[i, r]].append((i, r))
steps = np.array([(len(nf[l]) + STEP - 1) // STEP for l in range(n_lists)])
order = np.argsort(-steps, kind="stable")   # lists longest first (list_order)
# distances of every pair, its list's k-th
D = {}
kth = {}
for l in range(n_lists):
    if not by_list[l]: continue
    qi = np.array([p[0] for p in by_list[l]])
    rows = nf[l]
    d = qn[qi][:, None] - 2 * q[qi] @ x[rows].T + xn[rows][None]
    D[l] = d
    kk = np.sort(d, 1)[:, min(K, d.shape[1]) - 1] if d.shape[1] >= K else np.full(len(qi), np.inf)
    for j, p in enumerate(by_list[l]): kth[p] = kk[j]

def tiles_for(variant):
    """(list, [pair indices into by_list[l]], run) in grid order."""
    run_a, run_b = [], []
    for l in order:
        pairs = by_list[l]
        if not pairs: continue
        idx = np.arange(len(pairs))
        ranks = np.array([p[1] for p in pairs])
        near = n_probes // 2 if variant in ("rb", "rbs") else int(variant[3:] or 1) if variant.startswith("rbs") else 1
        if variant == "main":
            first = idx[ranks == 0]; rest = rng.permutation(idx[ranks != 0])
            seq = np.concatenate([first, rest]); cut = None
        else:
            b0, b1, b2 = idx[ranks == 0], idx[(ranks >= 1) & (ranks <= near)], idx[ranks > near]
            seq = np.concatenate([b0, rng.permutation(b1), rng.permutation(b2)])
            cut = len(b0) + len(b1) if variant.startswith("rbs") else None
        if cut is None:
            ts = [seq[s:s + QT] for s in range(0, len(seq), QT)]
            run_a.append((l, ts[0])); run_b += [(l, t) for t in ts[1:]]
        else:
            early, late = seq[:cut], seq[cut:]
            run_a += [(l, early[s:s + QT]) for s in range(0, len(early), QT)]
            run_b += [(l, late[s:s + QT]) for s in range(0, len(late), QT)]
    return run_a + run_b

def simulate(variant):
    tl = tiles_for(variant)
    free = [0.0] * SLOTS; heapq.heapify(free)
    start = []
    for l, t in tl:
        t0 = heapq.heappop(free)
        dur = steps[l] + 1.0
        start.append(t0); heapq.heappush(free, t0 + dur)
    # finish time and k-th of every pair, by query
    fin = {}
    for (l, t), t0 in zip(tl, start):
        for j in t: fin[by_list[l][j]] = t0 + steps[l] + 1.0
    events = [[] for _ in range(nq)]
    for (i, r), f in fin.items(): events[i].append((f, kth[(i, r)]))
    for e in events: e.sort()
    ev_t = [np.array([a for a, _ in e]) for e in events]
    ev_k = [np.minimum.accumulate(np.array([b for _, b in e])) for e in events]
    total = 0
    for (l, t), t0 in zip(tl, start):
        d = D[l][t]                      # (pairs, rows)
        qi = np.array([by_list[l][j][0] for j in t])
        top = np.full((len(t), K), np.inf)
        for s in range(steps[l]):
            now = t0 + 1.0 + s
            b = seed[qi].copy()
            for a, i in enumerate(qi):
                n = np.searchsorted(ev_t[i], now, side="right")
                if n: b[a] = min(b[a], ev_k[i][n - 1])
            thr = np.minimum(b, top[:, K - 1])
            blk = d[:, s * STEP:(s + 1) * STEP]
            kept = blk < thr[:, None]
            total += kept.sum()
            cand = np.where(kept, blk, np.inf)
            top = np.partition(np.concatenate([top, cand], 1), K - 1, axis=1)[:, :K]
            top.sort(1)
    # tile-steps, and tile-steps weighted by the products' share (ts: 16 / 32 / 64 slots)
    ts_steps = sum(steps[l] for l, t in tl)
    prod = sum(steps[l] * (1 if len(t) > 32 else 0.5 if len(t) > 16 else 0.25) for l, t in tl)
    return total / nq, len(tl), max(start), ts_steps, prod

for v in os.environ.get("VARIANTS", "main rb rbs rbs1").split():
    keeps, n_tiles, span, ts_steps, prod = simulate(v)
    # warp instructions (session 32's calibration, see docs/wip): a tile-step 8 warps of
    # about 60 fixed and 110 × the products' share; a kept row about 120 (keep path, offer)
    instr = ts_steps * 8 * 60 + prod * 8 * 110 + keeps * nq * 120
    print(f"{v}: {keeps:.1f} rows kept a query, {n_tiles} tiles, {ts_steps} tile-steps, "
          f"products {prod:.0f}, last start {span:.0f} steps, ~{instr / 1e6:.0f} M warp instructions", flush=True)
