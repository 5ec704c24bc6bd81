"""Elasticity assembly benchmark on one card: the fused elasticity form (raw_kernels/
fe/assemble.cu, FORM_ELASTICITY) for P1 and P2 vector spaces on triangles and tetrahedra,
against what a user would write instead: element matrices by whole-array NumPy ops, then
scipy.sparse COO -> CSR on the CPU, and the same in CuPy + cupyx.scipy.sparse on the GPU
(unfused). Helpers (meshes, COO -> CSR, ceilings) come from scripts/bench_fem.py.

    python scripts/bench_elasticity.py [--dofs 1e5,1e6,3e6] [--json bench_elasticity.json]
    python scripts/bench_elasticity.py --backend host --dofs small        # CPU smoke test

Times: the median of repeated launches of the form alone (pattern and maps built once, timed
apart as `setup`), CUDA events on cuda, wall clock on host. Bytes, each array once: the gather
map (nnz + 1 pointers, one int32 per element entry), the values written, the cell vertices,
the coordinates and two Lame parameters per cell; GB/s is that over the time, against the
measured copy bandwidth (scripts/ceilings.py). `check`: max |ours - SciPy's| / max |SciPy's|
(fp32 kernels against the fp64 NumPy assembly).
"""

import argparse
import json
import sys
import time
from math import factorial

import bench_fem
import benchrun
import devicetime
import numpy as np
import scipy.sparse as sp

from solvers.fe.assembly import Assembler, cells
from solvers.fe.elasticity import lame_parameters
from solvers.fe.reference import elasticity_reference
from solvers.fe.space import FunctionSpace

# Up to 3e6 dofs: P2 tetrahedra have 900 element entries a cell, and 1e7 dofs would pass the
# 2^31 entries the int32 gather maps hold.
DOFS = {"default": "1e5,1e6,3e6", "small": "300,3000"}
YOUNG, POISSON = 1.0, 0.3
REPEATS = 20


def element_elasticity(xp, points, cells, eref, lam, mu):
    """(m, L, L) element stiffness matrices, node-major dofs: |K| (lambda T_cd + mu T_dc +
    mu delta_cd tr T) with T_pq = sum_ab G_a[p] G_b[q] Eref[i, j, a, b]."""
    x = points[cells]
    d = points.shape[1]
    J = xp.transpose(x[:, 1:] - x[:, :1], (0, 2, 1))
    inv = xp.linalg.inv(J)
    G = xp.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)
    volume = xp.abs(xp.linalg.det(J)) / factorial(d)
    T = xp.einsum("mijpb,mbq->mijpq", xp.einsum("map,ijab->mijpb", G, xp.asarray(eref)), G)
    eye = xp.eye(d, dtype=T.dtype)
    trace = xp.einsum("mijpp->mij", T)
    local = (lam[:, None, None, None, None] * T
             + mu[:, None, None, None, None] * (xp.swapaxes(T, 3, 4)
                                                + trace[..., None, None] * eye))
    m, n = local.shape[:2]
    local = xp.transpose(local, (0, 1, 3, 2, 4)).reshape(m, n * d, n * d)
    return local * volume[:, None, None]


def cpu_assembly(space):
    mesh = space.mesh
    lam, mu = lame_parameters(np.full(mesh.ncells, YOUNG), np.full(mesh.ncells, POISSON))
    eref = elasticity_reference(mesh.dim + 1, space.degree)
    start = time.perf_counter()
    local = element_elasticity(np, mesh.points, mesh.cells, eref, lam, mu)
    matrix = bench_fem.coo_to_csr(np, sp, space.cell_dofs, local, space.n)
    return time.perf_counter() - start, matrix


def cupy_assembly(dev, space):
    cupy = dev.cupy
    import cupyx.scipy.sparse as csp
    mesh = space.mesh
    lam, mu = (cupy.asarray(v, cupy.float32) for v in lame_parameters(
        np.full(mesh.ncells, YOUNG), np.full(mesh.ncells, POISSON)))
    eref = elasticity_reference(mesh.dim + 1, space.degree).astype(np.float32)
    points, cells_ = cupy.asarray(mesh.points, cupy.float32), cupy.asarray(mesh.cells)
    dofs = cupy.asarray(space.cell_dofs.astype(np.int32))
    result = {}

    def run():
        local = element_elasticity(cupy, points, cells_, eref, lam, mu)
        result["matrix"] = bench_fem.coo_to_csr(cupy, csp, dofs, local, space.n)

    run()  # warm-up
    stream = cupy.cuda.get_current_stream()
    seconds = min(devicetime.seconds(dev, run, stream) for _ in range(3))
    return seconds, result["matrix"].get()


