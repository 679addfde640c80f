"""The three papers: their figures, printed numbers and claims, declared as data."""
