#!/usr/bin/env bash
# Session 8, call 2: the index built on the device (base uploaded once, lists laid out
# there) — its GPU test, host vs device builds on the bench sets, the demo; and whether
# the tests still write under ~/.nv now that they point CUDA_CACHE_PATH at the temp dir.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/w; mkdir -p $w
rm -rf ~/.nv
( timeout 200 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture an_index_built_on_the_device probing_every_list ) > $w/tests-ivf.txt 2>&1
( timeout 100 gpu-run/bin/test-ltokit-gpu-test --ignored --test-threads=1 ) > $w/tests-ltokit.txt 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
{ ls -la ~/.nv; du -sh /tmp/ltokit-test-cuda-compute-cache; find /tmp/ltokit-test-cuda-compute-cache -type f | wc -l; } > $w/nv-after-tests.txt 2>&1
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
export CUDA_CACHE_PATH=/tmp/nvc
for set in lowdim:1024 lowdim-f16:1024 lowdim-i8:1024 images:256; do
  IFS=: read -r name lists <<< "$set"
  for build in host device host device; do
    LTOKIT_LOG=ltokit_ivf=debug timeout 60 gpu-run/bin/ltokit ivf bench --k 10 --json --reps 2 --cache-dir /tmp/cb --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes 10 --batch 10000 --scan auto --build $build > $w/b-$name-$build-$SECONDS.json 2> $w/b-$name-$build.err
  done
done
echo "builds at $SECONDS s" >> $w/times.txt
timeout 60 gpu-run/bin/ltokit demo --out-dir /tmp/demo-out > $w/demo.txt 2>&1
echo "demo at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
for f in $w/b-*-[0-9]*.json; do echo "$(basename $f)"; python3 -c "
import json
j=json.load(open('$f'))
print(' build', round(j['build_s'],3), 'on device', round(j.get('build_on_device_s',0),3), {k:round(v,3) for k,v in j['build_breakdown_s'].items()}, 'first', round(j['first_search_ms'],1))
for r in j['results']: print(' ',r['batch'],r['scan'],r['n_probes'],round(r['recall'],4),int(r['device_qps']))
"; done
grep -E "^test |test result|panicked|device-built" $w/tests-*.txt | cut -c1-250
cat $w/nv-after-tests.txt $w/demo.txt $w/times.txt
