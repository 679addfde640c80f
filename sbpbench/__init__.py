"""sbpbench: reproduce and compare SVM solvers by kernel evaluations.

The sub-packages are the stages of the data flow in the design contracts (``docs/design.md``), and a module
imports only its own stage and earlier ones (``tests/test_layout.py`` checks it):

=====================  ====================================================================
:mod:`errors`,         one-line user errors; the one atomic file writer
:mod:`files`
:mod:`data`            datasets: one module per source, downloads, the cache, LIBSVM files
:mod:`kernels`         the counting kernel (every kernel evaluation is counted here)
:mod:`problem`         a problem: training data behind the kernel, lambda, nu, bias
:mod:`solvers`         the pluggable solvers and their contract
:mod:`experiment`      a YAML config validated into an experiment, and the problem it poses
:mod:`estimators`      scikit-learn classifiers over the kernel solvers (beside ``experiment``)
:mod:`results`         result files (``curves.csv``, ``meta.json``) and which run counts
:mod:`execution`       the checkpoint loop of one run, and the executors that run many
:mod:`papers`          the three papers: figures, printed numbers and claims, as data
:mod:`outputs`         figures, REPRODUCTION.md and the regression check, from results
:mod:`cli`             the ``sbpbench`` command
=====================  ====================================================================
"""

__version__ = "0.1.0"
