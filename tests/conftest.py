"""Shared fixtures. Tests marked `gpu` run on cuda; without a GPU they skip, unless
SOLVERS_REQUIRE_GPU=1 (set on the device machine) turns a missing GPU into a failure."""

import os

import pytest

from solvers.backend.cuda import cuda_available


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    if os.environ.get("SOLVERS_REQUIRE_GPU") == "1":
        raise pytest.UsageError("SOLVERS_REQUIRE_GPU=1 but no CUDA GPU is available")
    skip = pytest.mark.skip(reason="no CUDA GPU (run with -m gpu on a GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=["host", pytest.param("cuda", marks=pytest.mark.gpu)])
def backend_name(request):
    """Run a test on each backend; the cuda case carries the gpu marker."""
    return request.param

