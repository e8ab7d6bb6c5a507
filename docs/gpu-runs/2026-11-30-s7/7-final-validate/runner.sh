bash scripts/gpu-validate.sh $OUT/validate > $OUT/validate.log 2>&1  # carry ["gpu-run"], the warp-layout build
