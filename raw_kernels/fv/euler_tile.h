// What the tile kernels for small 2D grids (euler_tile.cu, euler_hancock_tile.cu) share: a
// block of TILE_X x TILE_Y threads, one cell each, and states in shared memory. Include after
// the scheme (euler_scheme.h or euler_hancock.h).
//
// Compile-time, from solvers/fv/euler.py: TILE_X and TILE_Y, the block shape.
#pragma once

#if DIM != 2
#error "the tile kernels are for 2D grids"
#endif
#ifndef TILE_X
#error "TILE_X (threads of a tile block along x) must be defined"
#endif
#ifndef TILE_Y
#error "TILE_Y (threads of a tile block along y) must be defined"
#endif
#define TILE_THREADS (TILE_X * TILE_Y)
#define TILE_BLOCKS_PER_SM (REAL_BITS == 32 ? 4 : 2)

// A primitive state in shared memory, aligned for one wide access.
struct alignas(4 * sizeof(real)) SharedPrim {
    Prim w;
};
