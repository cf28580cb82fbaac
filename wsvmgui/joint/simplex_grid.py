"""The interior grid on the weight simplex and its cells (METHODS section 4).

Grid points are ``pi = m / N`` with integer ``m``, every ``m_k >= 1`` and ``sum m_k = N``
(spacing ``d_pi = 1 / N``); there are ``C(N - 1, K - 1)`` of them (1176 for K = 3,
N = 50).  Cells of the direct scheme are the K mutually adjacent grid points
``{c + e_k}`` (up cells, ``sum c = N - 1``) and ``{c - e_k}`` (down cells,
``sum c = N + 1``).  The snake order lists the grid so that consecutive points are
neighbours (they differ by moving ``1 / N`` of weight between two classes), which is the
path along which fits are warm-started.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import comb

import numpy as np

from ..errors import InputError


def n_grid_points(K: int, N: int) -> int:
    """Number of interior grid points, ``C(N - 1, K - 1)``."""
    return comb(N - 1, K - 1) if N >= K else 0


def _compositions(total: int, parts: int, low: int, forward: bool = True) -> list[tuple[int, ...]]:
    """All tuples of ``parts`` integers ``>= low`` summing to ``total``, in snake order.

    The first entry runs through its range; the rest recurse, alternating direction, so
    consecutive tuples differ by +1/-1 in exactly two entries.
    """
    if parts == 1:
        return [(total,)] if total >= low else []
    out: list[tuple[int, ...]] = []
    firsts = range(low, total - low * (parts - 1) + 1)
    for j, m in enumerate(firsts):
        rest = _compositions(total - m, parts - 1, low, forward=(j % 2 == 0))
        out.extend((m, *r) for r in rest)
    return out if forward else out[::-1]


def check_resolution(K: int, N: int) -> None:
    """Raise InputError unless the grid has interior cells for every class (``N >= K + 1``)."""
    if int(N) != N:
        raise InputError(f"the grid size N = 1/d_pi must be an integer, got {N!r}")
    if N < K + 1:
        raise InputError(
            f"grid too coarse: N = 1/d_pi = {N} gives no interior cell for K = {K} classes; "
            f"use N >= {K + 1} (d_pi <= 1/{K + 1})"
        )


@dataclass(frozen=True)
class SimplexGrid:
    """The interior grid of spacing ``1 / N`` on the K-class weight simplex.

    Attributes
    ----------
    K : int
    N : int
    counts : ndarray of int, shape (G, K)
        Integer coordinates ``m`` (rows sum to N), in snake order.
    """

    K: int
    N: int
    counts: np.ndarray

    @classmethod
    def build(cls, K: int, N: int) -> SimplexGrid:
        """The grid for K classes and spacing ``1 / N`` (N >= K + 1)."""
        if K < 2:
            raise InputError(f"the weight simplex needs at least two classes, got K = {K}")
        check_resolution(K, N)
        counts = np.array(_compositions(int(N), int(K), 1), dtype=np.int64)
        return cls(int(K), int(N), counts)

    @property
    def weights(self) -> np.ndarray:
        """Grid weights ``m / N``; shape (G, K)."""
        return self.counts / self.N

    @property
    def size(self) -> int:
        """Number of grid points G."""
        return self.counts.shape[0]

    @cached_property
    def _index(self) -> dict[tuple[int, ...], int]:
        return {tuple(int(v) for v in m): g for g, m in enumerate(self.counts)}

    def index_of(self, m) -> int:
        """Grid index of the integer coordinates ``m`` (K,), or -1 when not on the grid."""
        return self._index.get(tuple(int(v) for v in m), -1)

    @cached_property
    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """All cells: vertex indices (n_cells, K), vertex ``k`` = base +- e_k, and centres.

        Returns
        -------
        vertices : ndarray of int, shape (n_cells, K)
            Grid indices; row ``c`` lists the cell's vertices, vertex ``k`` differing from
            the base in coordinate ``k``.  Up cells first, then down cells.
        centres : ndarray, shape (n_cells, K)
            Mean of each cell's vertex weights.
        """
        K, N = self.K, self.N
        rows, centres = [], []
        eye = np.eye(K, dtype=np.int64)
        for sign, total, low in ((+1, N - 1, 1), (-1, N + 1, 2)):
            for base in _compositions(total, K, low):
                b = np.array(base)
                idx = [self.index_of(b + sign * eye[k]) for k in range(K)]
                if min(idx) < 0:  # pragma: no cover - construction guarantees membership
                    continue
                rows.append(idx)
                centres.append((b + sign / K) / N)
        return np.array(rows, dtype=np.int64).reshape(-1, K), np.array(centres).reshape(-1, K)

    def neighbours(self, g: int) -> list[int]:
        """Indices of the grid points one step ``e_a - e_b`` away from point ``g``."""
        m = self.counts[g]
        out = []
        for a in range(self.K):
            for b in range(self.K):
                if a != b and m[b] > 1:
                    step = m.copy()
                    step[a] += 1
                    step[b] -= 1
                    j = self.index_of(step)
                    if j >= 0:
                        out.append(j)
        return out
