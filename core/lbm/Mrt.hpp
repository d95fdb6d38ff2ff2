#pragma once
// Multiple-relaxation-time collision: the non-equilibrium populations are projected on an
// orthogonal moment basis, each moment relaxed at its own rate, and projected back. The bases
// are polynomials in the velocity components, so they hold for our velocity ordering as written:
//   D2Q9  Lallemand & Luo, Phys. Rev. E 61, 6546 (2000)
//   D3Q19 d'Humieres, Ginzburg, Krafczyk, Lallemand & Luo, Phil. Trans. R. Soc. A 360, 437 (2002)
//   D3Q27 Suga, Kuwata, Takashima & Chikasue, Comput. Math. Appl. 69, 518 (2015): the
//         Gram-Schmidt-orthogonalised polynomial set, as reproduced by RAFSINE and lbmpy.
// The equilibrium moments are those of the second-order equilibrium (the BGK-equivalent set of
// d'Humieres 2002), so MRT with every rate 1/tau is BGK. Guo forcing in moment space
// (Guo & Zheng, Phys. Rev. E 77, 036707 (2008)): f* = f + F - M^-1 S M (f - f_eq + F/2).
// Rows are mutually orthogonal, so M^-1 = M^T diag(1/|row|^2).
#include <stdexcept>
#include <string>
#include <utility>

#include "common/Macros.hpp"
#include "lbm/Collision.hpp"
#include "lbm/Lattice.hpp"

