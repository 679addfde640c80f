"""RCV1-v2 (Lewis, Yang, Rose, Li, JMLR 5, 2004): one topic against the rest (Pegasos, SGD papers).

The LYRL2004 tf-idf vectors and topic qrels, from the JMLR pages or scikit-learn's figshare
mirrors of them. As Pegasos (after Joachims 2006), the 781265 documents of LYRL2004's
``test`` files train and the 23149 of its ``train`` file test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from sbpbench.data.convert import read_data
from sbpbench.data.fetch import Digest, RemoteFile
from sbpbench.data.libsvm import read_libsvm
from sbpbench.data.registry import Arrays, Converter, Dataset, register
from sbpbench.errors import UserError

LYRL = "http://www.ai.mit.edu/projects/jmlr/papers/volume5/lewis04a/"
FIGSHARE = "https://ndownloader.figshare.com/files/"
RCV1_FEATURES = 47236


def _file(folder: str, name: str, figshare_id: str, sha256: str) -> RemoteFile:
    """A file of the JMLR pages, or its figshare mirror, with scikit-learn's pinned sha256."""
    return RemoteFile(name, (LYRL + folder + name, FIGSHARE + figshare_id),
                      (Digest("sha256", sha256, source="scikit-learn's pinned checksum of its figshare mirror"),))


#: The vector files: LYRL2004's train file (vectors0, our test set), then its four test files.
VECTORS = (
    _file("a13-vector-files/", "lyrl2004_vectors_train.dat.gz", "5976057",
          "5468f656d0ba7a83afc7ad44841cf9a53048a5c083eedc005dcdb5cc768924ae"),
    _file("a13-vector-files/", "lyrl2004_vectors_test_pt0.dat.gz", "5976069",
          "ed40f7e418d10484091b059703eeb95ae3199fe042891dcec4be6696b9968374"),
    _file("a13-vector-files/", "lyrl2004_vectors_test_pt1.dat.gz", "5976066",
          "87700668ae45d45d5ca1ef6ae9bd81ab0f5ec88cc95dcef9ae7838f727a13aa6"),
    _file("a13-vector-files/", "lyrl2004_vectors_test_pt2.dat.gz", "5976063",
          "48143ac703cbe33299f7ae9f4995db49a258690f60e5debbff8995c34841c7f5"),
    _file("a13-vector-files/", "lyrl2004_vectors_test_pt3.dat.gz", "5976060",
          "dfcb0d658311481523c6e6ca0c3f5a3e1d3d12cde5d7a8ce629a9006ec7dbb39"),
)
QRELS = _file("a08-topic-qrels/", "rcv1-v2.topics.qrels.gz", "5976048",
              "2a98e5e5d8b770bded93afc8930d88299474317fe14181aee1466cc754d0d1c1")


def rcv1_topics(qrels: Path, topic: str) -> np.ndarray:
    """Sorted document ids that the qrels file (``topic docid 1`` lines) assigns to ``topic``."""
    ids = [int(parts[1]) for line in read_data(qrels).decode("ascii").splitlines()
           if len(parts := line.split()) >= 2 and parts[0] == topic]
    if not ids:
        raise UserError(f"{qrels}: no document has topic {topic!r}")
    return np.unique(np.array(ids, dtype=np.int64))


def rcv1_split(vectors: list[Path], positives: np.ndarray) -> Arrays:
    """LYRL2004 vector files (``docid term:weight ...``) as (CSR, +1 for documents in ``positives``)."""
    blocks, ids = [], []
    for path in vectors:
        X, docids = read_libsvm(read_data(path), str(path), RCV1_FEATURES)  # the document id as the label
        blocks.append(X)
        ids.append(docids.astype(np.int64))
    docids = np.concatenate(ids)
    return sp.csr_matrix(sp.vstack(blocks, format="csr")), np.where(np.isin(docids, positives), 1.0, -1.0)


def _topic_vs_rest(topic: str) -> Converter:
    """Converter of ``rcv1-<topic>``: LYRL2004's test files train, its train file tests."""
    def convert(paths: dict[str, Path]) -> tuple[Arrays, Arrays]:
        positives = rcv1_topics(paths["qrels"], topic)
        train = rcv1_split([paths[f"vectors{k}"] for k in range(1, 5)], positives)
        test = rcv1_split([paths["vectors0"]], positives)
        return train, test
    return convert


for _topic in ("CCAT", "C11"):
    register(Dataset(
        f"rcv1-{_topic.lower()}", f"RCV1-v2 {_topic} vs rest, 47236 tf-idf features (Pegasos, SGD papers)",
        "RCV1-v2 LYRL2004 vectors and topic qrels (Lewis, Yang, Rose, Li, JMLR 5, 2004), or scikit-learn's "
        "figshare mirrors of them", f"topic {_topic} (+1) vs rest (-1)", RCV1_FEATURES, 781265, 23149,
        {**{f"vectors{k}": remote for k, remote in enumerate(VECTORS)}, "qrels": QRELS},
        _topic_vs_rest(_topic),
        notes="train = the 781265 LYRL2004 'test' documents, test = the 23149 LYRL2004 'train' documents "
              "(the split of Joachims 2006 used by Pegasos); the SGD paper trains on all 804414 documents",
    ))
