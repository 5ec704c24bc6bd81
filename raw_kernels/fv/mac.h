// The staggered (MAC) layout of the incompressible solver's kernels (incompressible.cu,
// viscous.cu): boundary kinds, face indexing with G ghost layers, and the rules at the
// domain's boundary faces that both the momentum and the pressure stages follow.
//
//   u(i, j) = u[(i + G) + (j + G) * su], su = nx + 1 + 2G  (x faces, i = 0..nx, j = 0..ny-1)
//   v(i, j) = v[(i + G) + (j + G) * sv], sv = nx + 2G      (y faces, i = 0..nx-1, j = 0..ny)
#pragma once

#ifndef G
#error "G (ghost layers of u and v) must be defined"
#endif

#include "mac_lines.h"

struct Faces {
    int nx, ny, su, sv;
};

DEVICE int iu(const Faces& f, int i, int j) { return (i + G) + (j + G) * f.su; }
DEVICE int iv(const Faces& f, int i, int j) { return (i + G) + (j + G) * f.sv; }

// The packed face vector of the implicit viscous stage (viscous.cu): the u faces at
// i + (nx + 1) j, then the v faces at (nx + 1) ny + i + nx j, no ghosts.
DEVICE int packed_u(int nx, int i, int j) { return i + (nx + 1) * j; }
DEVICE int packed_v(int nx, int ny, int i, int j) { return (nx + 1) * ny + i + nx * j; }
