"""How many rows the list-major scan keeps (offers to a query's top k) per query, simulated on
the CPU for a bench set (scripts/make-bench-data.py), under different first bounds (session 36).

The scan model: a query's probes in order, each list's rows in steps of 64; a row is kept
where its distance is under the threshold, the smaller of the query's bound (the k-th of its
finished probes, or a seed's) and the pair's own k-th so far, taken after each step. The
lists come from 12 rounds of k-means (numpy, trained on at most 200,000 rows), close to but
not the GPU build's. A query's probes are scanned one after another, where the GPU runs
them side by side: the model undercounts what the later probes keep.

usage: PYTHONPATH=<numpy> python3 docs/wip/keeps-sim.py DATA_DIR/SET N_LISTS [N_PROBES] [QUERIES]
  e.g. DATA_DIR/images 256 2 2000, DATA_DIR/lowdim-i8 1024 10 1000
"""
import os
import sys

import numpy as np

K, STEP = 10, 64


def nearest(x, centres):
    """Each row's nearest centre and its squared distance, 100,000 rows at a time."""
    cn = (centres * centres).sum(1)
    assign, dist = np.empty(len(x), np.int64), np.empty(len(x), np.float32)
    for s in range(0, len(x), 100_000):
        part = x[s:s + 100_000]
        d = (part * part).sum(1)[:, None] - 2 * part @ centres.T + cn[None]
        assign[s:s + len(part)] = d.argmin(1)
        dist[s:s + len(part)] = d[np.arange(len(part)), assign[s:s + len(part)]]
    return assign, dist


def kmeans(x, n_lists, rounds, rng):
    train = x[rng.choice(len(x), min(len(x), 200_000), replace=False)]
    centres = train[rng.choice(len(train), n_lists, replace=False)].copy()
    for _ in range(rounds):
        assign, _ = nearest(train, centres)
        for j in range(n_lists):
            members = assign == j
            if members.any():
                centres[j] = train[members].mean(0)
    assign, dist = nearest(x, centres)
    return centres, assign, dist


def distances(x, xn, q, qn, i, rows):
    """Squared L2 distances of query i to `rows`, as the scan forms them from the norms."""
    return qn[i] - 2 * x[rows] @ q[i] + xn[rows]


