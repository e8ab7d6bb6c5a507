#!/usr/bin/env bash
# Session 8, call 5: (1) list-major tiles skip the 8-query blocks of a tile past its pairs,
# the two warp halves taking alternate blocks (ltokit) vs not (ltokit-prev), same call;
# (2) first search from empty caches: one shared ordered background queue of 4 link
# threads (ltokit, ltokit-prev) vs 4 threads for each batch queued (ltokit-batchpar);
# (3) the list-major, split-list, device-resident and device-build GPU tests.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/w; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
source gpu-run/cold-cache.sh
for round in 1 2; do
  for set in images:256:10 lowdim:1024:10; do
    IFS=: read -r name lists probes <<< "$set"
    for bin in ltokit-batchpar ltokit; do
      c=/tmp/first-$name-$bin; cold_cache $c
      LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 1 --cache-dir $c --lists $lists \
        --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 --scan auto > $w/first-$name-$bin-$round.json 2> $w/first-$name-$bin-$round.err
      unset CUDA_CACHE_PATH
    done
  done
done
echo "first searches at $SECONDS s" >> $w/times.txt
export CUDA_CACHE_PATH=/tmp/nvc
for set in lowdim:1024:10,20,50 lowdim-i8:1024:10,20 lowdim-f16:1024:10,20 images:256:5,10; do
  IFS=: read -r name lists probes <<< "$set"
  for bin in ltokit-prev ltokit ltokit-prev ltokit; do
    timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 5 --cache-dir /tmp/c-$bin --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000,1000 --scan list-major > $w/lm-$name-$bin.json 2> $w/lm-$name-$bin.err
    cp $w/lm-$name-$bin.json $w/lm-$name-$bin-$SECONDS.json
  done
done
echo "A/B at $SECONDS s" >> $w/times.txt
( timeout $((560 - SECONDS)) gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles small_batches_cut device_resident an_index_built ) > $w/tests.txt 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
rm -f $w/lm-*-ltokit{,-prev}.json
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
for f in $w/first-*.json; do python3 -c "
import json
j=json.load(open('$f'))
print('$(basename $f)', 'build', round(j['build_s'],3), 'first', round(j['first_search_ms'],1), 'ms')"; done
python3 - <<'PY'
import json, glob, re, collections
rows = collections.defaultdict(list)
for f in sorted(glob.glob('/tmp/w/lm-*-[0-9]*.json')):
    m = re.match(r'/tmp/w/lm-(.*)-(ltokit(?:-prev)?)-\d+\.json', f)
    j = json.load(open(f))
    for r in j['results']:
        rows[(m.group(1), r['batch'], r['n_probes'])].append((m.group(2), int(r['device_qps']), round(r['recall'], 4)))
for key, v in rows.items():
    by = collections.defaultdict(list)
    for b, q, rc in v: by[b].append(q)
    print(key, dict(by), 'recall', sorted(set(rc for _, _, rc in v)))
PY
grep -E "^test |test result|panicked|checked|device-built" $w/tests.txt | cut -c1-250
cat $w/times.txt
