import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

# models/, so the tests import pmf_models and run `python -m pmf_models` there.
MODELS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(MODELS))


def synthetic(n_docs, n_classes, n_features=200, seed=0, boolean=False):
    """Documents whose class shows in a block of indicative feature rows."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_docs) % n_classes
    block = (n_features - 1) // (n_classes + 1)
    rows, cols, vals = [], [], []
    for i, c in enumerate(y):
        own = 1 + c * block + rng.integers(0, block, size=8)
        noise = rng.integers(1, n_features, size=12)
        for f in np.concatenate([own, noise]):
            rows.append(i)
            cols.append(int(f))
            vals.append(1 if boolean else int(rng.integers(1, 4)))
    x = sparse.csr_matrix((vals, (rows, cols)), shape=(n_docs, n_features), dtype=np.float64)
    x.sum_duplicates()
    x.data = np.minimum(x.data, 1 if boolean else 15)
    return x, y


@pytest.fixture
def spec():
    return {"id": "pmf-hash", "version": 1, "N": 199, "fIn": 4, "boolean": False, "lMax": 64}
