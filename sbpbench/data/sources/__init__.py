"""The datasets, one module per source. Importing this package registers every module in it.

Each module declares the datasets of one source: their remote files (addresses, mirrors,
checksums), their converter, and anything else they need (Adult's bundled copy), and
registers them in :data:`~sbpbench.data.registry.REGISTRY`. Adding a dataset is adding a
module here (or an entry to the module of its source).
"""

import importlib
import pkgutil

#: The modules imported first, in this order, which is the order ``sbpbench datasets list``
#: shows their datasets in (roughly the papers' order). Every other module of the package is
#: imported after them, in alphabetical order, so a new module needs no entry here.
FIRST = ("adult", "lasvm", "mnist", "forest", "rcv1", "libsvm_pages")

for _name in FIRST + tuple(sorted({m.name for m in pkgutil.iter_modules(__path__)} - set(FIRST))):
    importlib.import_module(f"{__name__}.{_name}")
