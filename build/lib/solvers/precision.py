"""Precision names and the floating types they stand for."""

import numpy as np

PRECISIONS = {"fp32": np.dtype(np.float32), "fp64": np.dtype(np.float64)}


def real_dtype(precision):
    try:
        return PRECISIONS[precision]
    except KeyError:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, "
                         f"got '{precision}'") from None