namespace octoflow::lbm {

template <class L>
struct MrtBasis;

// The first basis row from which every row relaxes at one shared rate (L::Q where no rows do).
// Those rows need no moments of their own: projecting on them is the identity minus the
// projections on the rows before (relaxRows).
template <class L>
struct MrtSharedRate {
  static constexpr int firstRow = L::Q;
};

// The rate of the symmetric third-order moments that follows the shear rate s by the magic
// relation (1/s - 1/2)(1/s_q - 1/2) = 3/16, which keeps bounce-back walls half-way (as TRT).
OCTO_HD inline float mrtMagicRate(float shear) { return 8.0f * (2.0f - shear) / (8.0f - shear); }

template <>
struct MrtBasis<D2Q9> {
  OCTO_HD static constexpr int moment(int row, int q) {
    const int x = D2Q9::c(q, 0), y = D2Q9::c(q, 1), c2 = x * x + y * y;
    switch (row) {
      case 0: return 1;                                 // rho
      case 1: return -4 + 3 * c2;                       // e
      case 2: return (8 - 21 * c2 + 9 * c2 * c2) / 2;   // epsilon
      case 3: return x;                                 // jx
      case 4: return (-5 + 3 * c2) * x;                 // qx
      case 5: return y;                                 // jy
      case 6: return (-5 + 3 * c2) * y;                 // qy
      case 7: return x * x - y * y;                     // pxx
      default: return x * y;                            // pxy
    }
  }
  // Rates: e 1.64, epsilon 1.54 (Lallemand & Luo 2000); q by the magic relation (mrtMagicRate).
  static float rate(int row, float shear) {
    switch (row) {
      case 0: case 3: case 5: return 0.0f;
      case 1: return 1.64f;
      case 2: return 1.54f;
      case 4: case 6: return mrtMagicRate(shear);
      default: return shear;
    }
  }
};

template <>
struct MrtBasis<D3Q19> {
  OCTO_HD static constexpr int moment(int row, int q) {
    const int x = D3Q19::c(q, 0), y = D3Q19::c(q, 1), z = D3Q19::c(q, 2);
    const int c2 = x * x + y * y + z * z;
    switch (row) {
      case 0: return 1;                                      // rho
      case 1: return 19 * c2 - 30;                           // e
      case 2: return (21 * c2 * c2 - 53 * c2 + 24) / 2;      // epsilon
      case 3: return x;                                      // jx
      case 4: return (5 * c2 - 9) * x;                       // qx
      case 5: return y;                                      // jy
      case 6: return (5 * c2 - 9) * y;                       // qy
      case 7: return z;                                      // jz
      case 8: return (5 * c2 - 9) * z;                       // qz
      case 9: return 3 * x * x - c2;                         // 3 pxx
      case 10: return (3 * c2 - 5) * (3 * x * x - c2);       // 3 pixx
      case 11: return y * y - z * z;                         // pww
      case 12: return (3 * c2 - 5) * (y * y - z * z);        // piww
      case 13: return x * y;                                 // pxy
      case 14: return y * z;                                 // pyz
      case 15: return x * z;                                 // pxz
      case 16: return x * (y * y - z * z);                   // mx
      case 17: return y * (z * z - x * x);                   // my
      default: return z * (x * x - y * y);                   // mz
    }
  }
  // d'Humieres et al. 2002: s1 = 1.19, s2 = s10 = s12 = 1.4, s4 = s6 = s8 = 1.2, s16-18 = 1.98.
  static float rate(int row, float shear) {
    switch (row) {
      case 0: case 3: case 5: case 7: return 0.0f;
      case 1: return 1.19f;
      case 2: case 10: case 12: return 1.4f;
      case 4: case 6: case 8: return 1.2f;
      case 16: case 17: case 18: return 1.98f;
      default: return shear;  // 9, 11, 13, 14, 15
    }
  }
};

template <>
struct MrtBasis<D3Q27> {
  OCTO_HD static constexpr int moment(int row, int q) {
    const int x = D3Q27::c(q, 0), y = D3Q27::c(q, 1), z = D3Q27::c(q, 2);
    const int xx = x * x, yy = y * y, zz = z * z, c2 = xx + yy + zz;
    switch (row) {
      case 0: return 1;
      case 1: return x;
      case 2: return y;
      case 3: return z;
      case 4: return c2 - 2;                                           // bulk
      case 5: return 2 * xx - yy - zz;                                 // shear
      case 6: return yy - zz;
      case 7: return x * y;
      case 8: return y * z;
      case 9: return z * x;
      case 10: return x * (3 * yy + 3 * zz - 4);                        // third order
      case 11: return y * (3 * xx + 3 * zz - 4);
      case 12: return z * (3 * xx + 3 * yy - 4);
      case 13: return x * (3 * yy - 2) * (3 * zz - 2);                  // fifth order
      case 14: return y * (3 * xx - 2) * (3 * zz - 2);
      case 15: return z * (3 * xx - 2) * (3 * yy - 2);
      case 16: return 3 * (xx * yy + xx * zz + yy * zz) - 4 * c2 + 4;   // fourth order
      case 17: return (3 * xx - 2) * (3 * yy - 2) * (3 * zz - 2);       // sixth order
      case 18: return 3 * (xx * yy + xx * zz) - 6 * yy * zz - 4 * xx + 2 * yy + 2 * zz;
      case 19: return (3 * xx - 2) * (yy - zz);
      case 20: return x * y * (3 * zz - 2);
      case 21: return y * z * (3 * xx - 2);
      case 22: return x * z * (3 * yy - 2);
      case 23: return x * (yy - zz);
      case 24: return y * (zz - xx);
      case 25: return z * (xx - yy);
      default: return x * y * z;
    }
  }
  // Bulk 1.54 and the shear rate as Suga et al. 2015 (via RAFSINE); the symmetric third-order
  // moments by the magic relation. The published higher-order rates (1.83, 1.4, 1.61, 1.98,
  // 1.74 for rows 13-26) went unstable within 4,000 steps in a bounce-back duct
  // (tests/validation/PoiseuilleTest.cpp); those moments relax to equilibrium at rate 1 here.
  static float rate(int row, float shear) {
    if (row <= 3) return 0.0f;
    if (row == 4) return 1.54f;
    if (row <= 9) return shear;
    if (row <= 12) return mrtMagicRate(shear);
    return 1.0f;
  }
};
// Rows 13-26 (fourth order and up) share rate 1: 14 of the 23 relaxed rows, and the ones with the
// most non-zero entries, are never projected on.
template <>
struct MrtSharedRate<D3Q27> {
  static constexpr int firstRow = 13;
};

// Squared norm of a basis row (sum over the velocities of the row's values squared).
template <class L>
OCTO_HD constexpr int mrtRowNorm(int row) {
  int norm = 0;
  for (int q = 0; q < L::Q; ++q) norm += MrtBasis<L>::moment(row, q) * MrtBasis<L>::moment(row, q);
  return norm;
}

// Mass and momentum rows (the polynomials 1 and c_a) are conserved: never relaxed.
template <class L>
OCTO_HD constexpr bool mrtRowConserved(int row) {
  bool density = true, momentum[3] = {true, true, true};
  for (int q = 0; q < L::Q; ++q) {
    const int value = MrtBasis<L>::moment(row, q);
    density = density && value == 1;
    for (int a = 0; a < 3; ++a) momentum[a] = momentum[a] && value == L::c(q, a);
  }
  return density || momentum[0] || momentum[1] || momentum[2];
}

// +1 where a row takes equal values on every velocity and its opposite (a polynomial of even
// degree in c), -1 where opposite values (odd degree), 0 otherwise (no basis here has such a row).
template <class L>
OCTO_HD constexpr int mrtRowParity(int row) {
  bool even = true, odd = true;
  for (int q = 0; q < L::Q; ++q) {
    const int value = MrtBasis<L>::moment(row, q), opposite = MrtBasis<L>::moment(row, L::opposite(q));
    even = even && value == opposite;
    odd = odd && value == -opposite;
  }
  return even ? 1 : (odd ? -1 : 0);
}

// A row's moment of f - f_eq + F/2 does not change when a multiple of a conserved row (the row of
// ones, or c_a) is added to the row: those moments of f - f_eq + F/2 vanish (Mrt::relaxRows). The
// kernel takes each relaxed row's moment with the multiple that leaves it the fewest non-zero
// coefficients on the rest velocity and the pairs (q, q + 1): D3Q19's q_x (entries -4 on +-x, 1 on
// the diagonals) less c_x is -5 on +-x alone, e (-30, -11, 8) less 8 times the ones is -38 at rest
// and -19 on the axes. `axis` -1 adds the row of ones (even rows), 0..2 adds c_axis (odd rows).
struct MrtMomentShortcut {
  int multiple = 0;
  int axis = -1;
};

template <class L>
OCTO_HD constexpr int mrtShortcutCoefficient(int row, int q, const MrtMomentShortcut& shortcut) {
  return MrtBasis<L>::moment(row, q) + shortcut.multiple * (shortcut.axis < 0 ? 1 : L::c(q, shortcut.axis));
}

// Non-zero coefficients of a row with a shortcut, counting a pair once (its members' coefficients
// are equal or opposite: the row and the conserved row it takes have the same parity).
template <class L>
OCTO_HD constexpr int mrtShortcutTerms(int row, const MrtMomentShortcut& shortcut) {
  int terms = mrtShortcutCoefficient<L>(row, 0, shortcut) != 0 ? 1 : 0;
  for (int q = 1; q < L::Q; q += 2) terms += mrtShortcutCoefficient<L>(row, q, shortcut) != 0 ? 1 : 0;
  return terms;
}

// The shortcut with the fewest terms: each candidate zeroes one moving velocity's coefficient (one
// that zeroes the rest velocity's leaves no basis here fewer terms).
template <class L>
OCTO_HD constexpr MrtMomentShortcut mrtMomentShortcut(int row) {
  MrtMomentShortcut best;
  int fewest = mrtShortcutTerms<L>(row, best);
  const bool even = mrtRowParity<L>(row) > 0;
  for (int axis = even ? -1 : 0; axis < (even ? 0 : 3); ++axis)
    for (int q = 1; q < L::Q; ++q) {
      const int along = axis < 0 ? 1 : L::c(q, axis);
      if (along == 0) continue;
      const MrtMomentShortcut candidate{-MrtBasis<L>::moment(row, q) * along, axis};  // along is +-1
      const int terms = mrtShortcutTerms<L>(row, candidate);
      if (terms < fewest) {
        fewest = terms;
        best = candidate;
      }
    }
  return best;
}

// f - f_eq + F/2 of the pairs (q, q + 1) of opposite velocities (Lattice.hpp), as their sums and
// differences.
template <int Pairs>
struct MrtPairs {
  float sum[Pairs], difference[Pairs];
};

// The collision operator. The basis is compile-time data (MrtBasis): with the loops unrolled,
// every coefficient is an integer constant, zero terms vanish and +-1 terms cost an add, so the
// projections cost only the non-zero entries. The operator carries how each row's rate is set,
// indexed by basis row.
struct Mrt {
  static constexpr int kMaxQ = 27;
  enum RateKind : unsigned char { Conserved, Fixed, Shear, Magic };
  float tau = 1.0f;
  Les les;
  RateKind kind[kMaxQ] = {};  // Shear: 1/tau (with LES, the local tau); Magic: follows it
  // A row's rate over its squared norm (the factor of its moment in the back-projection) is
  // shearFactor * shear + magicFactor * magic + fixedFactor, one term non-zero by the row's kind:
  // two multiply-adds in a kernel where choosing by kind cost two compares and selects.
  // Rows before MrtSharedRate<L>::firstRow hold their rate minus the shared rate (below).
  float shearFactor[kMaxQ] = {}, magicFactor[kMaxQ] = {}, fixedFactor[kMaxQ] = {};
  // The rate of the rows from MrtSharedRate<L>::firstRow on, in the same form:
  // sharedShear * shear + sharedMagic * magic + sharedFixed (all zero where no rows share one).
  float sharedShear = 0.0f, sharedMagic = 0.0f, sharedFixed = 0.0f;
  // The rows' factors (and the shared rate) at the tau the operator was made with (rateTau), worked
  // out once: a node relaxing at it (no LES) skips two divisions and two multiply-adds a row.
  float rateTau = 1.0f, factorAtTau[kMaxQ] = {}, sharedRateAtTau = 0.0f;

