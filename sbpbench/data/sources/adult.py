"""UCI Adult: the census-income data of the SBP and SGD papers, and its copy bundled here.

``adult`` downloads UCI's CSV files and encodes them as Platt did (below), which gives
LIBSVM's ``a9a``/``a9a.t`` byte for byte; ``adult-libsvm`` downloads ``a9a``/``a9a.t``
themselves. The same bytes are bundled inside the package (compressed with xz, checked
against their sha256 when loaded): they are ``adult``'s fallback, so that Adult loads
offline with an empty cache.

Platt's Adult encoding
----------------------
The 14 UCI attributes become 123 indicator features, one block per attribute in the order
of ``adult.names``: a categorical attribute gets one feature per value, in the order
``adult.names`` lists them; a continuous attribute is cut into ranges (Platt used
quantile bins, so the edges are properties of the data, not round numbers). A missing
value (``?``) sets no feature of its block. The edges below were derived from the real
files: for every range, the smallest and largest value of ``adult.data`` + ``adult.test``
that LIBSVM's ``a9a``/``a9a.t`` put in it (they never overlap). Each edge is the largest
value seen in its range; no value of the data falls between a range's largest value and
the next range's smallest one (e.g. fnlwgt 106637 | 106648), so the encoding reproduces
a9a and a9a.t byte for byte (32561 + 16281 rows, none differs; tests check it).
"""

from __future__ import annotations

import hashlib
import io
import lzma
from collections.abc import Sequence
from functools import partial
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np

from sbpbench.data.convert import libsvm_as_is, read_data
from sbpbench.data.fetch import CHECKED_COPY, Digest, RemoteFile
from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.data.registry import Dataset, Fallback, register
from sbpbench.data.split import Split
from sbpbench.errors import UserError

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
ADULT_FEATURES = 123
#: sha256 of LIBSVM's a9a and a9a.t: pinned for ``adult-libsvm``, and checked when the
#: bundled copy is loaded.
A9A_SHA256 = {
    "a9a": "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
    "a9a.t": "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
}
#: Their sizes in bytes.
A9A_BYTES = {"a9a": 2329875, "a9a.t": 1164628}

# ----------------------------------------------------------------------------- Platt's encoding

_WORKCLASS = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
              "Without-pay", "Never-worked"]
_EDUCATION = ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
              "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"]
_MARITAL = ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed", "Married-spouse-absent",
            "Married-AF-spouse"]
_OCCUPATION = ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
               "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
               "Priv-house-serv", "Protective-serv", "Armed-Forces"]
_RELATIONSHIP = ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"]
_RACE = ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]
_SEX = ["Female", "Male"]
_COUNTRY = ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
            "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran", "Honduras",
            "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland", "France",
            "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia", "Hungary", "Guatemala",
            "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong",
            "Holand-Netherlands"]

#: The 14 UCI columns in order: (name, categories) or (name, upper edges of the ranges but the last).
ADULT_ENCODING: list[tuple[str, Sequence[str] | Sequence[float]]] = [
    ("age", [25, 32, 40, 49]),
    ("workclass", _WORKCLASS),
    ("fnlwgt", [106637, 158656, 196337, 259865]),
    ("education", _EDUCATION),
    ("education-num", [8, 9, 10, 12]),
    ("marital-status", _MARITAL),
    ("occupation", _OCCUPATION),
    ("relationship", _RELATIONSHIP),
    ("race", _RACE),
    ("sex", _SEX),
    ("capital-gain", [0]),
    ("capital-loss", [0]),
    ("hours-per-week", [34, 39, 40, 47]),
    ("native-country", _COUNTRY),
]


def _block_sizes() -> list[int]:
    return [len(spec) if isinstance(spec[0], str) else len(spec) + 1 for _, spec in ADULT_ENCODING]


