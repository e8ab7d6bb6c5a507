"""How many rows the list-major scan keeps (offers to a query's top k) per query, simulated on
the CPU for the images bench set, under different first bounds (session 36).

The scan model: a query's probes in order, each list's rows in steps of 64; a row is kept
where its distance is under the threshold, the smaller of the query's bound (the k-th of its
finished probes, or a seed's) and the pair's own k-th so far, taken after each step. The
lists come from 12 rounds of k-means (numpy, 256 lists), close to but not the GPU build's.

usage: PYTHONPATH=<numpy> python3 docs/wip/keeps-sim.py DATA_DIR/images [N_PROBES] [QUERIES]
(DATA_DIR from scripts/make-bench-data.py DATA_DIR images)
"""
import os
import sys

import numpy as np

K, STEP, N_LISTS = 10, 64, 256


def kmeans(x, n_lists, rounds, rng):
    centres = x[rng.choice(len(x), n_lists, replace=False)].copy()
    xn = (x * x).sum(1)
    for _ in range(rounds):
        assign = (xn[:, None] - 2 * x @ centres.T + (centres * centres).sum(1)[None]).argmin(1)
        for j in range(n_lists):
            members = assign == j
            if members.any():
                centres[j] = x[members].mean(0)
    d = xn[:, None] - 2 * x @ centres.T + (centres * centres).sum(1)[None]
    assign = d.argmin(1)
    return centres, assign, d[np.arange(len(x)), assign]


def keeps(x, xn, q, qn, probes, order, first_bound):
    """Rows kept a query: `order[list]` the list's rows in scan order, `first_bound(i)` the
    bound query i starts with."""
    total = 0
    for i in range(len(q)):
        bound = first_bound(i)
        for lst in probes[i]:
            rows = order[lst]
            dist = qn[i] - 2 * x[rows] @ q[i] + xn[rows]
            top, thr = np.array([]), bound
            for s in range(0, len(rows), STEP):
                step = dist[s:s + STEP]
                kept = step[step < thr]
                total += len(kept)
                top = np.sort(np.concatenate([top, kept]))[:K]
                if len(top) == K:
                    thr = min(bound, top[-1])
            if len(top) == K:
                bound = min(bound, top[-1])
    return total / len(q)


def main():
    data = sys.argv[1]
    n_probes = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    n_queries = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    x = np.load(os.path.join(data, "base.npy")).astype(np.float32)
    q = np.load(os.path.join(data, "queries.npy")).astype(np.float32)[:n_queries]
    centres, assign, to_centre = kmeans(x, N_LISTS, 12, np.random.default_rng(0))
    xn, qn = (x * x).sum(1), (q * q).sum(1)
    probes = np.argsort(qn[:, None] - 2 * q @ centres.T + (centres * centres).sum(1)[None], 1)[:, :n_probes]
    stored = [np.where(assign == j)[0] for j in range(N_LISTS)]
    central = [rows[np.argsort(to_centre[rows])] for rows in stored]

    def seeded(order, n_rows):
        def bound(i):
            rows = order[probes[i, 0]][:n_rows]
            return np.sort(qn[i] - 2 * x[rows] @ q[i] + xn[rows])[K - 1]
        return bound

    none = lambda i: np.inf
    print(f"images, {n_probes} probes, {n_queries} queries, k {K}: rows kept a query")
    print(f"  no seed, rows as stored:            {keeps(x, xn, q, qn, probes, stored, none):.1f}")
    print(f"  no seed, rows nearest centre first: {keeps(x, xn, q, qn, probes, central, none):.1f}")
    for n in (16, 32, 64):
        print(f"  seed: first probe's first {n} rows:   {keeps(x, xn, q, qn, probes, stored, seeded(stored, n)):.1f}")
    for n in (10, 16, 32):
        print(f"  seed: its {n} rows nearest its centre: {keeps(x, xn, q, qn, probes, stored, seeded(central, n)):.1f}")
    ideal = 0
    for i in range(len(q)):
        rows = np.concatenate([stored[lst] for lst in probes[i]])
        dist = qn[i] - 2 * x[rows] @ q[i] + xn[rows]
        ideal += (dist <= np.sort(dist)[K - 1]).sum()
    print(f"  the final k-th as the bound:        {ideal / len(q):.1f}")


if __name__ == "__main__":
    main()