  // `rates(row, shear)` gives every row's rate for a shear rate (MrtBasis<L>::rate's form).
  template <class L, class Rates>
  static Mrt withRates(float tau, Rates rates) {
    Mrt mrt;
    mrt.tau = tau;
    mrt.rateTau = tau;
    for (int row = 0; row < L::Q; ++row) {
      if (mrtRowConserved<L>(row)) continue;
      // A row's rate is the shear rate, follows it (the magic relation) or is fixed.
      const float atOne = rates(row, 1.0f), atOneAndHalf = rates(row, 1.5f);
      mrt.kind[row] = atOne == 1.0f && atOneAndHalf == 1.5f ? Shear : (atOne != atOneAndHalf ? Magic : Fixed);
    }
    constexpr int firstShared = MrtSharedRate<L>::firstRow;
    if constexpr (firstShared < L::Q) {
      const float sharedRate = rates(firstShared, 1.0f / tau);
      for (int row = firstShared + 1; row < L::Q; ++row)
        if (mrt.kind[row] != mrt.kind[firstShared] || rates(row, 1.0f / tau) != sharedRate)
          throw std::invalid_argument(std::string("MRT rates: rows ") + std::to_string(firstShared) + " to " +
                                      std::to_string(L::Q - 1) + " of the " + L::name() +
                                      " basis must relax at one rate (MrtSharedRate)");
      mrt.sharedShear = mrt.kind[firstShared] == Shear ? 1.0f : 0.0f;
      mrt.sharedMagic = mrt.kind[firstShared] == Magic ? 1.0f : 0.0f;
      mrt.sharedFixed = mrt.kind[firstShared] == Fixed ? sharedRate : 0.0f;
    }
    for (int row = 0; row < firstShared; ++row) {
      if (mrtRowConserved<L>(row)) continue;
      const float inverseNorm = 1.0f / static_cast<float>(mrtRowNorm<L>(row));
      mrt.shearFactor[row] = ((mrt.kind[row] == Shear ? 1.0f : 0.0f) - mrt.sharedShear) * inverseNorm;
      mrt.magicFactor[row] = ((mrt.kind[row] == Magic ? 1.0f : 0.0f) - mrt.sharedMagic) * inverseNorm;
      mrt.fixedFactor[row] = ((mrt.kind[row] == Fixed ? rates(row, 1.0f / tau) : 0.0f) - mrt.sharedFixed) * inverseNorm;
    }
    const float shear = 1.0f / tau, magic = mrtMagicRate(shear);
    for (int row = 0; row < L::Q; ++row) mrt.factorAtTau[row] = mrt.rowFactor(row, shear, magic);
    mrt.sharedRateAtTau = mrt.sharedRate(shear, magic);
    return mrt;
  }
  // The published rates for lattice L with the shear rate 1/tau.
  template <class L>
  static Mrt forLattice(float tau) {
    return withRates<L>(tau, [](int row, float shear) { return MrtBasis<L>::rate(row, shear); });
  }

