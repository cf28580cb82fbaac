"""Binary sub-problems of the divide-and-conquer schemes, and their fitted ladders.

Every scheme reduces the K-class problem to binary weighted-SVM ladders (METHODS
section 5): pairs of classes (P-SVM, baseline learning) or one class against the rest
(One-vs-All).  Each sub-problem is a :class:`~wsvmgui.ladder.search.LadderProblem` on its
rows of the data, tuned on its own rows of the common tuning splits by the one ladder
search (Zeng section 6); :class:`SubproblemSet` predicts with all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ladder.engines import AnyLadder
from ..ladder.final import FittedLadder
from ..ladder.problems import LadderProblem
from ..ladder.rules import LadderEstimate
from ..ladder.tuning import TuningResult
from ..solvers.kernels import Kernel

#: Rows of new points per block when predicting (bounds memory to block x support).
PREDICT_BLOCK = 4096


@dataclass(frozen=True)
class SubProblem:
    """One binary sub-problem: class ``positive`` (+1) against the classes ``negative`` (-1).

    Attributes
    ----------
    positive : int
        Class index labelled +1.
    negative : tuple of int
        Class indices labelled -1.
    name : str
        Column stem, e.g. ``"b|a,b"`` (the ladder estimates ``q_{b|(a,b)}``) or ``"j|rest"``.
    """

    positive: int
    negative: tuple[int, ...]
    name: str

    @property
    def members(self) -> tuple[int, ...]:
        """All class indices taking part, sorted."""
        return tuple(sorted((self.positive, *self.negative)))

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Indices of the points (class indices ``codes`` (n,)) in this sub-problem."""
        return np.flatnonzero(np.isin(codes, self.members))

    def labels(self, codes: np.ndarray) -> np.ndarray:
        """+1 / -1 labels for member points' class indices ``codes`` (m,)."""
        return np.where(codes == self.positive, 1.0, -1.0)


def pair_problem(a: int, b: int, classes: np.ndarray) -> SubProblem:
    """Pair of class indices; the later class (in sorted order) is +1, as in the binary engine."""
    a, b = min(a, b), max(a, b)
    return SubProblem(b, (a,), f"{classes[b]}|{classes[a]},{classes[b]}")


def rest_problem(j: int, classes: np.ndarray) -> SubProblem:
    """Class index ``j`` (+1) against every other class (-1)."""
    K = len(classes)
    return SubProblem(j, tuple(k for k in range(K) if k != j), f"{classes[j]}|rest")


@dataclass(frozen=True)
class FittedSubProblem:
    """A tuned and fitted sub-problem.

    Attributes
    ----------
    spec : SubProblem
    ladder : PathLadder or Ladder
        Compressed path or grid ladder; its coefficients follow ``support``.
    support : ndarray of int, shape (s,)
        Rows of the data used by the ladder.
    kernel : Kernel
    lam, sigma : float
        Chosen penalty and RBF width (NaN for kernels without a width).
    weights : ndarray, shape (M - 1,)
    tuning : TuningResult or None
    n_train : float
        Points in the final fit (their summed sample weight when weighted).
    seconds : float
        Time spent on this sub-problem's fits (tuning and final), summed over threads.
    """

    spec: SubProblem
    ladder: AnyLadder
    support: np.ndarray
    kernel: Kernel
    lam: float
    sigma: float
    weights: np.ndarray
    tuning: TuningResult | None
    n_train: float
    seconds: float


def as_ladder_problem(
    spec: SubProblem, codes: np.ndarray, sample_weight: np.ndarray | None = None
) -> LadderProblem:
    """The ladder problem of ``spec`` over data with class indices ``codes`` (n,) (rows of
    zero ``sample_weight`` left out)."""
    rows = spec.rows(codes)
    if sample_weight is not None:
        rows = rows[sample_weight[rows] > 0]
    return LadderProblem(rows, spec.labels(codes[rows]), spec.name)


def fitted_subproblem(
    spec: SubProblem, fit: FittedLadder, weights: np.ndarray, tuning: TuningResult | None
) -> FittedSubProblem:
    """A :class:`FittedSubProblem` from the final ladder of the search's choice."""
    seconds = fit.seconds + (tuning.seconds if tuning is not None else 0.0)
    return FittedSubProblem(
        spec,
        fit.ladder,
        fit.support,
        fit.kernel,
        fit.lam,
        fit.sigma,
        weights,
        tuning,
        fit.n_train,
        seconds,
    )


class SubproblemSet:
    """Fitted sub-problems with the support points they share, for prediction.

    Parameters
    ----------
    fitted : list of FittedSubProblem
    X_fit : ndarray, shape (n_fit, p)
        Data of the final fits; only the rows some ladder uses are kept.
    """

    def __init__(self, fitted: list[FittedSubProblem], X_fit: np.ndarray) -> None:
        rows = np.unique(np.concatenate([f.support for f in fitted])) if fitted else np.array([])
        rows = rows.astype(int)
        self.fitted = fitted
        self.X_support = X_fit[rows]
        # Position of each sub-problem's support rows within X_support (sorted rows).
        self.positions = [np.searchsorted(rows, f.support) for f in fitted]
        groups: dict[Kernel, list[int]] = {}
        for i, f in enumerate(fitted):
            groups.setdefault(f.kernel, []).append(i)
        self.groups = groups

    def decisions(self, X: np.ndarray) -> list[np.ndarray]:
        """Decision values of every ladder at its weights; arrays of shape (n, M_s - 1)."""
        return [np.vstack(parts) for parts in self._per_ladder(X, lambda lad, K: lad.decision(K))]

    def estimates(self, X: np.ndarray, rule: str) -> list[LadderEstimate]:
        """Every ladder's estimate at ``X`` (n, p) by ``rule`` (grid-free for a path)."""
        out = []
        for parts in self._per_ladder(X, lambda lad, K: lad.estimate(K, rule)):
            out.append(
                LadderEstimate(
                    np.concatenate([e.p for e in parts]),
                    np.concatenate([e.lo for e in parts]),
                    np.concatenate([e.hi for e in parts]),
                    np.concatenate([e.monotone for e in parts]),
                )
            )
        return out

    def _per_ladder(self, X: np.ndarray, fn) -> list[list]:
        """``fn(ladder, K_block)`` of every ladder over blocks of rows of ``X``, in order.

        One cross kernel block per kernel and block of rows, shared by the ladders using
        that kernel (each takes its columns).
        """
        n = X.shape[0]
        out: list[list] = [[] for _ in self.fitted]
        for kern, members in self.groups.items():
            cols = np.unique(np.concatenate([self.positions[i] for i in members]))
            Xs = self.X_support[cols]
            local = [np.searchsorted(cols, self.positions[i]) for i in members]
            # A ladder's support may be all of Xs in another order: compare, not count.
            whole = [np.array_equal(loc, np.arange(cols.size)) for loc in local]
            for s in range(0, max(n, 1), PREDICT_BLOCK):
                Kc = kern(X[s : s + PREDICT_BLOCK], Xs)
                for i, loc, same in zip(members, local, whole, strict=True):
                    out[i].append(fn(self.fitted[i].ladder, Kc if same else Kc[:, loc]))
        return out
