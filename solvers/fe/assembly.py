"""Fused finite-element assembly on a backend (raw_kernels/fe/assemble.cu).

    assembler = Assembler(space, backend="auto", precision="fp32")
    A = assembler.matrix()                                  # CsrMatrix, values zero
    stiffness = assembler.bilinear("stiffness", cells(space), conductivity_per_cell)
    stiffness.bind(A.values)()                              # one launch fills the values
    load = assembler.linear(cells(space))                   # b = M f for nodal f
    load.bind(f, b)()
    sync_host(A)                                            # host copy for AMG / Jacobi / SciPy

Setup on the host (or on the device with CuPy for the cuda backend): the CSR pattern of the
space (every pair of dofs sharing a cell), and for each form a gather map: for every nonzero,
the element-local entries that add up to it (pattern.py). A matrix is two launches: one
thread per element computes its element matrix into a scratch the forms share, then one
thread per nonzero adds its entries in the map's order (a load: one thread per dof
recomputing its few contributions). No atomics, the same bits every run, capturable (no
allocation, no host access) so a time step can reassemble inside a CUDA graph.

Element sets: cells(space) (coefficients per cell) or facets(space, names) (per boundary
facet, for Neumann and Robin integrals). Forms: FORMS below; a new form is a kernel in
fe/assemble.cu with fe_mass's signature plus its reference tensor in reference.py.
"""

from dataclasses import dataclass

import numpy as np

from ..backend import get_backend
from ..linalg.csr import CsrMatrix, HostCsr
from ..linalg.operator import LaunchSequence
from ..precision import real_dtype
from .pattern import SparsityPattern, vector_map
from .reference import elasticity_reference, mass_reference, stiffness_reference

SOURCE = "fe/assemble.cu"
THREADS = 256
# Form name -> (kernel, reference tensor of (vertices, degree)).
FORMS = {"mass": ("fe_mass", mass_reference),
         "stiffness": ("fe_stiffness", stiffness_reference),
         "elasticity": ("fe_elasticity", elasticity_reference)}
# Coefficients per element of the forms that read more than one, interleaved (elasticity:
# the Lame parameters lambda, mu; a vector space on cells only).
COEFFICIENTS = {"elasticity": 2}
# (dimension, element dimension, degree): cells and facets of triangles and tetrahedra.
ELEMENT_KINDS = [(gdim, tdim, degree) for gdim in (2, 3) for tdim in (gdim, gdim - 1)
                 for degree in (1, 2)]


def defines(gdim, tdim, degree, components):
    nloc = (tdim + 1) if degree == 1 else (tdim + 1) * (tdim + 2) // 2
    return {"GDIM": gdim, "TDIM": tdim, "NLOC": nloc, "NCOMP": components}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside): assemble.cu for cells
    and facets, P1/P2, scalar and vector."""
    for gdim, tdim, degree in ELEMENT_KINDS:
        for components in (1, gdim):
            yield SOURCE, defines(gdim, tdim, degree, components)


@dataclass(frozen=True)
class Elements:
    """Elements of one dimension: vertices (m, tdim + 1) index mesh.points, dofs (m, L) the
    space's dofs in local order."""

    vertices: np.ndarray
    dofs: np.ndarray
    tdim: int

    @property
    def count(self):
        return self.vertices.shape[0]


def cells(space):
    return Elements(space.mesh.cells, space.cell_dofs, space.mesh.dim)


def facets(space, names):
    """The boundary facets of the named groups (a MeshError names a missing one)."""
    mesh = space.mesh
    mesh.require_boundaries(names)
    vertices = np.concatenate([mesh.boundaries[name] for name in names]) if names else \
        np.zeros((0, mesh.dim), np.int64)
    return Elements(vertices, space.node_dofs(space.facet_nodes(vertices)), mesh.dim - 1)


def array_module(backend):
    """CuPy for the cuda backend (setup on the device), NumPy otherwise."""
    if backend.name == "cuda":
        return backend.cupy
    return np


def sync_host(matrix):
    """Refresh a CsrMatrix's host copy (diagonal(), to_scipy(), AMG setup) from its device
    values, after a device assembly wrote them."""
    values = matrix.backend.to_host(matrix.values)
    values.setflags(write=False)
    matrix.host = HostCsr(matrix.host.row_ptr, matrix.host.columns, values)


