// States and boundaries of the structured Euler scheme (euler_scheme.h; the gas and its states:
// euler_gas.h): the grid a kernel reads, unfused and order-independent sums that keep
// x <-> y <-> z symmetric problems symmetric to the bit, neighbours mapped through the
// boundaries, the stability rate.
#pragma once
#include "euler_gas.h"

#define BC_PERIODIC 0
#define BC_TRANSMISSIVE 1
#define BC_REFLECTIVE 2
#define BC_INFLOW 3
// A side between two blocks of a decomposed grid (HALOS builds only): ghost cells beyond it
// are read from the side's halo buffer, which the host fills before each stage.
#define BC_HALO 4
#ifndef HALOS
#define HALOS 0
#endif

// Numbers of an inflow state per side: rho, vx, vy, vz, p.
#define INFLOW_VARS 5

// Boundary kinds are separate members, not an array: a runtime index into an array would put
// the whole struct in (slow) local memory.
struct Grid {
    const real* u;
    const real* inflow;  // per side (x_lo, x_hi, y_lo, y_hi, z_lo, z_hi): INFLOW_VARS numbers
    int nx, ny;
    int bc_xlo, bc_xhi, bc_ylo, bc_yhi;
    real gamma;
#if DIM == 3
    int nz, bc_zlo, bc_zhi;
#endif
#if HALOS
    // The halo buffer of each side (halo_sides), read only beyond a side of kind BC_HALO.
    const real *halo_xlo, *halo_xhi, *halo_ylo, *halo_yhi, *halo_zlo, *halo_zhi;
#endif
};

// The end of a Grid's brace initializer: the halo buffers unset (with_halos sets them).
#if HALOS
#define UNSET_HALOS , nullptr, nullptr, nullptr, nullptr, nullptr, nullptr
#else
#define UNSET_HALOS
#endif