class Setup:
    """A bench set's rows and queries (float32, with their squared norms), each query's
    `n_probes` nearest centres of a k-means (`probes`), and each list's rows in three
    orders: as stored (`stored`), nearest its centre first (`central`), and
    nearest-first.patch's layout, its 64 nearest first and the rest as stored (`nf`)."""

    def __init__(self, data, n_lists, n_probes, n_queries):
        self.x = np.load(os.path.join(data, "base.npy")).astype(np.float32)
        self.q = np.load(os.path.join(data, "queries.npy")).astype(np.float32)[:n_queries]
        x, q = self.x, self.q
        centres, assign, to_centre = kmeans(x, n_lists, 12, np.random.default_rng(0))
        self.xn, self.qn = (x * x).sum(1), (q * q).sum(1)
        self.probes = np.argsort(
            self.qn[:, None] - 2 * q @ centres.T + (centres * centres).sum(1)[None], 1)[:, :n_probes]
        self.stored = [np.where(assign == j)[0] for j in range(n_lists)]
        self.central = [rows[np.argsort(to_centre[rows])] for rows in self.stored]
        self.nf = [np.concatenate([c[:64], np.setdiff1d(s, c[:64], assume_unique=True)])
                   for s, c in zip(self.stored, self.central)]

    def distances(self, i, rows):
        """Query i's distances to `rows` (`distances`)."""
        return distances(self.x, self.xn, self.q, self.qn, i, rows)

    def subclusters(self, m, rounds, seed=2):
        """Each list's rows k-means'd into about m sub-clusters (at least 32 rows each on
        average; `rounds` rounds from m random rows) and stored grouped by sub-cluster, the
        sub-clusters nearest the list's centre first: (order, sub-centres, starts) by list,
        starts[j] the first position of sub-cluster j in order (and the end last)."""
        rng = np.random.default_rng(seed)
        out = []
        for rows in self.stored:
            x = self.x[rows]
            mm = max(1, min(m, len(rows) // 32))
            c = x[rng.choice(len(x), mm, replace=False)].copy() if len(rows) else x[:0]
            xn = (x * x).sum(1)
            for r in range(rounds + 1):
                a = (xn[:, None] - 2 * x @ c.T + (c * c).sum(1)[None]).argmin(1) if len(rows) else np.zeros(0, int)
                if r == rounds:
                    break
                for j in range(mm):
                    if (a == j).any():
                        c[j] = x[a == j].mean(0)
            centre = x.mean(0) if len(rows) else None
            rank = np.argsort(((c - centre) ** 2).sum(1)) if len(rows) else np.arange(mm)
            where = np.empty(mm, int)
            where[rank] = np.arange(mm)
            order = np.argsort(where[a], kind="stable")
            counts = np.bincount(where[a], minlength=mm)
            out.append((rows[order], c[rank], np.concatenate([[0], np.cumsum(counts)])))
        return out

    def split_groups(self, head=0, spread=False):
        """Each list's rows cut into compact 32-row groups by recursive halving along the
        principal direction (a k-d tree of 32-row leaves; every leaf but the last full),
        the groups ordered as the tree's leaves: (order, group means, starts) by list, as
        `subclusters` gives them. head > 0 (a multiple of 32): the list's `head` rows
        nearest its centre first, in groups of 32, and only the rest cut so. spread: the
        groups after the head in bit-reversed leaf order."""
        rng = np.random.default_rng(3)

        def cut(x, idx):
            if len(idx) <= 32:
                return [idx]
            part = x[idx] - x[idx].mean(0)
            v = rng.standard_normal(x.shape[1]).astype(np.float32)
            for _ in range(6):
                v = part.T @ (part @ v)
                v /= np.linalg.norm(v) + 1e-30
            left = (len(idx) + 63) // 64 * 32   # a whole number of groups on the left
            by = idx[np.argsort(part @ v, kind="stable")]
            return cut(x, by[:left]) + cut(x, by[left:])

        out = []
        for li, rows in enumerate(self.stored):
            x = self.x[rows]
            if head and len(rows) > head:
                first = np.searchsorted(rows, self.central[li][:head])  # rows: ascending
                rest = np.setdiff1d(np.arange(len(rows)), first)
                leaves = [first[j:j + 32] for j in range(0, head, 32)] + cut(x, rest)
            else:
                leaves = cut(x, np.arange(len(rows))) if len(rows) else []
            if spread:
                # The tree's leaves (after the head's) in bit-reversed order: consecutive
                # groups from far parts of the list, as a running bound wants them.
                h = head // 32 if head and len(rows) > head else 0
                tail = leaves[h:]
                bits = max(1, (len(tail) - 1).bit_length())
                key = [int(format(j, f"0{bits}b")[::-1], 2) for j in range(len(tail))]
                leaves = leaves[:h] + [tail[j] for j in np.argsort(key, kind="stable")]
            order = np.concatenate(leaves) if leaves else np.zeros(0, int)
            c = np.stack([x[l].mean(0) for l in leaves]) if leaves else np.zeros((0, x.shape[1]), np.float32)
            starts = np.concatenate([[0], np.cumsum([len(l) for l in leaves])]).astype(int)
            out.append((rows[order], c, starts))
        return out

    def sub_seeded(self, subs, n_sub):
        """The bound a sub-cluster seed gives query i: the k-th of the rows of the n_sub
        sub-clusters of its first probe nearest the query, read in whole 32-row groups of
        the grouped order; also the rows it reads (`bound.rows`, a list)."""
        read = []

        def bound(i):
            order, c, starts = subs[self.probes[i, 0]]
            pick = np.argsort(((c - self.q[i]) ** 2).sum(1))[:n_sub]
            take = np.zeros(len(order), bool)
            for j in pick:
                take[starts[j] // 32 * 32:(starts[j + 1] + 31) // 32 * 32] = True
            read.append(int(take.sum()))
            d = np.sort(self.distances(i, order[take]))
            return d[K - 1] if len(d) >= K else np.inf
        bound.rows = read
        return bound

    def seeded(self, order, n_rows):
        """The bound a seed gives query i: the k-th of its first probe's first `n_rows` rows
        in `order`."""
        def bound(i):
            return np.sort(self.distances(i, order[self.probes[i, 0]][:n_rows]))[K - 1]
        return bound


def keeps(x, xn, q, qn, probes, order, first_bound):
    """Rows kept a query: `order[list]` the list's rows in scan order, `first_bound(i)` the
    bound query i starts with."""
    total = 0
    for i in range(len(q)):
        bound = first_bound(i)
        for lst in probes[i]:
            rows = order[lst]
            dist = distances(x, xn, q, qn, i, rows)
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
    data, n_lists = sys.argv[1], int(sys.argv[2])
    n_probes = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    n_queries = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    s = Setup(data, n_lists, n_probes, n_queries)
    x, q, xn, qn, probes = s.x, s.q, s.xn, s.qn, s.probes
    stored, central, nf, seeded = s.stored, s.central, s.nf, s.seeded

    none = lambda i: np.inf
    name = os.path.basename(data.rstrip("/"))
    print(f"{name}, {n_lists} lists, {n_probes} probes, {n_queries} queries, k {K}: rows kept a query")
    print(f"  no seed, rows as stored:            {keeps(x, xn, q, qn, probes, stored, none):.1f}")
    print(f"  no seed, rows nearest centre first: {keeps(x, xn, q, qn, probes, central, none):.1f}")
    for n in (16, 32, 64, 128, 256):
        print(f"  seed: first probe's first {n} rows:   {keeps(x, xn, q, qn, probes, stored, seeded(stored, n)):.1f}")
    for n in (10, 16, 32, 64):
        print(f"  seed: its {n} rows nearest its centre: {keeps(x, xn, q, qn, probes, stored, seeded(central, n)):.1f}")
    print(f"  seed and scan, rows nearest centre first, 64: "
          f"{keeps(x, xn, q, qn, probes, central, seeded(central, 64)):.1f}")
    # nearest-first.patch's layout: each list's 64 rows nearest its centre first (nearest
    # first), the rest as stored; the seed reads the list's first n rows.
    for n in (16, 32, 64, 128, 256):
        print(f"  nearest-first layout, seed from its first {n} rows: "
              f"{keeps(x, xn, q, qn, probes, nf, seeded(nf, n)):.1f}")
    ideal = 0
    for i in range(len(q)):
        rows = np.concatenate([stored[lst] for lst in probes[i]])
        dist = distances(x, xn, q, qn, i, rows)
        ideal += (dist <= np.sort(dist)[K - 1]).sum()
    print(f"  the final k-th as the bound:        {ideal / len(q):.1f}")


if __name__ == "__main__":
    main()