class Assembler:
    """The pattern, geometry and kernels of one space on one backend and precision."""

    def __init__(self, space, backend="auto", precision="fp32"):
        self.space = space
        self.backend = get_backend(backend)
        self.dtype = real_dtype(precision)
        self.xp = array_module(self.backend)
        self.pattern = SparsityPattern(space.cell_dofs, space.n, self.xp)
        self.points = self.backend.to_device(space.mesh.points.astype(self.dtype))
        self._scratch = None

    def scratch(self, size):
        """`size` values of the element-matrix scratch the forms share (their launches run in
        order on one stream); a larger request allocates a larger one."""
        if self._scratch is None or self._scratch.size < size:
            self._scratch = self.backend.zeros((size,), self.dtype)
        return self._scratch[:size]

    def device(self, array, dtype):
        """A backend array of `array` (NumPy, or CuPy from the setup) as `dtype`."""
        if isinstance(array, np.ndarray):
            return self.backend.to_device(np.ascontiguousarray(array, dtype))
        array = self.xp.ascontiguousarray(array, dtype=dtype)
        self.backend.cupy.cuda.Device().synchronize()  # setup ran on CuPy's stream
        return array

    def module(self, tdim):
        d = defines(self.space.mesh.dim, tdim, self.space.degree, self.space.components)
        return self.backend.module(SOURCE, self.dtype, d)

    def matrix(self, accumulate=None, threads_per_row="auto"):
        """A CsrMatrix on the pattern with zero values (assemble into matrix.values)."""
        row_ptr, columns = self.pattern.host_arrays()
        host = HostCsr(row_ptr, columns, np.zeros(columns.size, self.dtype))
        return CsrMatrix(host, self.backend, accumulate, threads_per_row)

    def values(self):
        """A zero vector of nnz values on the pattern (one matrix's values)."""
        return self.backend.zeros((self.pattern.nnz,), self.dtype)

    def vector(self):
        return self.backend.zeros((self.space.n,), self.dtype)

    def per_element(self, coefficient, elements, width=1):
        """A device array of `width` coefficients per element (a number or an array of shape
        (elements,) or, width > 1, (width,) or (elements, width)), interleaved."""
        shape = (elements.count,) if width == 1 else (elements.count, width)
        values = np.broadcast_to(np.asarray(coefficient, np.float64), shape)
        return self.device(values, self.dtype)

    def bilinear(self, form, elements, coefficient=1.0):
        return BilinearForm(self, form, elements, coefficient)

    def linear(self, elements, coefficient=1.0):
        return LoadForm(self, elements, coefficient)


class BilinearForm:
    """One form on one element set: bind(values) launches values[:] = the assembled matrix."""

    def __init__(self, assembler, form, elements, coefficient):
        if form not in FORMS:
            raise ValueError(f"unknown form {form!r} (known: {', '.join(FORMS)})")
        a = self.assembler = assembler
        kernel, reference = FORMS[form]
        dim = a.space.mesh.dim
        if form in COEFFICIENTS and (elements.tdim != dim or a.space.components != dim):
            raise ValueError(f"the {form} form needs a vector space ({dim} components) over "
                             f"cells, got {a.space.components} component(s) on "
                             f"{elements.tdim}D elements")
        self.name = form
        # The map lists element entries e L^2 + local; the element kernel stores them
        # entry-major, at local * count + e.
        ptr, entries = a.pattern.matrix_map(elements.dofs)
        local_count, entries = elements.dofs.shape[1] ** 2, entries.astype(a.xp.int64)
        entries = entries % local_count * elements.count + entries // local_count
        self.ptr, self.entries = a.device(ptr, np.int32), a.device(entries, np.int32)
        self.vertices = a.device(elements.vertices, np.int32)
        self.coefficient = a.per_element(coefficient, elements, COEFFICIENTS.get(form, 1))
        self.reference = a.device(reference(elements.tdim + 1, a.space.degree).ravel(), a.dtype)
        module = a.module(elements.tdim)
        self.kernel, self.gather = getattr(module, kernel), module.fe_gather
        self.count = elements.count
        self.contributions = a.scratch(elements.count * local_count)

    def bind(self, values):
        """Capturable launches writing the assembled values into `values` (nnz, dtype)."""
        nnz = self.assembler.pattern.nnz
        if values.shape != (nnz,) or values.dtype != self.assembler.dtype:
            raise ValueError(f"values must be {nnz} {self.assembler.dtype}, got "
                             f"{values.shape} {values.dtype}")
        return LaunchSequence(self, [
            self.kernel.bind(max(1, -(-self.count // THREADS)), THREADS, self.vertices,
                             self.assembler.points, self.coefficient, self.reference,
                             self.contributions, self.count),
            self.gather.bind(-(-nnz // THREADS), THREADS, self.ptr, self.entries,
                             self.contributions, values, nnz)])


class LoadForm:
    """b = int coefficient f v over an element set, for f given by its nodal values (f is
    interpolated in the space; the interpolation error is of the order of the discretisation
    error, so rates are kept, and f stays a device vector a time step can update)."""

    def __init__(self, assembler, elements, coefficient):
        a = self.assembler = assembler
        ptr, entries = vector_map(a.xp.asarray(elements.dofs), a.space.n, a.xp)
        self.ptr, self.entries = a.device(ptr, np.int32), a.device(entries, np.int32)
        self.dofs = a.device(elements.dofs, np.int32)
        self.vertices = a.device(elements.vertices, np.int32)
        self.coefficient = a.per_element(coefficient, elements)
        self.reference = a.device(mass_reference(elements.tdim + 1, a.space.degree).ravel(),
                                  a.dtype)
        self.kernel = a.module(elements.tdim).fe_load

    def bind(self, f, b, add=False):
        """A capturable launch of b = load(f) (add: b += load(f))."""
        n = self.assembler.space.n
        return self.kernel.bind(-(-n // THREADS), THREADS, self.ptr, self.entries, self.dofs,
                                self.vertices, self.assembler.points, self.coefficient,
                                self.reference, f, b, n, int(add))
