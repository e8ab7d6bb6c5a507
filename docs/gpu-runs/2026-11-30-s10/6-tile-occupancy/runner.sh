#!/usr/bin/env bash
# Session 10, call 6: queries per list-major tile against occupancy — the 784-wide u8
# images run one block of 64 queries an SM (130 KiB); 32 queries fit two. Forced tile
# sizes (LTOKIT_TEMP_QT, an experiment build) on images, i8 and f16, two rounds.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim-f16 lowdim-i8 images > $w/data.txt 2>&1
for round in 1 2; do
for qt in 64 32 16; do
  B="env LTOKIT_TEMP_QT=$qt gpu-run/bin/ltokit-qt ivf bench --k 10 --json --scan list-major --cache-dir /tmp/cb --reps 3"
  timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,5,10,20 --batch 10000 > $w/images-q$qt-$round.json 2> $w/images-q$qt-$round.err
  [ $qt = 16 ] && continue
  timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,50 --batch 10000 > $w/i8-q$qt-$round.json 2> $w/i8-q$qt-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim-f16/base.npy --queries $d/lowdim-f16/queries.npy --probes 10,50 --batch 10000 > $w/f16-q$qt-$round.json 2> $w/f16-q$qt-$round.err
  echo "bench q$qt $round at $SECONDS s" >> $w/times.txt
done; done
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
python3 - <<'PY'
import json, glob, collections
rows = collections.defaultdict(dict)
for f in sorted(glob.glob('/tmp/w/*-*-[12].json')):
    name = f.split('/')[-1][:-5]; s, b, r = name.rsplit('-', 2)
    try: j = json.load(open(f))
    except Exception as e: print(f, e); continue
    for x in j['results']:
        rows[(s, x['batch'], x['n_probes'])][(b, r)] = (int(x['device_qps']), round(x['recall'], 4))
for key, v in rows.items():
    print(key, '  '.join(f"{b}{r}:{val[0]/1e6:.2f}M" for (b, r), val in sorted(v.items())), ' recall', sorted(set(val[1] for val in v.values())))
PY
cat $w/times.txt