def bench_item(dev, label, dim, degree, n, args, copy_gbs):
    start = time.perf_counter()
    mesh = bench_fem.make_mesh(dim, n)
    space = FunctionSpace(mesh, degree, dim, renumber=space_dofs(dim, degree, n) <=
                          args.rcm_max_dofs)
    a = Assembler(space, dev.name, "fp32")
    form = a.bilinear("elasticity", cells(space), np.stack(lame_parameters(YOUNG, POISSON),
                                                           axis=-1))
    values = a.values()
    launch = form.bind(values)
    launch()
    dev.synchronize()
    row = {"problem": label, "cells": mesh.ncells, "dofs": space.n, "nnz": a.pattern.nnz,
           "setup_s": time.perf_counter() - start}
    seconds = devicetime.median(dev, launch, REPEATS)
    item = np.dtype(a.dtype).itemsize
    nbytes = (form.ptr.nbytes + form.entries.nbytes + a.pattern.nnz * item
              + form.vertices.nbytes + mesh.points.size * item + 2 * mesh.ncells * item)
    gbs = nbytes / seconds / 1e9
    row.update(assembly_ms=seconds * 1e3, assembly_gbs=gbs,
               assembly_copy_fraction=gbs / copy_gbs if copy_gbs else None)
    ours = sp.csr_matrix((dev.to_host(values).astype(np.float64),
                          *a.pattern.host_arrays()[::-1]), shape=(space.n,) * 2)
    entries = form.entries.size
    if entries <= args.cpu_max_entries:
        cpu_s, reference = cpu_assembly(space)
        row.update(scipy_ms=cpu_s * 1e3,
                   check=float(abs(ours - reference).max() / abs(reference).max()))
    if dev.name == "cuda" and entries <= args.unfused_max_entries:
        unfused_s, unfused = cupy_assembly(dev, space)
        row.update(cupy_unfused_ms=unfused_s * 1e3,
                   cupy_check=float(abs(ours - unfused).max() / abs(ours).max()))
    return row


def space_dofs(dim, degree, n):
    return dim * (degree * n + 1) ** dim


def run(args):
    dev, copy_gbs, report = bench_fem.new_report(args)
    targets = [float(d) for d in DOFS.get(args.dofs, args.dofs).split(",")]
    items = []  # (label, dim, degree, cells per axis); a vector space has dim dofs per node
    for label in args.problems.split(","):
        dim, degree = bench_fem.PROBLEMS[label]
        items += [(label, dim, degree, bench_fem.cells_per_axis(dim, degree, target / dim))
                  for target in targets]
    start = time.perf_counter()
    for item in items:
        report["rows"].append(bench_item(dev, *item, args, copy_gbs))
        print(json.dumps(report["rows"][-1], default=str), flush=True)
    report["wall_seconds"] = time.perf_counter() - start
    return report


# bench_fem's table without its solve and scikit-fem columns.
COLUMNS = [column for column in bench_fem.COLUMNS
           if not column[0].startswith(("jacobi", "amg", "skfem"))]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cuda", choices=("cuda", "host"))
    parser.add_argument("--dofs", default="default",
                        help="comma-separated dof counts, or 'default' / 'small'")
    parser.add_argument("--problems", default=",".join(bench_fem.PROBLEMS))
    parser.add_argument("--rcm-max-dofs", type=float, default=3e6)
    parser.add_argument("--cpu-max-entries", type=float, default=5e7,
                        help="skip the NumPy CPU assembly above this many element entries")
    parser.add_argument("--unfused-max-entries", type=float, default=1e8)
    parser.add_argument("--json", default="bench_elasticity.json")
    return parser.parse_args(argv)


def main(argv=None):
    return benchrun.main("bench_elasticity", parse_args(argv), "--backend host --dofs small",
                         run, lambda report: bench_fem.table(report, COLUMNS))


if __name__ == "__main__":
    sys.exit(main())
