#!/usr/bin/env bash
# Session 8, call 1: the list-major top-k pass hands busy slots to the next free warp
# (A/B against the previous build, same call), then every IVF GPU test on the new build,
# and whether anything writes under ~/.nv.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/w; mkdir -p $w
ls -la ~/.nv 2>&1 | head -5 > $w/nv-before.txt; echo "CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-unset} CUDA_CACHE_DISABLE=${CUDA_CACHE_DISABLE:-unset}" >> $w/nv-before.txt
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
for set in lowdim:1024:10,20,50 lowdim-i8:1024:10,20 lowdim-f16:1024:10,20 images:256:5,10; do
  IFS=: read -r name lists probes <<< "$set"
  for bin in ltokit-prev ltokit ltokit-prev ltokit; do
    timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 5 --cache-dir /tmp/c-$bin --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000,1000 --scan list-major > $w/lm-$name-$bin.json 2> $w/lm-$name-$bin.err
    cp $w/lm-$name-$bin.json $w/lm-$name-$bin-$SECONDS.json
  done
done
echo "A/B at $SECONDS s" >> $w/times.txt
ls -la ~/.nv 2>&1 | head -5 > $w/nv-after-bench.txt; du -sh ~/.nv 2>&1 >> $w/nv-after-bench.txt
bash gpu-run/gpu-validate.sh $w/validate > $w/validate.log 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
ls -la ~/.nv 2>&1 | head -5 > $w/nv-after-tests.txt; find ~/.nv -type f 2>/dev/null | wc -l >> $w/nv-after-tests.txt
rm -rf /tmp/bench-data
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
for f in $w/lm-*-[0-9]*.json; do echo "$(basename $f)"; python3 -c "
import json
j=json.load(open('$f'))
for r in j['results']: print(' ',r['batch'],r['n_probes'],round(r['recall'],4),int(r['device_qps']), {k:round(v*1e3,3) for k,v in r['stages'].items() if k=='scan_s'})
"; done
grep -E "^test |test result|panicked|checked" $w/validate/tests.txt | cut -c1-250
cat $w/nv-*.txt $w/times.txt
