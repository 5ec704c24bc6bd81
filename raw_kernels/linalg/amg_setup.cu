// Smoothed-aggregation setup kernels on the strength graph of a level: the six launches of a
// Luby round of the distance-2 maximal independent set, the neighbourhood maximum that gathers
// a root's aggregate, the pass that joins the remaining nodes to the aggregate they are most
// strongly coupled to, the tentative prolongator (a thin QR of the near-nullspace per
// aggregate); and on level matrices the entry rows, the diagonal and the symmetry check of the
// fine matrix. Driven by solvers/linalg/aggregation.py, sparse_setup.py and amg_input.py,
// which load them with real = double.
//
// CSR throughout: int32 row_ptr and columns, sorted rows (the graph without its diagonal). One
// thread per node (per aggregate for the QR); each thread writes only its own outputs and reads
// inputs no other thread of the launch writes, so a launch gives the same result on every run
// and on both backends.
#include "prelude.h"

#define SETUP_ROW(n)                                               \
    const int row = (int)(blockIdx.x * blockDim.x + threadIdx.x); \
    if (row >= n) return

// rows[k] = the row of entry k of a CSR matrix with n rows.
KERNEL void amg_entry_rows(const int* __restrict__ row_ptr, int* __restrict__ rows, int n)
{
    SETUP_ROW(n);
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) rows[k] = row;
}

// out[i] = max(in[j]) over j = i and the neighbours of i.
KERNEL void amg_neighbour_max(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                              const int* __restrict__ in, int* __restrict__ out, int n)
{
    SETUP_ROW(n);
    int best = in[row];
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
        if (in[columns[k]] > best) best = in[columns[k]];
    out[row] = best;
}

// The states of a node in the Luby rounds (aggregation.py's UNDECIDED, ROOT, OUT).
#define AMG_UNDECIDED 0
#define AMG_ROOT 1
#define AMG_OUT 2
#define AMG_MAX_WALKS 1023

// Round, launch 1: once[i] = the number of undecided neighbours of i.
KERNEL void amg_luby_walks(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                           const int* __restrict__ state, int* __restrict__ once, int n)
{
    SETUP_ROW(n);
    int sum = 0;
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
        sum += state[columns[k]] == AMG_UNDECIDED;
    once[row] = sum;
}

// Launch 2: the priority of i, the fewest two-step walks to undecided nodes first (walks above
// AMG_MAX_WALKS tie), then the node's 21-bit hash.
KERNEL void amg_luby_priority(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                              const int* __restrict__ once, const int* __restrict__ hashes,
                              int* __restrict__ priority, int n)
{
    SETUP_ROW(n);
    int walks = 0;
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) walks += once[columns[k]];
    if (walks > AMG_MAX_WALKS) walks = AMG_MAX_WALKS;
    priority[row] = ((AMG_MAX_WALKS - walks) << 21) | hashes[row];
}

// The better of two candidates by (key, index); -1 is no candidate.
DEVICE int amg_better(const int* __restrict__ key, int best, int other)
{
    if (other >= 0 && (best < 0 || key[other] > key[best] ||
                       (key[other] == key[best] && other > best)))
        return other;
    return best;
}

// Launch 3: winner[i] = the best undecided node among i and its neighbours, or -1.
KERNEL void amg_luby_winner(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                            const int* __restrict__ priority, const int* __restrict__ state,
                            int* __restrict__ winner, int n)
{
    SETUP_ROW(n);
    int best = state[row] == AMG_UNDECIDED ? row : -1;
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) {
        const int other = columns[k];
        best = amg_better(priority, best, state[other] == AMG_UNDECIDED ? other : -1);
    }
    winner[row] = best;
}

// Launch 4: an undecided node that is the best of the winners of itself and its neighbours (the
// best undecided node within distance 2) becomes a root.
KERNEL void amg_luby_roots(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                           const int* __restrict__ priority, const int* __restrict__ winner,
                           int* __restrict__ state, int n)
{
    SETUP_ROW(n);
    int best = winner[row];
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
        best = amg_better(priority, best, winner[columns[k]]);
    if (state[row] == AMG_UNDECIDED && best == row) state[row] = AMG_ROOT;
}

// Launch 5: near[i] = 1 if i or a neighbour is a root.
KERNEL void amg_luby_near(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                          const int* __restrict__ state, int* __restrict__ near, int n)
{
    SETUP_ROW(n);
    int any = state[row] == AMG_ROOT;
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) any |= state[columns[k]] == AMG_ROOT;
    near[row] = any;
}

// Launch 6: an undecided node within distance 2 of a root leaves the contest.
KERNEL void amg_luby_out(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                         const int* __restrict__ near, int* __restrict__ state, int n)
{
    SETUP_ROW(n);
    if (state[row] != AMG_UNDECIDED) return;
    int any = near[row];
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) any |= near[columns[k]];
    if (any) state[row] = AMG_OUT;
}

