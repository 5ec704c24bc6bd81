"""The package list that setup.cfg cannot write next to `packages = find:`: the repository's
top-level folders mapped into the solvers package at build time, so that an installed solvers
carries them and installs no top-level package but `solvers`:

    raw_kernels/  ->  solvers/_kernels      the kernel sources (solvers.backend.source)
    cases/        ->  solvers/_data/cases   the shipped case files (solvers.cases.shipped)
    meshes/       ->  solvers/_data/meshes  the meshes they read (`../meshes/NAME.msh`)

Metadata, dependencies and package data are in setup.cfg.
"""

from setuptools import find_packages, setup

MAPPED = {"solvers._kernels": "raw_kernels", "solvers._data.cases": "cases",
          "solvers._data.meshes": "meshes"}

setup(packages=[*find_packages(include=["solvers", "solvers.*"]), *MAPPED], package_dir=MAPPED)
