"""sbpbench: reproduce and compare SVM solvers by kernel evaluations.

The package follows the data flow of the design contracts: a validated experiment
(:mod:`sbpbench.config`) selects a dataset (:mod:`sbpbench.data`), which becomes a
problem (:mod:`sbpbench.problem`) with a counting kernel (:mod:`sbpbench.kernels`);
pluggable solvers (:mod:`sbpbench.solvers`) are advanced by the runner
(:mod:`sbpbench.runner`), which writes results (:mod:`sbpbench.results`) that the
figures (:mod:`sbpbench.plotting`) are drawn from.
"""

__version__ = "0.1.0"