// a + b rounded on its own, never fused with a product that feeds it (NVRTC fuses a * b + c into
// an FMA wherever it can). The 3D kernel adds some values right after the product that made
// them (the z faces, and the update's z and y flux differences) and others that went through
// shared memory first (the x direction): to keep x <-> y <-> z symmetric problems symmetric to
// the bit, its face states and flux differences use this. The host never fuses
// (-ffp-contract=off).
DEVICE real unfused_add(real a, real b)
{
#if defined(__CUDA_ARCH__) && REAL_BITS == 32
    return __fadd_rn(a, b);
#elif defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

// here + h at a face (h: a half slope, or minus one): unfused in 3D (see unfused_add), as it
// always was in 1D and 2D.
DEVICE real face_sum(real here, real h)
{
#if DIM == 3
    return unfused_add(here, h);
#else
    return here + h;
#endif
}

// a + b + c rounded the same way for every order of (a, b, c): the terms sorted by value and
// summed smallest first (the three axes' flux differences of a 3D update).
DEVICE real symmetric_sum(real a, real b, real c)
{
    const real lo = fmin(fmin(a, b), c), hi = fmax(fmax(a, b), c);
    const real mid = fmax(fmin(a, b), fmin(fmax(a, b), c));
    return (lo + mid) + hi;
}

// Primitive state of stored cell c (see conserved_prim).
DEVICE Prim cell_prim(const real* u, int ncell, int c, real flip_x, real flip_y, real gamma,
                      real flip_z = R(1))
{
    real cons[NVAR];
    load_cell(u, ncell, c, cons);
    return conserved_prim(cons, flip_x, flip_y, gamma, flip_z);
}

// A harmless state for cells and pads whose values are never used: gas at rest, rho = p = 1.
DEVICE Prim rest_prim()
{
    Prim w = Prim{};
    w.rho = R(1);
    w.p = R(1);
    return w;
}

// Cells of the grid (DIM 3: nx ny nz).
DEVICE int grid_cells(const Grid& g)
{
#if DIM == 3
    return g.nx * g.ny * g.nz;
#else
    return g.nx * g.ny;
#endif
}

// Index i of a ghost cell beyond a side of an axis of n cells, mapped into the grid through the
// side's boundary kind: periodic wraps around, the others mirror.
DEVICE int boundary_index(int i, int n, int kind)
{
    if (kind == BC_PERIODIC) return i < 0 ? i + n : i - n;
    return i < 0 ? -1 - i : 2 * n - 1 - i;
}

#if HALOS
// Cells of a grid along z (1 below 3D, which has no nz member).
#if DIM == 3
#define GRID_NZ(g) ((g).nz)
#else
#define GRID_NZ(g) 1
#endif

// The halo buffers of a decomposed grid, one block of `halos` a side (x_lo, x_hi, y_lo, y_hi,
// z_lo, z_hi; all six in every dimension): the conserved variables of the two ghost layers
// beyond the side over its cross-section, [v][layer][c] with layer 0 next to the side and c
// the cell's index across the side ((k ny + j) for x sides, (k nx + i) for y, (j nx + i) for
// z), as solvers/fv/euler_halo.py packs them.
DEVICE void halo_sides(Grid& g, const real* halos)
{
    const int x = 2 * NVAR * g.ny * GRID_NZ(g), y = 2 * NVAR * g.nx * GRID_NZ(g);
    const int z = 2 * NVAR * g.nx * g.ny;
    g.halo_xlo = halos;
    g.halo_xhi = g.halo_xlo + x;
    g.halo_ylo = g.halo_xhi + x;
    g.halo_yhi = g.halo_ylo + y;
    g.halo_zlo = g.halo_yhi + y;
    g.halo_zhi = g.halo_zlo + z;
}

// Whether index i of an axis of n cells lies beyond a side of kind BC_HALO; if so, its ghost
// layer (0 next to the side) and the side's halo buffer.
DEVICE bool beyond_halo(int i, int n, int kind_lo, int kind_hi, const real* halo_lo,
                        const real* halo_hi, int& layer, const real*& halo)
{
    if (i < 0 && kind_lo == BC_HALO) {
        layer = -1 - i;
        halo = halo_lo;
        return true;
    }
    if (i >= n && kind_hi == BC_HALO) {
        layer = i - n;
        halo = halo_hi;
        return true;
    }
    return false;
}

// A ghost cell (i, j, k) beyond a side of kind BC_HALO: true and its state w (lab frame), read
// from the side's halo buffer, where the cell lies beyond that side only; a cell beyond two
// sides (an edge or corner, which no Runge-Kutta stage uses) gets a harmless state.
DEVICE bool halo_prim(const Grid& g, int i, int j, int k, Prim& w)
{
    const bool out_x = i < 0 || i >= g.nx, out_y = j < 0 || j >= g.ny;
    const bool out_z = k < 0 || k >= GRID_NZ(g);
    int layer = 0, c = 0, cross = 0;
    const real* halo = nullptr;
    if (beyond_halo(i, g.nx, g.bc_xlo, g.bc_xhi, g.halo_xlo, g.halo_xhi, layer, halo)) {
        c = k * g.ny + j;
        cross = g.ny * GRID_NZ(g);
    } else if (beyond_halo(j, g.ny, g.bc_ylo, g.bc_yhi, g.halo_ylo, g.halo_yhi, layer, halo)) {
        c = k * g.nx + i;
        cross = g.nx * GRID_NZ(g);
#if DIM == 3
    } else if (beyond_halo(k, g.nz, g.bc_zlo, g.bc_zhi, g.halo_zlo, g.halo_zhi, layer, halo)) {
        c = j * g.nx + i;
        cross = g.nx * g.ny;
#endif
    } else {
        return false;
    }
    if ((int)out_x + (int)out_y + (int)out_z > 1) {
        w = rest_prim();
        return true;
    }
    w = cell_prim(halo + layer * cross, 2 * cross, c, R(1), R(1), g.gamma);
    return true;
}
#endif

// g with its halo buffers, one block of `halos` a side (see halo_sides), in HALOS builds.
DEVICE Grid with_halos(Grid g, const real* halos)
{
#if HALOS
    halo_sides(g, halos);
#else
    (void)halos;
#endif
    return g;
}

// Index i along an axis of n cells, mapped through the boundary of the side it lies beyond
// (sides lo_side and lo_side + 1, of kinds kind_lo and kind_hi), if any: a wall sets flip to
// -1, and an inflow side is noted in inflow_side unless one already is.
DEVICE int through_side(int i, int n, int kind_lo, int kind_hi, int lo_side, int& inflow_side,
                        real& flip)
{
    if (i >= 0 && i < n) return i;
    const int kind = i < 0 ? kind_lo : kind_hi;
    if (kind == BC_INFLOW && inflow_side < 0) inflow_side = i < 0 ? lo_side : lo_side + 1;
    if (kind == BC_REFLECTIVE) flip = R(-1);
    return boundary_index(i, n, kind);
}

// Primitive state of cell (i, j, k) in the lab frame (un = vx, ut = vy, ut2 = vz). The cell
// may be a ghost cell: its index is mapped through the boundary of each side it lies beyond
// (an edge or corner cell through each of them in turn, x first; MUSCL-Hancock's predictor
// reads the corner cells next to the grid), and a wall mirrors the velocity normal to it;
// beyond an inflow side it takes that side's inflow state (the first such side's). Cells
// beyond a side's two ghost layers (only the far end of a partial strip) are never used; they
// get a harmless state.
DEVICE Prim lab_prim(const Grid& g, int i, int j, int k = 0)
{
    Prim w = Prim{};
#if DIM == 3
    const bool far_z = k < -2 || k >= g.nz + 2;
#else
    const bool far_z = false;
#endif
    if (far_z || i < -2 || i >= g.nx + 2 || j < -2 || j >= g.ny + 2) return rest_prim();
#if HALOS
    // Beyond a side between two blocks: the halo buffer's state.
    if (halo_prim(g, i, j, k, w)) return w;
#endif

    int inflow_side = -1;
    real flip_x = R(1), flip_y = R(1), flip_z = R(1);
    i = through_side(i, g.nx, g.bc_xlo, g.bc_xhi, 0, inflow_side, flip_x);
    j = through_side(j, g.ny, g.bc_ylo, g.bc_yhi, 2, inflow_side, flip_y);
#if DIM == 3
    k = through_side(k, g.nz, g.bc_zlo, g.bc_zhi, 4, inflow_side, flip_z);
#endif
    if (inflow_side >= 0) {
        const real* s = g.inflow + INFLOW_VARS * inflow_side;
        w.rho = s[0];
        w.un = s[1];
        w.ut = s[2];
#if DIM == 3
        w.ut2 = s[3];
#endif
        w.p = s[4];
        return w;
    }
    return cell_prim(g.u, grid_cells(g), (k * g.ny + j) * g.nx + i, flip_x, flip_y, g.gamma,
                     flip_z);
}

// A marching column moves up one row: its rows r - 1 and r become below and here, and row r + 1
// comes from the registers it was loaded into (rows of a strip inside the grid, r + 1 <
// stored_rows) or through lab_prim.
template <class Column>
DEVICE void column_moves_up(Column& c, const Grid& g, int i, int r, int k, int stored_rows)
{
    c.below = c.here;
    c.here = c.above;
    if (r + 1 < stored_rows) c.above = conserved_prim(c.next, R(1), R(1), g.gamma);
    else c.above = lab_prim(g, i, r + 1, k);
}

// Largest stable 1/dt of one cell from its conserved variables: (|vx| + c)/dx + (|vy| + c)/dy
// + (|vz| + c)/dz (the grid's axes only; mz and inv_dz in 3D). A non-finite or non-physical
// cell gives an infinite rate, which stops the run.
DEVICE real cell_rate(real rho, real mx, real my, real energy, real gamma, real inv_dx,
                      real inv_dy, real mz = R(0), real inv_dz = R(0))
{
    const real inv_rho = approx_recip(rho);
    const real vx = mx * inv_rho, vy = my * inv_rho;
#if DIM == 3
    const real vz = mz * inv_rho;
    const real v2 = sum_of_squares(vx, vy, vz);
#else
    (void)mz;
    (void)inv_dz;
    const real v2 = sum_of_squares(vx, vy);
#endif
    const real p = (gamma - R(1)) * (energy - R(0.5) * rho * v2);
    // Without a branch: a NaN anywhere fails the comparisons.
    const real a = approx_sqrt(gamma * p * inv_rho);
    real rate = (fabs(vx) + a) * inv_dx;
#if DIM >= 2
    rate += (fabs(vy) + a) * inv_dy;
#else
    (void)inv_dy;
#endif
#if DIM == 3
    rate += (fabs(vz) + a) * inv_dz;
#endif
    return rho > R(0) && p > R(0) && rate < REAL_INF ? rate : REAL_INF;
}
