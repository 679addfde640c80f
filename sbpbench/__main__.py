"""Allow ``python -m sbpbench``."""

from sbpbench.cli import main

main()
