"""Allow ``python -m sbpbench``."""

from sbpbench.cli import main

if __name__ == "__main__":  # not when a spawned worker process re-imports it
    main()
