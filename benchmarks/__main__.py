"""``python -m benchmarks``: see :mod:`benchmarks.run`."""

from benchmarks.run import main

main()