  template <class L, bool Forced = true, class Scale = Unscaled>
  OCTO_HD OCTO_INLINE NodeState collide(float (&g)[L::Q], const Vector3& acceleration,
                                        const VelocityGradient* gradient = nullptr) const {
    return collideAt<L, Forced, Scale>(tau, g, acceleration, gradient);
  }

  // Bgk::collideAt: the shear rows relax with 1/molecularTau, the magic rows follow, fixed rows keep
  // their rates.
  template <class L, bool Forced = true, class Scale = Unscaled>
  OCTO_HD OCTO_INLINE NodeState collideAt(float molecularTau, float (&g)[L::Q], const Vector3& acceleration,
                                          const VelocityGradient* gradient = nullptr) const {
    const NodeState node = nodeState<L, Scale>(g, acceleration, molecularTau, les, gradient);
    const float rho = node.rho;
    const Vector3 u = node.u;
    // f - f_eq + F/2 by pairs (q, q + 1) of opposite velocities: their sum and difference, straight
    // from the pair's sum and difference of g (the same terms moments() formed) less twice the
    // pair's even and odd equilibrium parts (Equilibrium); the rest velocity apart.
    const Equilibrium<L, Scale> twice(rho, u, 2.0f);
    constexpr int kPairs = (L::Q - 1) / 2;
    MrtPairs<kPairs> pairs;
    float restShifted = g[0] - 0.5f * twice.even(0, 0.0f);
    if constexpr (Forced) {
      const float source = guoSource<L, Scale>(0, rho, u, acceleration);
      restShifted += 0.5f * source;
      g[0] += source;
    }
    OCTO_UNROLL
    for (int p = 0; p < kPairs; ++p) {
      const int q = 2 * p + 1;
      const float cu = velocityDot<L>(q, u);
      pairs.sum[p] = (g[q] + g[q + 1]) - twice.even(q, cu);
      pairs.difference[p] = (g[q] - g[q + 1]) - twice.odd(q, cu);
      if constexpr (Forced) {
        const float source = guoSource<L, Scale>(q, rho, u, acceleration);
        const float opposite = guoSource<L, Scale>(q + 1, rho, u, acceleration);
        pairs.sum[p] += 0.5f * (source + opposite);
        pairs.difference[p] += 0.5f * (source - opposite);
        g[q] += source;
        g[q + 1] += opposite;
      }
    }
    // Two copies of the relaxation: at rateTau with the factors worked out once (constant operands,
    // no registers), elsewhere from the node's rate.
    if (node.tau == rateTau) {
      relaxRows<L, true>(g, restShifted, pairs, 0.0f, 0.0f, std::make_integer_sequence<int, L::Q>{});
    } else {
      const float shear = 1.0f / node.tau;
      relaxRows<L, false>(g, restShifted, pairs, shear, mrtMagicRate(shear), std::make_integer_sequence<int, L::Q>{});
    }
    return node;
  }