// diag[i] = a_ii of a CSR matrix with sorted rows (0 where not stored), by binary search.
KERNEL void amg_diagonal(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                         const real* __restrict__ values, real* __restrict__ diag, int n)
{
    SETUP_ROW(n);
    int lo = row_ptr[row], hi = row_ptr[row + 1];
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (columns[mid] < row) lo = mid + 1;
        else hi = mid;
    }
    diag[row] = lo < row_ptr[row + 1] && columns[lo] == row ? values[lo] : R(0);
}

// gap[i] = max over the entries a_ij of row i of |a_ij - a_ji| (a_ji = 0 where not stored),
// a_ji found by binary search in the sorted row j: the symmetry check of the fine matrix.
KERNEL void amg_asymmetry(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                          const real* __restrict__ values, real* __restrict__ gap, int n)
{
    SETUP_ROW(n);
    real largest = R(0);
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) {
        const int j = columns[k];
        int lo = row_ptr[j], hi = row_ptr[j + 1];
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (columns[mid] < row) lo = mid + 1;
            else hi = mid;
        }
        const real mirror = lo < row_ptr[j + 1] && columns[lo] == row ? values[lo] : R(0);
        const real difference = fabs(values[k] - mirror);
        if (!(difference <= largest)) largest = difference;  // NaN sticks
    }
    gap[row] = largest;
}

// A node without an aggregate (aggregate < 0) joins the aggregate it is most strongly coupled
// to (the sum of its strengths to that aggregate's nodes; the first in column order among
// equals); isolated nodes and nodes with no aggregated neighbour keep -1.
KERNEL void amg_join_strongest(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                               const real* __restrict__ strength,
                               const int* __restrict__ aggregate, int* __restrict__ joined,
                               int n)
{
    SETUP_ROW(n);
    int chosen = aggregate[row];
    if (chosen < 0) {
        real strongest = R(0);
        for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) {
            const int target = aggregate[columns[k]];
            if (target < 0) continue;
            real coupling = R(0);
            for (int j = row_ptr[row]; j < row_ptr[row + 1]; ++j)
                if (aggregate[columns[j]] == target) coupling += strength[j];
            if (coupling > strongest) {
                strongest = coupling;
                chosen = target;
            }
        }
    }
    joined[row] = chosen;
}

// The tentative prolongator of aggregate a: its member dofs (members[member_ptr[a] ..
// member_ptr[a + 1]], ascending) hold rows of the near-nullspace B (n x k, row-major). Modified
// Gram-Schmidt, twice over, orthonormalises the columns: column c of the result goes to
// T's row of each member at t_values[t_row_ptr[dof] + c], and R (k x k, upper triangular) to
// coarse[(a k + r) k + c], so that B restricted to the aggregate = Q R. A column left with less
// than tol times its norm is dependent on the earlier ones: it becomes zero, as does R's
// diagonal entry, and the caller drops that coarse dof.
KERNEL void amg_tentative(const int* __restrict__ member_ptr, const int* __restrict__ members,
                          const real* __restrict__ candidates, const int* __restrict__ t_row_ptr,
                          real* __restrict__ t_values, real* __restrict__ coarse, int k,
                          real tol, int aggregates)
{
    SETUP_ROW(aggregates);
    const int first = member_ptr[row], last = member_ptr[row + 1];
    real* r = coarse + (long long)row * k * k;
    for (int c = 0; c < k * k; ++c) r[c] = R(0);
    for (int c = 0; c < k; ++c) {
        // Copy column c into T and take its norm.
        real norm2 = R(0);
        for (int m = first; m < last; ++m) {
            const real value = candidates[(long long)members[m] * k + c];
            t_values[t_row_ptr[members[m]] + c] = value;
            norm2 += value * value;
        }
        const real threshold = tol * sqrt(norm2);
        // Remove the components along the earlier columns, twice.
        for (int pass = 0; pass < 2; ++pass) {
            for (int p = 0; p < c; ++p) {
                real dot = R(0);
                for (int m = first; m < last; ++m) {
                    const int at = t_row_ptr[members[m]];
                    dot += t_values[at + p] * t_values[at + c];
                }
                for (int m = first; m < last; ++m) {
                    const int at = t_row_ptr[members[m]];
                    t_values[at + c] -= dot * t_values[at + p];
                }
                r[p * k + c] += dot;
            }
        }
        // Normalise what is left, or drop it.
        norm2 = R(0);
        for (int m = first; m < last; ++m) {
            const real value = t_values[t_row_ptr[members[m]] + c];
            norm2 += value * value;
        }
        const real norm = sqrt(norm2);
        const real scale = norm > threshold ? R(1) / norm : R(0);
        r[c * k + c] = norm > threshold ? norm : R(0);
        for (int m = first; m < last; ++m) t_values[t_row_ptr[members[m]] + c] *= scale;
    }
}
