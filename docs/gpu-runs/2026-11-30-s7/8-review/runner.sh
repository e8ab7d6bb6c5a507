timeout 120 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles  # build of 423202a..2be0910