  // Bgk::nonEquilibriumScale row by row, applied to the non-equilibrium populations: a row's
  // non-equilibrium moment scales by dtRatio s_source / s_target with its own rates (rows of fixed
  // rate by dtRatio alone). Returns the shear rows' factor, which the conserved rows (the first
  // moment) take too.
  template <class L>
  OCTO_HD OCTO_INLINE float rescaleNonEquilibrium(float (&nonEquilibrium)[L::Q], float dtRatio, float sourceTau,
                                                  float targetTau) const {
    const float shearScale = Bgk::nonEquilibriumScale(dtRatio, sourceTau, targetTau);
    const float magicScale = dtRatio * mrtMagicRate(1.0f / sourceTau) / mrtMagicRate(1.0f / targetTau);
    float original[L::Q];
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      original[q] = nonEquilibrium[q];
      nonEquilibrium[q] *= shearScale;
    }
    const float rowExtra[2] = {dtRatio - shearScale, magicScale - shearScale};  // Fixed, Magic rows
    rescaleRows<L>(nonEquilibrium, original, rowExtra, std::make_integer_sequence<int, L::Q>{});
    return shearScale;
  }

private:
  // nonEquilibrium += M^T diag(extra / |row|^2) M original over the rows that do not follow the
  // shear rate (the rows are orthogonal: the rest of the projection is shearScale original).
  template <class L, int... Rows>
  OCTO_HD OCTO_INLINE void rescaleRows(float (&nonEquilibrium)[L::Q], const float (&original)[L::Q],
                                       const float (&rowExtra)[2], std::integer_sequence<int, Rows...>) const {
    (rescaleRow<L, Rows>(nonEquilibrium, original, rowExtra), ...);
  }
  template <class L, int Row>
  OCTO_HD OCTO_INLINE void rescaleRow(float (&nonEquilibrium)[L::Q], const float (&original)[L::Q],
                                      const float (&rowExtra)[2]) const {
    if constexpr (!mrtRowConserved<L>(Row)) {
      if (kind[Row] == Shear) return;
      const float extra = rowExtra[kind[Row] == Fixed ? 0 : 1] / static_cast<float>(mrtRowNorm<L>(Row));
      float m = 0.0f;
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) {
        const int coefficient = MrtBasis<L>::moment(Row, q);
        if (coefficient != 0) m += static_cast<float>(coefficient) * original[q];
      }
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) {
        const int coefficient = MrtBasis<L>::moment(Row, q);
        if (coefficient != 0) nonEquilibrium[q] += static_cast<float>(coefficient) * extra * m;
      }
    }
  }

  // A row's factor, and the shared rate, for the shear and magic rates given.
  OCTO_HD OCTO_INLINE float rowFactor(int row, float shear, float magic) const {
    return shearFactor[row] * shear + (magicFactor[row] * magic + fixedFactor[row]);
  }
  OCTO_HD OCTO_INLINE float sharedRate(float shear, float magic) const {
    return sharedShear * shear + (sharedMagic * magic + sharedFixed);
  }

  // g -= M^T diag(s / |row|^2) M shifted (shifted = f - f_eq + F/2, given as the rest velocity's
  // value and the pairs'), a row at a time; the row is a template argument so its norm, parity and
  // whether it is conserved are constants, and the coefficients fold once q unrolls. Every row is a
  // polynomial of even or odd degree in c (mrtRowParity), so it takes equal values on a velocity
  // and its opposite, or opposite values: a row's moment needs only the sums (even rows) or
  // differences (odd rows) of the pairs (q, q + 1) of `shifted`, and its
  // back-projection is the same on both members of a pair (even rows) or of opposite sign (odd
  // rows). Each way that is half the terms of the full projection.
  // Rows sharing one rate s (MrtSharedRate) are never projected on: the rows are orthogonal and
  // span the space, so their projections add up to the identity minus those of the other rows,
  // and M^T S M = s I + sum over the other rows of (s_row - s) row row^T / |row|^2 (the factors
  // hold s_row - s). The conserved rows' moments of `shifted` vanish (the equilibrium has the
  // node's density and velocity, and the half force makes up for the Guo source's momentum), so
  // those rows need no term (for D3Q27 that is 9 rows projected each way instead of 23), and a
  // row's moment may take a multiple of them (MrtMomentShortcut: D3Q19's forward projection has
  // 50 pair and rest terms instead of 83).
  // AtTau: the node relaxes at rateTau (shear and magic unused).
  template <class L, bool AtTau, int... Rows>
  OCTO_HD OCTO_INLINE void relaxRows(float (&g)[L::Q], float restShifted, const MrtPairs<(L::Q - 1) / 2>& pairs,
                                     float shear, float magic, std::integer_sequence<int, Rows...>) const {
    constexpr int kPairs = (L::Q - 1) / 2;
    // The rows sharing one rate s take s shifted from every population at once (half the pair's
    // sum and difference each way), before the other rows' accumulators are live: started with
    // it, they held 26 more values through the projections, and D3Q27 spilled at 64 registers.
    if constexpr (MrtSharedRate<L>::firstRow < L::Q) {
      const float shared = AtTau ? sharedRateAtTau : sharedRate(shear, magic);
      const float halfShared = 0.5f * shared;
      g[0] -= shared * restShifted;
      OCTO_UNROLL
      for (int p = 0; p < kPairs; ++p) {
        g[2 * p + 1] -= halfShared * (pairs.sum[p] + pairs.difference[p]);
        g[2 * p + 2] -= halfShared * (pairs.sum[p] - pairs.difference[p]);
      }
    }
    // What each member of a pair loses: symmetric + antisymmetric, and symmetric - antisymmetric for
    // its opposite. The accumulators start at -0: x + -0 is x for every x, so the first term costs
    // no add.
    float rest = -0.0f, symmetric[kPairs], antisymmetric[kPairs];
    OCTO_UNROLL
    for (int p = 0; p < kPairs; ++p) symmetric[p] = antisymmetric[p] = -0.0f;
    // Odd rows first: the pairs' differences are dead before the even rows' accumulators fill.
    (relaxRow<L, AtTau, -1, Rows>(restShifted, pairs, shear, magic, rest, symmetric, antisymmetric), ...);
    (relaxRow<L, AtTau, 1, Rows>(restShifted, pairs, shear, magic, rest, symmetric, antisymmetric), ...);
    g[0] -= rest;
    OCTO_UNROLL
    for (int p = 0; p < kPairs; ++p) {
      g[2 * p + 1] -= symmetric[p] + antisymmetric[p];
      g[2 * p + 2] -= symmetric[p] - antisymmetric[p];
    }
  }
  template <class L, bool AtTau, int Parity, int Row, int Pairs>
  OCTO_HD OCTO_INLINE void relaxRow(float restShifted, const MrtPairs<Pairs>& pairs, float shear, float magic,
                                    float& rest, float (&symmetric)[Pairs], float (&antisymmetric)[Pairs]) const {
    static_assert(mrtRowParity<L>(Row) != 0, "an MRT basis row is a polynomial of even or odd degree in c");
    if constexpr (!mrtRowConserved<L>(Row) && Row < MrtSharedRate<L>::firstRow && mrtRowParity<L>(Row) == Parity) {
      constexpr int parity = Parity;
      constexpr MrtMomentShortcut shortcut = mrtMomentShortcut<L>(Row);
      constexpr int restShortcut = mrtShortcutCoefficient<L>(Row, 0, shortcut);
      float m = -0.0f;
      if (restShortcut != 0) m += static_cast<float>(restShortcut) * restShifted;
      OCTO_UNROLL
      for (int p = 0; p < Pairs; ++p) {
        const int coefficient = mrtShortcutCoefficient<L>(Row, 2 * p + 1, shortcut);
        if (coefficient != 0) m += static_cast<float>(coefficient) * (parity > 0 ? pairs.sum[p] : pairs.difference[p]);
      }
      constexpr int restCoefficient = MrtBasis<L>::moment(Row, 0);
      const float relaxed = (AtTau ? factorAtTau[Row] : rowFactor(Row, shear, magic)) * m;
      if (restCoefficient != 0) rest += static_cast<float>(restCoefficient) * relaxed;
      OCTO_UNROLL
      for (int p = 0; p < Pairs; ++p) {
        const int coefficient = MrtBasis<L>::moment(Row, 2 * p + 1);
        if (coefficient == 0) continue;
        if (parity > 0)
          symmetric[p] += static_cast<float>(coefficient) * relaxed;
        else
          antisymmetric[p] += static_cast<float>(coefficient) * relaxed;
      }
    }
  }
};

}  // namespace octoflow::lbm
