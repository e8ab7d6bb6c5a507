"""Rows kept a query under the list-major scan's threshold rules, simulated on the CPU with
keeps-sim.py's lists and distances (session 39): nearest-first layout, a seed from the first
probe's first SEED rows (default 128).

Modes (MODES, default all four):
  step    the pair's threshold is its k-th so far after every step (keeps-sim.py's model);
  window  as the scan does it: the threshold tightens only at an offer, which comes when the
          pair has kept more than 16 since the last (the room's flush) or at the list's end;
          an upper bound on what the scan keeps, whose offers are block-wide (any slot's
          flush offers every busy slot's rows) and come sooner;
  firstk  window, and a pair that kept k since its last offer takes the largest of those k;
  kth     window, and the k-th of the pair's list and its kept rows after every step.
PARALLEL=1: every probe of a query starts from the seed's bound alone (as if all its lists
ran at once); otherwise a query's probes run one after another, each starting from the
k-th of those before (keeps-sim.py's order). The GPU runs between the two.
NEAR=N (with PARALLEL=1): ranks 1..N start from the seed's bound alone, the later ranks from
the exact k-th of the first N + 1 lists (rank-buckets.patch at its ideal, N = n_probes / 2).

usage: PYTHONPATH=<numpy> [PARALLEL=1] [NEAR=N] [SEED=N] [MODES=...] python3 docs/wip/keeps-windows.py
         DATA_DIR/SET N_LISTS N_PROBES QUERIES    e.g. DATA/lowdim-i8 1024 10 300
"""
import importlib.util
import os
import sys

import numpy as np

# keeps-sim.py's k-means, distances and lists (its name has a dash: loaded by path).
_spec = importlib.util.spec_from_file_location("ks", os.path.join(os.path.dirname(os.path.abspath(__file__)), "keeps-sim.py"))
ks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ks)
K, STEP, FLUSH = 10, 64, 16
PARALLEL = os.environ.get("PARALLEL") == "1"
NEAR = int(os.environ.get("NEAR", "0"))

def keeps(x, xn, q, qn, probes, order, first_bound, mode):
    total = 0
    for i in range(len(q)):
        bound = first_bound(i)
        seed, near_kth = bound, np.inf
        for r, lst in enumerate(probes[i]):
            if NEAR:
                # The near probes from the seed's bound alone, the far ones from the exact
                # k-th of the first and near lists (as if they ran after them).
                bound = seed if r <= NEAR else min(seed, near_kth)
            rows = order[lst]
            dist = ks.distances(x, xn, q, qn, i, rows)
            top = np.array([])          # the pair's list after the last offer
            window = []                 # kept since the last offer
            thr = bound
            for s in range(0, len(rows), STEP):
                step = dist[s:s + STEP]
                kept = step[step < thr]
                total += len(kept)
                if mode == "step":
                    top = np.sort(np.concatenate([top, kept]))[:K]
                    if len(top) == K: thr = min(bound, top[-1])
                    continue
                window.extend(kept.tolist())
                if len(window) > FLUSH:   # offer
                    top = np.sort(np.concatenate([top, window]))[:K]; window = []
                    thr = min(bound, top[-1]) if len(top) == K else bound
                elif mode == "firstk" and len(window) >= K:
                    thr = min(thr, max(window[:K]))
                elif mode == "kth" and len(window) + len(top) >= K:
                    thr = min(thr, np.sort(np.concatenate([top, window]))[K - 1])
            top = np.sort(np.concatenate([top, window]))[:K]
            if len(top) == K and not PARALLEL: bound = min(bound, top[-1])
            if NEAR and r <= NEAR:
                scanned = np.concatenate([ks.distances(x, xn, q, qn, i, order[l]) for l in probes[i][:r + 1]])
                near_kth = np.sort(scanned)[K - 1]
    return total / len(q)

s = ks.Setup(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
b = s.seeded(s.nf, int(os.environ.get("SEED", "128")))
for mode in os.environ.get("MODES", "step window firstk kth").split():
    print(mode, f"{keeps(s.x, s.xn, s.q, s.qn, s.probes, s.nf, b, mode):.1f}", flush=True)
