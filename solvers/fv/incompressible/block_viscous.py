"""The implicit viscous stage on a decomposed 2D or 3D grid's block (issue 24; viscous.py is
the single-rank stage): the block's rows of I - s L, solved by DistributedConjugateGradient with
the single-rank stage's stopping rule on the whole grid's norms.

Every face of the whole grid is one row of the distributed solve. A face on a side between
two blocks is held by both (block.py), but solved for by the block beyond the high side, as
its face 0; on the other block it is a copied face (raw_kernels/fv/mac_lines.h copied_face),
whose row is zero and whose right-hand side ins_predict leaves zero, so r, p and q vanish
there and every dot product counts the face once.

An application y = A x copies x into du, dv(, dw), padded as u, v(, w), swaps their ghost
layers and the copied faces (MacBlock.velocity_halo, copied=True) and launches
viscous_block_helmholtz (raw_kernels/fv/viscous.cu, viscous3d.cu), whose rows read what the
whole grid's rows read, in the same order: y is the single-rank operator's rows, bit for bit.
After the solve the same copy and swap, then a copy back into x, give x's copied faces the
solution of the block that solves for them, which ins_viscous_increment (ins3_) reads.
"""

from ...backend.halo import check_vector
from ...linalg.distributed_cg import DistributedConjugateGradient
from ...linalg.operator import LaunchSequence, LinearOperator
from .viscous import ViscousStage, packed_size

THREADS = 256  # threads of a 2D viscous_block_helmholtz or viscous_pad block, one a row


class BlockFaceHelmholtz(LinearOperator):
    """y = (I - s L) x over the packed face vector of `parallel`'s block (a MacBlock), s =
    theta_nu dt[0]; shapes: the padded face arrays' shapes (u, v(, w), device order, G ghost
    layers); module: the compiled viscous.cu or viscous3d.cu; launch: its kernels' (grid,
    block), by default one thread a row (2D; 3D: threads over the block's faces)."""

    def __init__(self, parallel, theta_nu, dt, module, shapes, backend, dtype, launch=None):
        local, grid = parallel.local, parallel.grid
        super().__init__(packed_size(local.shape), dtype, backend)
        self.comm, self.shape = parallel.comm, grid.shape  # CG's: the whole grid's
        self.collectives = parallel.collectives
        self.d = [backend.zeros(shape, dtype) for shape in shapes]
        self._halo = parallel.velocity_halo(*self.d, copied=True)
        self._module, self._cells = module, local.shape
        self._launch = launch or (-(-self.n // THREADS), THREADS)
        # The kernel's arguments after d and y: the single-rank operator's weights.
        weights = (1.0 / h**2 for h in (grid.dx, grid.dy, grid.dz)[:grid.ndim])
        self._args = (dt, theta_nu, *self._cells, *weights, *parallel.codes)

    def _copy(self, x, to_padded):
        """The launch copying the packed x into d (to_padded) or back."""
        return self._module.viscous_pad.bind(*self._launch, x, *self.d, *self._cells,
                                             int(to_padded))

    def bind(self, x, y):
        """y = A x: a LaunchSequence of the copy into du and dv, their swap (launches and
        HostWork) and the operator's launch."""
        check_vector(self.backend, x, self.n, self.dtype, "x")
        check_vector(self.backend, y, self.n, self.dtype, "y")
        apply = self._module.viscous_block_helmholtz.bind(*self._launch, *self.d, y, *self._args)
        return LaunchSequence(self, [self._copy(x, True), *self._halo, apply])

    def settle(self, x):
        """The parts giving x's copied faces the values of the blocks that solve for them."""
        return [self._copy(x, True), *self._halo, self._copy(x, False)]

    def diagonal(self):
        raise NotImplementedError("the diagonal changes with dt on the device")


def block_viscous_stage(parallel, theta_nu, dt, module, shapes, reference_velocity, backend,
                        dtype, launch=None):
    """(ViscousStage, parts): the stage of `parallel`'s block (BlockFaceHelmholtz's arguments),
    and the parts of the step that solve it (HostWork: the distributed CG from its b and x, no
    restart, as the single-rank stage's in-graph solve) and then settle x's copied faces."""
    operator = BlockFaceHelmholtz(parallel, theta_nu, dt, module, shapes, backend, dtype,
                                  launch)
    stage = ViscousStage(operator, reference_velocity, packed_size(parallel.grid.shape),
                         DistributedConjugateGradient)
    return stage, [*stage.solver.step_parts(), *operator.settle(stage.x)]

