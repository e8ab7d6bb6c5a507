#!/usr/bin/env bash
# Session 8, call 8: an engine dropped waits for its background links (the test binary
# crashed at exit in call 7 after a test that built an index and returned at once): the
# device-build test alone, three processes, exit status each; then every IVF GPU test.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; mkdir -p $w
for i in 1 2 3; do
  timeout 120 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture an_index_built > $w/tests-$i.txt 2>&1
  echo "run $i: exit $?" >> $w/exits.txt
done
timeout 400 bash gpu-run/gpu-validate.sh $w/validate > $w/validate.log 2>&1
echo "validate exit $?" >> $w/exits.txt
echo "done at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
cat $w/exits.txt $w/times.txt
grep -E "^test |test result|panicked|Segm" $w/tests-*.txt $w/validate/tests.txt | cut -c1-200
