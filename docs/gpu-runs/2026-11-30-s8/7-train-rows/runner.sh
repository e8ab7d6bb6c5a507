#!/usr/bin/env bash
# Session 8, call 7: k-means' training rows gathered on the device for every type (ltokit)
# vs an f32 training set sent up for f16/i8/u8 (ltokit-prev): builds, two rounds each,
# same call; the device-build GPU test (now also checking the training rows against the
# host's) and the ltokit GPU tests, with ~/.nv checked.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/w; mkdir -p $w
rm -rf ~/.nv
( timeout 120 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture an_index_built ) > $w/tests-ivf.txt 2>&1
( timeout 60 gpu-run/bin/test-ltokit-gpu-test --ignored --test-threads=1 ) > $w/tests-ltokit.txt 2>&1
ls -la ~/.nv > $w/nv-after-tests.txt 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
python3 gpu-run/make-bench-data.py $d lowdim lowdim-f16 lowdim-i8 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
export CUDA_CACHE_PATH=/tmp/nvc
for round in 1 2 3; do
  for set in lowdim:1024 lowdim-f16:1024 lowdim-i8:1024 images:256; do
    IFS=: read -r name lists <<< "$set"
    for bin in ltokit-prev ltokit; do
      LTOKIT_LOG=ltokit_ivf=debug timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 1 --cache-dir /tmp/cb-$bin --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes 10 --batch 10000 --scan auto > $w/b-$name-$bin-$round.json 2> $w/b-$name-$bin-$round.err
    done
  done
done
echo "builds at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
for f in $w/b-*-[23].json; do python3 -c "
import json
j=json.load(open('$f'))
print('$(basename $f)', 'build', round(j['build_s'],3), 'on device', round(j['build_on_device_s'],3), {k:round(v,3) for k,v in j['build_breakdown_s'].items()}, 'recall', round(j['results'][0]['recall'],4), int(j['results'][0]['device_qps']))"; done
grep -E "^test |test result|panicked|device-built" $w/tests-*.txt | cut -c1-250
cat $w/nv-after-tests.txt $w/times.txt
