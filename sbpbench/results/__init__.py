"""Result files: writing and reading ``curves.csv`` and ``meta.json``, and finding the runs that count."""
