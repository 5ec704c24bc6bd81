"""The distribution's name on the package index (the import name stays `solvers`: the name
`solvers` there belongs to an unrelated project) and the installed version."""

from importlib import metadata

DISTRIBUTION = "solvers-gpu"
UNKNOWN_VERSION = "0+unknown"  # a checkout imported without being installed


def version() -> str:
    """The installed version of the distribution, from its metadata."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION
