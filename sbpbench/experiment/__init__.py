"""Experiments: the YAML config validated into an :class:`Experiment`, and the problem it poses."""
