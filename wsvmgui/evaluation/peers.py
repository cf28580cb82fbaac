"""The calibrated SVMs a statistician already has, searched as issue 23 states them.

Four SVM-based probability estimators, all from one RBF ``SVC`` per (C, gamma) and one
set of inner cross-validated decision values, so that a search over the same grid costs
the SVC fits once for all of them:

``platt``
    libsvm's ``SVC(probability=True)`` (deprecated in scikit-learn 1.9): one Platt
    sigmoid per pair of classes on the pair's cross-validated one-vs-one decision values
    (libsvm's smoothed targets), coupled by Wu, Lin & Weng's method 2.  libsvm draws its
    inner folds per pair; here the pairs share one stratified split of all rows.
``sigmoid``, ``isotonic``
    ``CalibratedClassifierCV(SVC(C, gamma), method=..., cv=5, ensemble=False)`` exactly:
    one calibrator per class on the cross-validated one-vs-rest decision values (one for
    two classes), rows normalised (tests/test_peers.py checks equality).
``venn_abers``
    Cross Venn-ABERS (Vovk, Petej & Fedorova 2015) around the SVC at the cell the
    ``sigmoid`` search chose: on each inner fold an inductive Venn-ABERS predictor
    (:class:`VennAbers`) is calibrated on that fold's scores by the SVC fitted on the
    other folds, and the folds' pairs ``(p0, p1)`` are merged by
    ``p = GM(p1) / (GM(1 - p0) + GM(p1))``; K > 2 classes one-vs-rest, normalised.

The search (:func:`search_svm_peers`): every cell of ``C`` x ``gamma = g / p`` is scored by
the log loss of each method on stratified ``outer``-fold cross-validation (the inner
5-fold decision values refitted inside every outer training part), as
``GridSearchCV(..., scoring="neg_log_loss", cv=outer)`` would; the best cell of each
method is refitted on all rows.  Grid edges hit by a choice are reported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression, isotonic_regression
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from .._sklearn_compat import SigmoidCalibration
from ..errors import InputError
from .baselines import _couple_pairwise, _platt_sigmoid

#: C grid of every SVM peer (issue 23).
PEER_C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: gamma = g / p for these g (p: number of features, on standardised features).
PEER_G_GRID = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: The SVM-based peers.
SVM_PEERS = ("platt", "sigmoid", "isotonic", "venn_abers")
#: Methods scored in the search (Venn-ABERS takes the sigmoid's cell).
_SEARCHED = ("platt", "sigmoid", "isotonic")
#: Probabilities are kept in [PROBA_EPS, 1 - PROBA_EPS] before logs are taken in the search.
PROBA_EPS = 1e-15


# --------------------------------------------------------------------------- Venn-ABERS
class VennAbers:
    """Inductive Venn-ABERS predictor on one set of calibration scores.

    For a test score ``s``, ``p0`` (``p1``) is the value at ``s`` of the isotonic
    regression of the calibration labels on their scores with ``(s, 0)`` (``(s, 1)``)
    added; ``p0 <= p1``, and one of them is a calibrated probability (Vovk & Petej 2014).
    Exact: each distinct insertion position (between or on the distinct calibration
    scores) is solved once by a weighted pool-adjacent-violators fit.

    Parameters
    ----------
    scores : ndarray, shape (n,)
        Calibration scores (larger: more likely positive).
    y : ndarray of bool or {0, 1}, shape (n,)
    """

    def __init__(self, scores: np.ndarray, y: np.ndarray) -> None:
        s = np.asarray(scores, dtype=float).ravel()
        t = np.asarray(y, dtype=float).ravel()
        if s.size != t.size or s.size == 0:
            raise InputError("Venn-ABERS needs as many labels as calibration scores, at least one")
        if not np.all(np.isfinite(s)):
            raise InputError("Venn-ABERS calibration scores must be finite")
        self.u, inverse, self.w = np.unique(s, return_inverse=True, return_counts=True)
        self.sum_y = np.bincount(inverse, weights=t, minlength=self.u.size)

    def _at(self, pos: int, on: bool, label: float) -> float:
        """Isotonic fit at the test point: inserted at ``pos`` (or onto group ``pos``)."""
        if on:
            w = self.w.astype(float)
            sy = self.sum_y.copy()
            w[pos] += 1.0
            sy[pos] += label
            k = pos
        else:
            w = np.insert(self.w.astype(float), pos, 1.0)
            sy = np.insert(self.sum_y, pos, label)
            k = pos
        fit = isotonic_regression(sy / w, sample_weight=w, increasing=True)
        return float(fit[k])

    def predict_interval(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(p0, p1)`` for test scores; two arrays of shape (m,), ``p0 <= p1``."""
        s = np.asarray(scores, dtype=float).ravel()
        pos = np.searchsorted(self.u, s)
        on = (pos < self.u.size) & (self.u[np.minimum(pos, self.u.size - 1)] == s)
        key = pos * 2 + on  # distinct insertion positions
        p0 = np.empty(s.size)
        p1 = np.empty(s.size)
        for k in np.unique(key):
            rows = key == k
            p_, o_ = int(k // 2), bool(k % 2)
            p0[rows] = self._at(p_, o_, 0.0)
            p1[rows] = self._at(p_, o_, 1.0)
        return p0, p1

    def predict(self, scores: np.ndarray) -> np.ndarray:
        """Merged probability ``p1 / (1 - p0 + p1)`` (shape (m,))."""
        p0, p1 = self.predict_interval(scores)
        return p1 / (1.0 - p0 + p1)


def merge_venn_abers(p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """Cross Venn-ABERS merge of several predictors' pairs (Vovk et al. 2015, eq. 13).

    Parameters
    ----------
    p0, p1 : ndarray, shape (k, m)
        The pairs of ``k`` inductive predictors at ``m`` points.

    Returns
    -------
    ndarray, shape (m,)
        ``GM(p1) / (GM(1 - p0) + GM(p1))``, GM the geometric mean over the predictors.
    """
    with np.errstate(divide="ignore"):
        g1 = np.exp(np.mean(np.log(np.asarray(p1, dtype=float)), axis=0))
        g0 = np.exp(np.mean(np.log(1.0 - np.asarray(p0, dtype=float)), axis=0))
    return g1 / (g0 + g1)


# --------------------------------------------------------------------- one (C, gamma)
def _ovr(svc: SVC, X: np.ndarray) -> np.ndarray:
    """One-vs-rest decision values of a fitted SVC; shape (m, K) (binary: (m, 1))."""
    d = svc.decision_function(X)
    return d.reshape(-1, 1) if d.ndim == 1 else d


def _ovo(svc: SVC, X: np.ndarray) -> np.ndarray:
    """One-vs-one decision values (pairs (0, 1), (0, 2), ..., positive: the first); (m, P)."""
    if svc.classes_.size == 2:
        return -svc.decision_function(X).reshape(-1, 1)  # positive: classes_[1]
    shape = svc.decision_function_shape
    svc.decision_function_shape = "ovo"
    try:
        return svc.decision_function(X)
    finally:
        svc.decision_function_shape = shape


@dataclass
class CalibratedSVC:
    """One SVC with every peer's calibration, fitted on ``(X, codes)`` at one (C, gamma).

    Attributes
    ----------
    K : int
        Number of classes.
    svc : SVC
        Fitted on all rows.
    inner : list of (SVC, ndarray)
        The inner folds' SVCs and their held-out rows.
    calibrators : dict
        ``"platt"``: list of (a, b, A, B) per pair; ``"sigmoid"``/``"isotonic"``: one
        calibrator per one-vs-rest column.
    venn : list of list of VennAbers
        Per inner fold, one predictor per one-vs-rest column.
    """

    K: int
    svc: SVC
    inner: list
    calibrators: dict
    venn: list = field(default_factory=list)

    def predict_proba(self, method: str, X: np.ndarray) -> np.ndarray:
        """Class probabilities of ``method`` at ``X`` (m, p); shape (m, K)."""
        if method == "venn_abers":
            return self._venn(X)
        if method == "platt":
            d = _ovo(self.svc, X)
            R = np.full((X.shape[0], self.K, self.K), 0.5)
            for col, (a, b, A, B) in enumerate(self.calibrators["platt"]):
                r = np.clip(expit(-(A * d[:, col] + B)), 1e-7, 1 - 1e-7)
                R[:, a, b], R[:, b, a] = r, 1.0 - r
            if self.K == 2:
                return np.column_stack([R[:, 0, 1], R[:, 1, 0]])
            return _couple_pairwise(R)
        d = _ovr(self.svc, X)
        cols = [c.predict(d[:, j]) for j, c in enumerate(self.calibrators[method])]
        return _normalise(np.column_stack(cols), self.K)

    def _venn(self, X: np.ndarray) -> np.ndarray:
        if not self.venn:
            raise InputError("Venn-ABERS was not fitted for this cell")
        cols = []
        n_cols = 1 if self.K == 2 else self.K
        d = [_ovr(s, X) for s, _ in self.inner]
        for j in range(n_cols):
            pairs = [self.venn[f][j].predict_interval(d[f][:, j]) for f in range(len(d))]
            cols.append(
                merge_venn_abers(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
            )
        return _normalise(np.column_stack(cols), self.K)


def _normalise(P: np.ndarray, K: int) -> np.ndarray:
    """CalibratedClassifierCV's normalisation of one-vs-rest columns; shape (m, K)."""
    if K == 2:
        p1 = P[:, 0]
        return np.column_stack([1.0 - p1, p1])
    den = P.sum(axis=1, keepdims=True)
    out = np.where(den == 0, 1.0 / K, P / np.where(den == 0, 1.0, den))
    out[(out > 1.0) & (out <= 1.0 + 1e-5)] = 1.0
    return out


def fit_calibrated_svc(
    X: np.ndarray,
    codes: np.ndarray,
    C: float,
    gamma: float,
    *,
    n_inner: int = 5,
    methods: tuple[str, ...] = _SEARCHED,
    venn: bool = False,
) -> CalibratedSVC:
    """Fit the SVC at (C, gamma) on ``X`` (n, p), class indices ``codes`` (n,), and calibrate.

    The inner folds are ``StratifiedKFold(n_inner)`` without shuffling, as
    ``CalibratedClassifierCV(cv=n_inner)`` draws them.
    """
    K = int(codes.max()) + 1
    cv = StratifiedKFold(n_inner)
    n = codes.size
    ovr = np.zeros((n, 1 if K == 2 else K))
    ovo = np.zeros((n, K * (K - 1) // 2))
    inner = []
    for tr, te in cv.split(X, codes):
        s = SVC(C=C, gamma=gamma, kernel="rbf").fit(X[tr], codes[tr])
        if np.unique(codes[tr]).size < K:
            raise InputError("an inner calibration fold misses a class")
        ovr[te] = _ovr(s, X[te])
        ovo[te] = _ovo(s, X[te])
        inner.append((s, te))
    svc = SVC(C=C, gamma=gamma, kernel="rbf").fit(X, codes)
    cal: dict = {}
    if "platt" in methods:
        cal["platt"] = []
        for col, (a, b) in enumerate(itertools.combinations(range(K), 2)):
            rows = (codes == a) | (codes == b)
            A, B = _platt_sigmoid(ovo[rows, col], codes[rows] == a)
            cal["platt"].append((a, b, A, B))
    Y = np.eye(K)[codes][:, 1:] if K == 2 else np.eye(K)[codes]
    for method in ("sigmoid", "isotonic"):
        if method in methods:
            cal[method] = [
                (
                    IsotonicRegression(out_of_bounds="clip")
                    if method == "isotonic"
                    else SigmoidCalibration()
                ).fit(ovr[:, j], Y[:, j])
                for j in range(ovr.shape[1])
            ]
    ivap = []
    if venn:
        for _, te in inner:
            ivap.append([VennAbers(ovr[te, j], Y[te, j]) for j in range(ovr.shape[1])])
    return CalibratedSVC(K, svc, inner, cal, ivap)


# ----------------------------------------------------------------------------- search
@dataclass
class PeerSearch:
    """Log loss of every cell for every searched method, and the choices.

    Attributes
    ----------
    C, g : ndarray, shapes (7,)
        The grids (gamma = g / p).
    loss : dict of str -> ndarray, shape (len(C), len(g))
        Mean outer-fold log loss (inf where a cell failed).
    best : dict of str -> (C, gamma)
    edges : dict of str -> list of str
        Which grid edges each choice sits on (``"C min"``, ``"C max"``, ``"g min"``, ``"g max"``).
    """

    C: np.ndarray
    g: np.ndarray
    p: int
    loss: dict
    best: dict
    edges: dict


def search_svm_peers(
    X: np.ndarray,
    codes: np.ndarray,
    *,
    C_grid=PEER_C_GRID,
    g_grid=PEER_G_GRID,
    outer: int = 3,
    seed: int = 0,
) -> PeerSearch:
    """Score every (C, g) cell by each searched method's outer-fold log loss.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Standardised features.
    codes : ndarray of int, shape (n,)
        Class indices 0 .. K-1.
    C_grid, g_grid : sequences
        ``gamma = g / p``.
    outer : int
        Stratified folds of the search (shuffled with ``seed``).
    seed : int

    Returns
    -------
    PeerSearch
    """
    C_grid = np.asarray(C_grid, dtype=float)
    g_grid = np.asarray(g_grid, dtype=float)
    p = X.shape[1]
    K = int(codes.max()) + 1
    folds = list(StratifiedKFold(outer, shuffle=True, random_state=seed).split(X, codes))
    loss = {m: np.zeros((C_grid.size, g_grid.size)) for m in _SEARCHED}
    for (i, C), (j, g) in itertools.product(enumerate(C_grid), enumerate(g_grid)):
        for tr, te in folds:
            try:
                cal = fit_calibrated_svc(X[tr], codes[tr], C, g / p)
            except (InputError, ValueError):
                for m in _SEARCHED:
                    loss[m][i, j] = np.inf
                continue
            for m in _SEARCHED:
                P = np.clip(cal.predict_proba(m, X[te]), PROBA_EPS, 1 - PROBA_EPS)
                loss[m][i, j] += log_loss(codes[te], P, labels=np.arange(K)) / outer
    best, edges = {}, {}
    for m in _SEARCHED:
        i, j = map(int, np.unravel_index(int(np.argmin(loss[m])), loss[m].shape))
        best[m] = (float(C_grid[i]), float(g_grid[j] / p))
        edges[m] = grid_edges(i, j, C_grid.size, g_grid.size)
    best["venn_abers"], edges["venn_abers"] = best["sigmoid"], edges["sigmoid"]
    return PeerSearch(C_grid, g_grid, p, loss, best, edges)


def grid_edges(i: int, j: int, n_c: int, n_g: int) -> list[str]:
    """Names of the grid edges cell ``(i, j)`` of an ``n_c`` x ``n_g`` grid lies on."""
    out = []
    if i == 0:
        out.append("C min")
    if i == n_c - 1:
        out.append("C max")
    if j == 0:
        out.append("g min")
    if j == n_g - 1:
        out.append("g max")
    return out


def fit_svm_peers(
    X: np.ndarray, codes: np.ndarray, search: PeerSearch, methods=SVM_PEERS
) -> dict[str, CalibratedSVC]:
    """Refit each method's chosen cell on all rows (cells shared by methods fitted once)."""
    out: dict[str, CalibratedSVC] = {}
    by_cell: dict[tuple[float, float], list[str]] = {}
    for m in methods:
        by_cell.setdefault(search.best[m], []).append(m)
    for (C, gamma), ms in by_cell.items():
        cal = fit_calibrated_svc(X, codes, C, gamma, venn="venn_abers" in ms)
        for m in ms:
            out[m] = cal
    return out


__all__ = [
    "PEER_C_GRID",
    "PEER_G_GRID",
    "SVM_PEERS",
    "CalibratedSVC",
    "PeerSearch",
    "VennAbers",
    "fit_calibrated_svc",
    "fit_svm_peers",
    "grid_edges",
    "merge_venn_abers",
    "search_svm_peers",
]
