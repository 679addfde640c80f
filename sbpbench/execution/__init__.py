"""Running experiments: the checkpoint loop of one run, and the executors that run many."""
