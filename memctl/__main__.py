"""`python -m memctl`: the `memctl` command, for environments whose scripts directory is not on PATH."""

from memctl.cli.app import main

main()
