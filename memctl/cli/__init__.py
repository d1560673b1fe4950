"""The `memctl` command line (memctl.cli.app:main is the console script)."""

import os

# numpy's OpenBLAS starts one thread per core when numpy is imported. memctl does no dense linear algebra, and
# starting those threads costs every fresh memctl process about 40 ms of CPU. A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