def adult_to_libsvm(data: bytes, name: str) -> bytes:
    """Encode UCI Adult CSV rows (``adult.data`` or ``adult.test``) as Platt's a9a text.

    Lines that are blank or start with ``|`` (the header of ``adult.test``) are skipped;
    the label's trailing period (``>50K.`` in ``adult.test``) is ignored. Output lines are
    ``+1 i:1 j:1 ... \\n`` exactly as in LIBSVM's a9a (note the space before the newline).

    Raises
    ------
    UserError
        On a row without 15 fields, a value outside the encoding, or an unknown label.
    """
    starts = np.cumsum([1] + _block_sizes()[:-1])
    assert sum(_block_sizes()) == ADULT_FEATURES
    lookups = [
        {value: start + k for k, value in enumerate(spec)} if isinstance(spec[0], str) else None
        for (_, spec), start in zip(ADULT_ENCODING, starts)
    ]
    out = io.StringIO()
    for lineno, raw in enumerate(data.decode("ascii").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("|"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 15:
            raise UserError(f"{name}:{lineno}: expected 15 comma-separated fields, got {len(fields)}")
        label = fields[14].rstrip(".")
        if label not in (">50K", "<=50K"):
            raise UserError(f"{name}:{lineno}: expected the label '>50K' or '<=50K', got {fields[14]!r}")
        out.write("+1 " if label == ">50K" else "-1 ")
        for (column, spec), start, lookup, value in zip(ADULT_ENCODING, starts, lookups, fields):
            if value == "?":
                continue
            if lookup is not None:
                if value not in lookup:
                    raise UserError(f"{name}:{lineno}: unknown {column} {value!r}")
                index = lookup[value]
            else:
                try:
                    index = start + int(np.searchsorted(spec, float(value), side="left"))
                except ValueError:
                    raise UserError(f"{name}:{lineno}: {column} must be a number, got {value!r}") from None
            out.write(f"{index}:1 ")
        out.write("\n")
    return out.getvalue().encode("ascii")


def convert_uci(paths: dict[str, Path]) -> tuple[bytes, bytes]:
    """Converter of ``adult``: UCI's ``train`` and ``test`` CSV files as Platt's a9a text."""
    train, test = (adult_to_libsvm(read_data(paths[role]), paths[role].name) for role in ("train", "test"))
    return train, test


# ----------------------------------------------------------------------------- the bundled copy

#: What ``meta.json`` records as ``dataset_copy`` when Adult comes from the bundled files.
BUNDLED_ADULT = "bundled a9a (LIBSVM)"


def bundled_bytes(filename: str) -> bytes:
    """The decompressed bytes of a bundled file (``a9a`` or ``a9a.t``), verified against
    :data:`A9A_SHA256`.

    Raises
    ------
    UserError
        The file is missing, not xz, or not the expected bytes (the installed package is damaged).
    """
    ref = _bundled_file(filename)
    try:
        data = lzma.decompress(ref.read_bytes())
    except (OSError, lzma.LZMAError) as exc:
        raise UserError(f"{ref}: cannot read the bundled copy ({exc}; the installed package is damaged; "
                        "reinstall it)") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != A9A_SHA256[filename]:
        raise UserError(
            f"{ref}: sha256 {digest} does not match the expected {A9A_SHA256[filename]} "
            "(the installed package is damaged; reinstall it)"
        )
    return data


def _bundled_file(filename: str) -> Traversable:
    """The shipped ``.xz`` file of ``a9a`` or ``a9a.t``."""
    return resources.files("sbpbench.data") / "bundled" / f"{filename}.xz"


def check_bundled() -> str | None:
    """Re-check the bundled a9a and a9a.t against :data:`A9A_SHA256`: None when both match, else what is wrong."""
    try:
        for filename in A9A_SHA256:
            bundled_bytes(filename)
    except UserError as exc:
        return str(exc)
    return None


def load_bundled() -> tuple[Split, Split]:
    """The bundled a9a and a9a.t as the full train and test splits of Adult.

    Each file is parsed once and then read back from the data cache
    (:func:`~sbpbench.data.cache.parsed_once`, keyed by the sha256 of the shipped ``.xz``
    file, so that a changed or damaged copy is read and checked again): the same arrays, at
    the cost of reading an ``.npz`` instead of decompressing, checking and parsing the text.
    """
    from sbpbench.data.cache import parsed_once  # here: the cache module imports the registry

    def parse(filename: str) -> Split:
        # a9a.t never uses index 123, so the feature count must be given explicitly
        X, labels = read_libsvm(bundled_bytes(filename), f"bundled {filename}", n_features=ADULT_FEATURES)
        return Split(X, to_binary(labels, filename, positive=1.0)[0], BUNDLED_ADULT)

    splits = []
    for filename in ("a9a", "a9a.t"):
        try:
            shipped = hashlib.sha256(_bundled_file(filename).read_bytes()).hexdigest()
        except OSError:
            shipped = None  # parse() says what is wrong
        splits.append(parse(filename) if shipped is None else
                      parsed_once(filename, shipped, BUNDLED_ADULT, partial(parse, filename)))
    return splits[0], splits[1]


# ----------------------------------------------------------------------------- the datasets

register(Dataset(
    "adult", "UCI Adult (census income > 50K), Platt's 123 binary features (= LIBSVM a9a)",
    "UCI Machine Learning Repository, Adult (Kohavi 1996), encoded as Platt (1998)",
    "income >50K (+1) vs <=50K (-1)", ADULT_FEATURES, 32561, 16281,
    {"train": RemoteFile("adult.data", (UCI + "adult.data",), (Digest(
        "sha256", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d", source=CHECKED_COPY),),
        3974305),
     "test": RemoteFile("adult.test", (UCI + "adult.test",), (Digest(
         "sha256", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05", source=CHECKED_COPY),),
         2003153)},
    convert_uci,
    notes="Platt's encoding (sbpbench.data.sources.adult.ADULT_ENCODING) reproduces a9a / a9a.t byte for byte; "
          "a9a.t never uses feature 123. The SBP paper reports 31562 / 16282 rows for its copy.",
    fallback=Fallback("the bundled copy of Adult (LIBSVM a9a)", load_bundled, check_bundled),
))

register(Dataset(
    "adult-libsvm", "LIBSVM's a9a / a9a.t (Adult, Platt's 123 binary features)",
    f"LIBSVM datasets page: {LIBSVM_BINARY}", "income >50K (+1) vs rest", ADULT_FEATURES, 32561, 16281,
    {role: RemoteFile(name, (LIBSVM_BINARY + name,), (Digest("sha256", A9A_SHA256[name], source=CHECKED_COPY),),
                      A9A_BYTES[name])
     for role, name in (("train", "a9a"), ("test", "a9a.t"))},
    libsvm_as_is,
    notes="a9a.t never uses feature 123; loaded with n_features=123",
))
