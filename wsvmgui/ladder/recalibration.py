"""Monotone recalibration of a ladder's probabilities from cross-fitted estimates.

The ladder's p_hat is a rank-preserving but distorted estimate of p (docs/notes/
calibration.md measures how and says why).  A monotone map ``g`` fitted to the pairs
``(p_cf_i, y_i)`` of cross-fitted estimates (each training point's p_hat from a ladder
fitted without it) and labels removes the distortion without a model of p; the final
estimate is ``g(p_hat(x))``.  Being monotone, ``g`` keeps the ranking, hence the ROC and,
at 1/2, nearly the classification.

Maps (:data:`MAPS`):

``"isotonic"``
    Isotonic regression of y on p_cf (pool adjacent violators), each block's mean shrunk
    by one pseudo-observation at 1/2 (``(sum y + 1/2) / (count + 1)``, so that a block of a
    few points is never certain), linear between the distinct p_cf.
``"sigmoid"``
    ``g(p) = expit(a + b logit(p))`` with ``b >= 0``, by maximum likelihood.
``"beta"``
    Beta calibration (Kull, Silva Filho & Flach 2017):
    ``g(p) = expit(c + a log p - b log(1 - p))`` with ``a, b >= 0`` (monotone); the
    sigmoid is the case ``a = b``.
``"spline"``
    A monotone spline in ``t = logit(p)``: ``g(p) = expit(a + sum_j c_j r_j(t))``, ``r_j``
    the ramp rising linearly from knot j to knot j + 1 and flat elsewhere (with the two
    outer ramps unbounded), ``c_j >= 0``; :func:`spline_knots` knots at quantiles of the
    pairs' logits; penalty ``(lam / m) sum (c_j - c_{j+1})^2`` toward one common slope,
    so that a large ``lam`` gives the sigmoid map.  ``lam`` of :data:`SPLINE_PENALTIES`
    by cross-validated log loss on the pairs.
``"plateau"``
    The sigmoid between a floor and a ceiling (the four-parameter logistic):
    ``g(p) = l + (h - l) expit(a + b logit(p))`` with ``b >= 0`` and ``0 <= l <= r <= h
    <= 1`` (``r`` the pairs' share of ones), by maximum likelihood (:func:`fit_plateau`).
    ``l = 0, h = 1`` is the sigmoid map; a floor and a ceiling are the calibration curve
    of a boundary with label noise (the truth of the step designs is two levels), which
    the isotonic map fits with a noisy staircase and the spline with many slopes.

``calibration="auto_plateau"`` is the same choice among :data:`AUTO_PLATEAU_MAPS` (the
plateau map as well): the binary estimator's ``"auto"`` since the ninth sitting.
:func:`choose_map` picks, of :data:`AUTO_MAPS` (the sigmoid and isotonic maps), the one
with the smallest cross-validated log loss on the pairs themselves (cheap: one-dimensional
fits); that is ``calibration="auto"``.  On more than :data:`AUTO_SPLINE_MIN_PAIRS` pairs
it takes the spline instead where the spline's cross-validated log loss is lower by more
than :data:`AUTO_SPLINE_GUARD` (1) standard errors of the paired per-row difference.  Beta
calibration is offered by name only: it won on the cross-validated pairs and lost on test
data (breast cancer: chosen on 3 of 5 splits, its two large losses; docs/notes/
calibration.md, "Map study").  The guarded spline lowered the binary designs' L1 at
n = 2000 by 3-7 %; on fewer pairs it was a coin toss (the notes' "Sixth sitting").
Maps are plain data (arrays and floats), so fitted estimators holding them save and load
like any other.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logit
from scipy.stats import beta as beta_dist
from scipy.stats import norm
from sklearn.model_selection import StratifiedKFold

from .._sklearn_compat import isotonic_pav
from ..errors import InputError
from ..progress import ProgressTracker
from ..solvers.kernels import Kernel
from .final import FittedLadder, fit_ladders
from .gridsearch import rescale_lambda
from .problems import LadderProblem
from .splits import Fold, kfold_splits

#: The monotone maps, in the order :func:`choose_map` prefers them on ties.
MAPS = ("sigmoid", "beta", "isotonic", "spline", "plateau")
#: The maps ``calibration="auto"`` chooses among (beta left out: see the module docstring;
#: the spline enters only through the guard, :data:`AUTO_SPLINE_GUARD`).
AUTO_MAPS = ("sigmoid", "isotonic")
#: The maps ``calibration="auto_plateau"`` chooses among: :data:`AUTO_MAPS` and the
#: plateau map (the spline guard as ``"auto"``'s).  What the binary estimator's
#: ``calibration="auto"`` fits since the ninth sitting (``estimators.binary.
#: AUTO_CALIBRATION``; docs/notes/calibration.md, "Ninth sitting (branch acc-binmap)").
AUTO_PLATEAU_MAPS = ("sigmoid", "isotonic", "plateau")


class _AutoChoices(Mapping[str, tuple[str, ...]]):
    """``calibration`` value -> the maps it chooses among, read at each lookup.

    Each value names a module constant (``"auto"`` -> :data:`AUTO_MAPS`); a lookup returns
    that constant as it is now, so a study that sets ``recalibration.AUTO_MAPS`` changes
    what ``calibration="auto"`` chooses among (a tuple bound at import would not)."""

    def __init__(self, constants: dict[str, str]) -> None:
        self._constants = dict(constants)

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return tuple(globals()[self._constants[name]])

    def __iter__(self) -> Iterator[str]:
        return iter(self._constants)

    def __len__(self) -> int:
        return len(self._constants)

    def __repr__(self) -> str:
        return repr(dict(self))


#: The cross-validated choices by name: ``calibration`` value -> the maps it chooses among
#: (the module constant's value at the time of the lookup).
AUTO_CHOICES: Mapping[str, tuple[str, ...]] = _AutoChoices(
    {"auto": "AUTO_MAPS", "auto_plateau": "AUTO_PLATEAU_MAPS"}
)
#: With a number z, ``calibration="auto"`` on more than :data:`AUTO_SPLINE_MIN_PAIRS`
#: pairs takes the spline over its choice of :data:`AUTO_MAPS` where the spline's
#: cross-validated log loss is lower by more than z standard errors of the paired per-row
#: difference; None leaves the spline out of ``"auto"``.  z = 1 lowered the binary
#: designs' L1 at n = 2000 by 3-7 % on the benchmark of record (wang2008_ex1 0.944,
#: wuliu2011_ex2 0.969, wuliu2011_ex6 0.927, wuliu2011_ex1 1.000; fresh seeds 5-9 never
#: worse) (docs/notes/calibration.md, "Sixth sitting").
AUTO_SPLINE_GUARD: float | None = 1.0
#: The guard applies to more pairs than this only.  On fewer it was a coin toss: at
#: n = 100 it changed 3 of 40 binary draws, one better and two 1-2 % worse
#: (benchmarks/results/spline_guard_small_n.md), and on the multiclass pairs of 70-270
#: rows it raised wu2010_ex1 by 1.2 % and wu2010_ex2 by 2.1 %.  500: where the binary
#: default's tuning turns from the one-SE rule to the minimum (``tuning_rule="auto"``).
AUTO_SPLINE_MIN_PAIRS = 500
#: The spline's smoothing penalties, one chosen by cross-validated log loss.
SPLINE_PENALTIES = (0.03, 0.3, 3.0)
#: Estimates are kept in ``[P_EPS, 1 - P_EPS]`` before logits are taken.
P_EPS = 1e-6
#: Ridge on the sigmoid and beta coefficients (keeps separable data finite).
RIDGE = 1e-4


@dataclass(frozen=True)
class MonotoneMap:
    """A fitted non-decreasing map of probabilities into probabilities.

    Attributes
    ----------
    name : str
        One of :data:`MAPS`.
    x, y : ndarray, shape (t,)
        Isotonic thresholds (empty for the parametric maps); for the spline, ``x`` holds
        its knots as probabilities (``expit`` of the knots in logit, increasing) and
        ``y`` is empty; for the plateau map ``x`` is empty and ``y`` holds its floor and
        ceiling (shape (2,)).
    coef : ndarray, shape (3,) or (t + 2,)
        ``(c, a, b)`` of ``expit(c + a log p - b log(1 - p))`` (the sigmoid and the
        plateau map have a = b);
        for the spline the intercept and the ``t + 1`` slopes ``c_j >= 0`` of
        :func:`spline_basis`; empty for the isotonic map.
    lo, hi : float
        Output range.
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    coef: np.ndarray
    lo: float
    hi: float

    def __call__(self, p: np.ndarray) -> np.ndarray:
        """Mapped probabilities; same shape as ``p``."""
        p = np.clip(np.asarray(p, dtype=float), P_EPS, 1.0 - P_EPS)
        if self.name == "isotonic":
            out = np.interp(p, self.x, self.y)
        elif self.name == "spline":
            t = spline_basis(logit(p).ravel(), logit(self.x))
            out = expit(self.coef[0] + t @ self.coef[1:]).reshape(p.shape)
        else:
            c, a, b = self.coef
            out = expit(c + a * np.log(p) - b * np.log1p(-p))
            if self.name == "plateau":
                out = self.y[0] + (self.y[1] - self.y[0]) * out
        return np.clip(out, self.lo, self.hi)


def _check(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if p.size != y.size or p.size < 2:
        raise InputError("recalibration needs as many labels as estimates, at least two")
    if not (np.all(np.isfinite(p)) and np.all((y == 0) | (y == 1))):
        raise InputError("recalibration needs finite estimates and 0/1 labels")
    return np.clip(p, P_EPS, 1.0 - P_EPS), y


def _logistic(F: np.ndarray, y: np.ndarray, bounds) -> np.ndarray:
    """Ridge-penalised logistic fit of y on [1, F]; coefficient vector of length 1 + F.shape[1].

    Damped Newton steps on the 2-3 coefficients (each O(m)) on every face of the bounds
    (the slopes free or held at 0); the feasible face optimum of least loss is the bounded
    optimum (the problem is convex).  L-BFGS-B only when Newton fails on every face.  The
    tuning search fits these maps once per cell and fold, so their speed is the
    recalibrated search's cost.
    """
    Z = np.column_stack([np.ones(y.size), F])
    m = y.size
    pen = np.full(Z.shape[1], 2 * RIDGE)
    pen[0] = 0.0

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = Z @ w
        v = np.sum(np.logaddexp(0.0, z) - y * z) / m + RIDGE * (w[1:] @ w[1:])
        g = Z.T @ (expit(z) - y) / m
        g[1:] += 2 * RIDGE * w[1:]
        return float(v), g

    rate = np.clip(y.mean(), 1e-3, 1 - 1e-3)
    w0 = np.zeros(Z.shape[1])
    w0[0] = np.log(rate / (1 - rate))
    w0[1:] = 0.5
    lower = np.array([-np.inf if b[0] is None else b[0] for b in bounds])
    bounded = [j for j in range(w0.size) if np.isfinite(lower[j])]
    best: tuple[float, np.ndarray] | None = None
    for held in itertools.chain.from_iterable(
        itertools.combinations(bounded, r) for r in range(len(bounded) + 1)
    ):
        free = np.array([j for j in range(w0.size) if j not in held])
        start = w0.copy()
        start[list(held)] = lower[list(held)]

        def face(u: np.ndarray, free=free, start=start) -> tuple[float, np.ndarray]:
            w = start.copy()
            w[free] = u
            v, g = loss(w)
            return v, g[free]

        u = _newton(Z[:, free], y, start[free], pen[free], face)
        if u is None:
            continue
        w = start.copy()
        w[free] = u
        if np.all(w >= lower - 1e-12):
            value = loss(w)[0]
            if best is None or value < best[0]:
                best = (value, np.maximum(w, lower))
        if not held and best is not None:
            return best[1]  # the unconstrained optimum is feasible: it is the optimum
    if best is not None:
        return best[1]
    return minimize(loss, w0, jac=True, method="L-BFGS-B", bounds=bounds).x


def _newton(Z: np.ndarray, y: np.ndarray, w: np.ndarray, pen: np.ndarray, loss):
    """Unconstrained minimiser of ``loss`` (the penalised logistic loss of design ``Z``
    (m, d), ridge diagonal ``pen`` (d,)) by damped Newton from ``w`` (d,); None when it
    does not converge in 100 steps."""
    m = y.size
    value, grad = loss(w)
    for _ in range(100):
        q = expit(Z @ w)
        H = (Z.T * (q * (1 - q))) @ Z / m + np.diag(pen) + 1e-12 * np.eye(w.size)
        try:
            step = np.linalg.solve(H, grad)
        except np.linalg.LinAlgError:
            return None
        t = 1.0
        while True:
            new = w - t * step
            v, g = loss(new)
            if v <= value - 1e-4 * t * (grad @ step) or t < 1e-10:
                break
            t *= 0.5
        w, value, grad = new, v, g
        if np.max(np.abs(grad)) < 1e-10 or abs(t * (grad @ step)) < 1e-14:
            return w
    return None


def _smoothed_isotonic(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic regression with every block's mean shrunk by one pseudo-point at 1/2.

    Plain isotonic regression puts 0 or 1 on its end blocks (often a handful of points),
    a certainty that one miss punishes without bound; each block's value becomes
    ``(sum y + 1/2) / (count + 1)`` and the result is made monotone again.  Returns the
    distinct estimates (t,) and the map's values there.
    """
    x, inverse, w = np.unique(p, return_inverse=True, return_counts=True)
    w = w.astype(float)
    mean = np.bincount(inverse, weights=y, minlength=x.size) / w
    fit = isotonic_pav(mean, w)
    block = np.concatenate([[0], np.cumsum(np.diff(fit) != 0)])
    count = np.bincount(block, weights=w)
    total = np.bincount(block, weights=w * mean)
    smooth = ((total + 0.5) / (count + 1.0))[block]
    return x, isotonic_pav(smooth, w)


def spline_basis(t: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """The spline's ramps at logits ``t`` (m,) for sorted knots ``knots`` (J,).

    Returns shape (m, J + 1): column 0 is ``min(t, k_1) - k_1``, column j (1 <= j < J)
    rises linearly from 0 at ``k_j`` to ``k_{j+1} - k_j`` and is flat outside, column J is
    ``max(t, k_J) - k_J``.  Every column is non-decreasing in ``t`` and the columns sum to
    ``t - k_1``, so equal coefficients give a sigmoid in ``t``.
    """
    t = np.asarray(t, dtype=float)
    cols = [np.minimum(t, knots[0]) - knots[0]]
    cols += [np.clip(t, a, b) - a for a, b in zip(knots[:-1], knots[1:], strict=True)]
    cols.append(np.maximum(t, knots[-1]) - knots[-1])
    return np.column_stack(cols)


def spline_knots(t: np.ndarray) -> np.ndarray:
    """Knots (J,) of the spline for logits ``t`` (m,): ``max(3, ceil(sqrt(m) / 0.75))``
    interior quantiles of ``t``, duplicates dropped (10 knots at m = 50, 60 at m = 2000:
    the map study's ``S0.75``, docs/notes/calibration.md)."""
    count = int(max(3, np.ceil(np.sqrt(t.size) / 0.75)))
    return np.unique(np.quantile(t, np.linspace(0.0, 1.0, count + 2)[1:-1]))


def fit_spline(p: np.ndarray, y: np.ndarray, lam: float) -> MonotoneMap:
    """The monotone spline with penalty ``lam`` fitted to estimates ``p`` (m,) and 0/1
    labels ``y`` (m,) (:func:`spline_basis`, :func:`spline_knots`).

    Minimises ``mean(log loss) + (lam / m) sum_j (c_j - c_{j+1})^2 + (RIDGE / d) sum_j
    c_j^2`` over the intercept and the ``d = J + 1`` slopes ``c_j >= 0`` by projected
    Newton steps from the sigmoid map's solution (the map study's L-BFGS-B stopped short
    of the optimum on some draws).  The ridge is spread over the slopes so that at a
    common slope ``c`` it is the sigmoid map's ``RIDGE c^2``: as ``lam`` grows the fit
    tends to :func:`fit_map` ``"sigmoid"``.
    """
    p, y = _check(p, y)
    if not (np.isfinite(lam) and lam >= 0):
        raise InputError(f"the spline's penalty must be a finite number >= 0, got {lam}")
    # knots stored as probabilities; fit on their logits read back, as the map calls them
    x = expit(spline_knots(logit(p)))
    knots = logit(x)
    B = spline_basis(logit(p), knots)
    m, d = y.size, B.shape[1]
    Z = np.column_stack([np.ones(m), B])
    D = np.diff(np.eye(d), axis=0)
    P = lam / m * (D.T @ D) + RIDGE / d * np.eye(d)

    Q = np.zeros((d + 1, d + 1))
    Q[1:, 1:] = P
    # start at the sigmoid map (every slope its slope), the optimum as lam grows
    c, slope = _logistic(logit(p)[:, None], y, [(None, None), (0.0, None)])
    w = _projected_newton(Z, y, Q, np.r_[c + slope * knots[0], np.full(d, slope)])
    floor = 1.0 / (2.0 * (m + 1))
    return MonotoneMap("spline", x, np.zeros(0), w, floor, 1 - floor)


def _projected_newton(Z: np.ndarray, y: np.ndarray, Q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Minimiser of ``mean(log(1 + e^z) - y z) + w' Q w``, ``z = Z w``, over ``w[1:] >= 0``.

    ``Z`` (m, d + 1), ``y`` (m,), ``Q`` (d + 1, d + 1) positive semi-definite, start ``w``
    (d + 1,).  Projected Newton (Bertsekas 1982): the coordinates at (or within ``eps``
    of) their bound whose gradient pushes outward are held at the bound, Newton's step on
    the others, an Armijo search along the projected arc; stops when the projected
    gradient is below 1e-10 (the problem is convex: that is its minimum) or after 200
    steps.
    """
    m = y.size
    lower = np.r_[-np.inf, np.zeros(w.size - 1)]
    w = np.maximum(w, lower)

    def loss(w: np.ndarray) -> float:
        z = Z @ w
        return float(np.mean(np.logaddexp(0.0, z) - y * z) + w @ Q @ w)

    value = loss(w)
    for _ in range(200):
        q = expit(Z @ w)
        grad = Z.T @ (q - y) / m + 2 * Q @ w
        projected = np.where((w <= lower) & (grad > 0), 0.0, grad)
        if np.max(np.abs(projected)) < 1e-10:
            break
        eps = min(1e-6, float(np.max(np.abs(projected))))
        held = (w - lower <= eps) & (grad > 0)
        free = ~held
        Zf = Z[:, free]
        H = Zf.T @ (Zf * (q * (1 - q) / m)[:, None]) + 2 * Q[np.ix_(free, free)]
        step = np.zeros_like(w)
        try:
            step[free] = -np.linalg.solve(H + 1e-12 * np.eye(H.shape[0]), grad[free])
        except np.linalg.LinAlgError:
            step[free] = -grad[free]
        step[held] = -grad[held]
        t = 1.0
        while True:
            new = np.maximum(w + t * step, lower)
            v = loss(new)
            decrease = grad[free] @ (w - new)[free] + grad[held] @ (w - new)[held]
            if v <= value - 1e-4 * decrease or t < 1e-12:
                break
            t *= 0.5
        if value - v < 1e-15 * max(1.0, abs(value)) and t < 1e-12:
            break
        w, value = new, v
    return w


def fit_plateau(p: np.ndarray, y: np.ndarray) -> MonotoneMap:
    """The plateau map fitted to estimates ``p`` (m,) and 0/1 labels ``y`` (m,).

    ``g(p) = l + (h - l) expit(a + b logit(p))``: minimises ``mean(log loss) + (RIDGE /
    m) b^2`` over ``a``, ``b >= 0`` and ``0 <= l <= r <= h <= 1``,
    ``r`` the share of ones clipped to ``[1 / (m + 1), m / (m + 1)]``, by L-BFGS-B from
    six starts (the problem is not convex): the sigmoid map's intercept and 1, 3 and 10
    times its slope, each with ``l = 0, h = 1`` and with the floor and ceiling at the
    shares of ones (one pseudo-point at 1/2 added) among the lowest and highest tenth of
    the estimates (kept inside the bounds); the start of least loss is returned.  On the
    pairs of 72 binary draws of benchmarks/binary_map_study.py these six found the
    optimum of 75 starts (a grid of floors, ceilings and slopes) to 1e-8 in the loss; the
    two starts of slope 1 alone missed it on 4 draws by up to 0.014.  The ridge only
    keeps separable data finite: the sigmoid map's ``RIDGE b^2`` flattened the steep
    ramp between the plateaus (one draw of wuliu2011_ex2 at n = 2000: slope 4.1 instead
    of 6.8, L1 0.037 instead of 0.033).
    """
    p, y = _check(p, y)
    m = y.size
    t = logit(p)
    c, slope = _logistic(t[:, None], y, [(None, None), (0.0, None)])
    r = float(np.clip(y.mean(), 1.0 / (m + 1), m / (m + 1.0)))
    ridge = RIDGE / m

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        a, b, lo, hi = w
        s = expit(a + b * t)
        q = np.clip(lo + (hi - lo) * s, 1e-12, 1 - 1e-12)
        dq = -(y / q - (1 - y) / (1 - q)) / m
        ds = dq * (hi - lo) * s * (1 - s)
        v = -np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)) + ridge * b * b
        g = np.array([ds.sum(), ds @ t + 2 * ridge * b, dq @ (1 - s), dq @ s])
        return float(v), g

    order = np.argsort(p, kind="stable")
    tenth = max(1, m // 10)
    low = min((float(y[order[:tenth]].sum()) + 0.5) / (tenth + 1), r)
    high = max((float(y[order[-tenth:]].sum()) + 0.5) / (tenth + 1), r)
    bounds = [(None, None), (0.0, None), (0.0, r), (r, 1.0)]
    best: tuple[float, np.ndarray] | None = None
    for (lo0, hi0), k in itertools.product(((0.0, 1.0), (low, high)), (1.0, 3.0, 10.0)):
        res = minimize(loss, np.array([c, k * slope, lo0, hi0]), jac=True, method="L-BFGS-B",
                       bounds=bounds)  # fmt: skip
        if best is None or res.fun < best[0]:
            best = (float(res.fun), np.asarray(res.x, dtype=float))
    assert best is not None
    a, b, lo, hi = best[1]
    floor = 1.0 / (2.0 * (m + 1))
    return MonotoneMap(
        "plateau", np.zeros(0), np.array([lo, hi]), np.array([a, max(b, 0.0), max(b, 0.0)]),
        floor, 1 - floor,
    )  # fmt: skip


def _folds(y: np.ndarray, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified folds of the pairs with labels ``y`` (m,); empty with fewer than two
    rows of a class."""
    k = int(min(n_folds, y.sum(), (1 - y).sum()))
    if k < 2:
        return []
    return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(y[:, None], y))


def _spline_key(lam: float) -> str:
    return f"spline@{lam:g}"


def _candidates(maps, spline: bool, seed: int) -> dict:
    """Candidate name -> fit(p, y): the maps ``maps``, and with ``spline`` the spline at
    each penalty of :data:`SPLINE_PENALTIES` (keys ``"spline@<lam>"``)."""
    out = {m: (lambda a, b, m=m: fit_map(m, a, b, seed=seed)) for m in maps}
    if spline:
        out.update(
            {_spline_key(v): (lambda a, b, v=v: fit_spline(a, b, v)) for v in SPLINE_PENALTIES}
        )
    return out


def _out_of_fold(p: np.ndarray, y: np.ndarray, fits: dict, folds) -> dict[str, np.ndarray]:
    """Each candidate of ``fits`` (name -> fit(p, y)) fitted on the other folds and applied
    to each fold's estimates: name -> out-of-fold map values (m,)."""
    q = {name: np.empty(p.size) for name in fits}
    for tr, te in folds:
        for name, fit in fits.items():
            q[name][te] = fit(p[tr], y[tr])(p[te])
    return q


def _log_loss_terms(q: np.ndarray, y: np.ndarray) -> np.ndarray:
    q = np.clip(q, 1e-12, 1 - 1e-12)
    return -(y * np.log(q) + (1 - y) * np.log1p(-q))


def auto_guard(m: int) -> float | None:
    """The spline guard of ``calibration="auto"`` on ``m`` pairs: :data:`AUTO_SPLINE_GUARD`
    above :data:`AUTO_SPLINE_MIN_PAIRS` pairs, else None (read at each call)."""
    return AUTO_SPLINE_GUARD if m > AUTO_SPLINE_MIN_PAIRS else None


def guarded_choice(terms: dict[str, np.ndarray], maps, guard: float | None) -> str:
    """The candidate ``calibration="auto"`` takes, from per-row cross-validated losses.

    Parameters
    ----------
    terms : dict of str to ndarray, shape (m,)
        Per-row losses of every candidate on the same rows: the maps of ``maps`` and, for
        the guard, splines keyed ``"spline@<lam>"``.
    maps : tuple of str
        The ordinary candidates; the least mean loss wins (ties: the first).
    guard : float or None
        The spline of least mean loss replaces that choice only where the mean of its
        per-row difference to it is below ``-guard`` standard errors
        (``std(ddof=1) / sqrt(m)``); None: no spline.

    Returns
    -------
    str
        A key of ``terms``.
    """
    best = min(maps, key=lambda m: (float(np.mean(terms[m])), maps.index(m)))
    splines = [k for k in terms if k.startswith("spline@")]
    if guard is None or not splines:
        return best
    spline = min(splines, key=lambda k: (float(np.mean(terms[k])), splines.index(k)))
    d = np.asarray(terms[spline], dtype=float) - np.asarray(terms[best], dtype=float)
    if d.size < 2:
        return best
    se = float(d.std(ddof=1)) / np.sqrt(d.size)
    return spline if float(d.mean()) < -guard * se else best


def _spline_by_cv(p: np.ndarray, y: np.ndarray, seed: int) -> MonotoneMap:
    """The spline at the penalty of :data:`SPLINE_PENALTIES` of least cross-validated log
    loss on the pairs (the middle one when a class has fewer than two rows)."""
    folds = _folds(y, 5, seed)
    if not folds:
        return fit_spline(p, y, SPLINE_PENALTIES[len(SPLINE_PENALTIES) // 2])
    fits = _candidates((), True, seed)
    q = _out_of_fold(p, y, fits, folds)
    key = min(fits, key=lambda k: float(_log_loss_terms(q[k], y).mean()))
    return fits[key](p, y)


def fit_map(name: str, p: np.ndarray, y: np.ndarray, seed: int = 0) -> MonotoneMap:
    """Fit map ``name`` of :data:`MAPS` to estimates ``p`` (m,) and 0/1 labels ``y`` (m,).

    ``seed`` draws the folds on which the spline's penalty is chosen (other maps ignore
    it)."""
    p, y = _check(p, y)
    floor = 1.0 / (2.0 * (y.size + 1))
    empty = np.zeros(0)
    if name == "isotonic":
        x, v = _smoothed_isotonic(p, y)
        return MonotoneMap(name, x, v, empty, floor, 1 - floor)
    if name == "spline":
        return _spline_by_cv(p, y, seed)
    if name == "plateau":
        return fit_plateau(p, y)
    lp, lq = np.log(p), -np.log1p(-p)
    if name == "sigmoid":
        c, s = _logistic((lp + lq)[:, None], y, [(None, None), (0.0, None)])
        coef = np.array([c, s, s])
    elif name == "beta":
        coef = _logistic(np.column_stack([lp, lq]), y, [(None, None), (0.0, None), (0.0, None)])
    else:
        raise InputError(f"unknown recalibration map {name!r}; choose one of {', '.join(MAPS)}")
    return MonotoneMap(name, empty, empty, np.asarray(coef, dtype=float), floor, 1 - floor)


def map_scores(
    p: np.ndarray,
    y: np.ndarray,
    maps: Sequence[str] | None = None,
    n_folds: int = 5,
    seed: int = 0,
) -> dict[str, float]:
    """Cross-validated log loss of each map on the pairs ``(p, y)``; name -> loss.

    Parameters
    ----------
    p, y : ndarray, shape (m,)
        Cross-fitted estimates and their 0/1 labels.
    maps : sequence of str or None
        The maps to score; None: every map of :data:`MAPS` as the module has it at the
        call (a study may set the constant).
    n_folds : int
        Number of stratified folds (fewer where a class has fewer rows).
    seed : int
        Seed of the folds.

    Returns
    -------
    dict of str to float
        Map name -> mean out-of-fold log loss; with fewer than two rows of a class, 0 for
        the sigmoid and inf for the others.
    """
    maps = tuple(MAPS if maps is None else maps)
    p, y = _check(p, y)
    folds = _folds(y, n_folds, seed)
    if not folds:
        return {m: np.inf if m != "sigmoid" else 0.0 for m in maps}
    q = _out_of_fold(p, y, _candidates(maps, False, seed), folds)
    return {m: float(_log_loss_terms(q[m], y).mean()) for m in maps}


def choose_map(
    p: np.ndarray,
    y: np.ndarray,
    maps: Sequence[str] | None = None,
    seed: int = 0,
    spline: bool = True,
) -> MonotoneMap:
    """The map ``calibration="auto"`` fits to estimates ``p`` and 0/1 labels ``y``.

    Of ``maps``, the one with the smallest 5-fold cross-validated log loss on the pairs;
    with ``spline`` and a guard (:func:`auto_guard` of the pair count not None, read at
    each call as :func:`recalibrated_terms` reads it), the spline at its best penalty of
    :data:`SPLINE_PENALTIES` on the same folds instead where it beats that map by more
    than the guard's standard errors of the paired per-row difference
    (:func:`guarded_choice`).  The winner is refitted on all pairs.  With fewer than two
    rows of a class: the sigmoid if in ``maps``, else the first.

    Parameters
    ----------
    p : ndarray, shape (m,)
        Cross-fitted estimates.
    y : ndarray, shape (m,)
        Their 0/1 labels.
    maps : sequence of str or None
        Names of :data:`MAPS` to choose among; None: :data:`AUTO_MAPS` as it is at the
        call (a study may set the module constant).
    seed : int
        Seed of the stratified folds.
    spline : bool
        Whether the guarded spline may replace the choice.

    Returns
    -------
    MonotoneMap
    """
    p, y = _check(p, y)
    maps = tuple(AUTO_CHOICES["auto"] if maps is None else maps)
    guard = auto_guard(p.size) if spline else None
    folds = _folds(y, 5, seed)
    if not folds:
        return fit_map("sigmoid" if "sigmoid" in maps else maps[0], p, y, seed=seed)
    fits = _candidates(maps, guard is not None, seed)
    q = _out_of_fold(p, y, fits, folds)
    key = guarded_choice({k: _log_loss_terms(v, y) for k, v in q.items()}, maps, guard)
    return fits[key](p, y)


#: Share of the cross-fitted pairs in the window of the interval's Jeffreys term: ``kj =
#: ceil(m / INTERVAL_JEFFREYS_SHARE)`` of ``m`` pairs (tenth sitting; was ``2 sqrt(m)``).
#: The window grows with ``m``, so the term shrinks like the fitted map's own error (a map
#: of a few parameters fitted to all pairs, ``1 / m``), not like a local average of
#: ``2 sqrt(m)`` labels (``m^(-1/2)``), which at 2000 pairs was 2.5-4x the map's bootstrap
#: standard error and made the 90% interval cover 0.99; below 400 pairs the window is
#: smaller than before and the interval wider, which covers the draws whose fitted
#: plateau misses a level by 0.2 at n = 100 (benchmarks/results/interval_coverage_tenth.md).
INTERVAL_JEFFREYS_SHARE = 10


@dataclass(frozen=True)
class LocalInterval:
    """Per-point intervals for p(x): the local calibration's and the estimate's own error.

    For a point with estimate ``p_hat``, the cross-fitted pairs whose estimates are
    nearest to it (in rank) are a sample of labels of points the ladder saw alike; the
    Jeffreys posterior variance ``J`` of the label mean of the ``kj`` nearest measures how
    well the calibration at ``p_hat`` is known.  That alone is an interval for
    ``E[p(X) | p_hat(X)]``, not for ``p(x)``: the estimate varies from one training sample
    to the next, and points with one ``p_hat`` differ in ``p``.  With ``v`` (the
    cross-fitted fits' spread), the interval is ``estimate +- z sqrt(J + V)``, ``V`` the
    mean of ``v`` over the ``k`` nearest pairs, ``z`` the normal quantile of the level
    (clipped to [0, 1]); without ``v`` (models saved before it) the Jeffreys interval of
    the ``k`` nearest, widened to contain the estimate.

    ``k = ceil(2 sqrt(m))`` and ``kj = ceil(m / INTERVAL_JEFFREYS_SHARE)`` of ``m`` pairs
    by default (:data:`INTERVAL_JEFFREYS_SHARE`); ``kj=None`` (models saved before the
    tenth sitting) is ``k``, the former interval.  Coverage of the true p at level 0.9 on
    the four binary simulation designs (``benchmarks/interval_coverage.py``, the binary
    default, 12 rows of n = 100, 500, 2000; seeds 0-2 / fresh seeds 3-7): mean 0.972 /
    0.960, lowest row 0.907 / 0.920, mean width 0.214 / 0.205 (``kj = k``: 0.963 /
    0.938, lowest 0.806 / 0.768, width 0.210 / 0.200); the interval is wider at n = 100
    and narrower from n = 500 (about 20 % at n = 2000).
    ``benchmarks/results/interval_coverage_tenth.md``.

    Attributes
    ----------
    p : ndarray, shape (m,)
        Cross-fitted estimates, sorted.
    y : ndarray, shape (m,)
        Their 0/1 labels, in the same order.
    k : int
        Pairs in the window of the spread ``V`` (and of ``J`` when ``kj`` is None).
    v : ndarray, shape (m,) or None
        Delete-a-fold jackknife variance of the recalibrated estimate at each pair's row
        (:func:`fold_spread`), in the same order.
    kj : int or None
        Pairs in the window of the Jeffreys term ``J`` (None: ``k``).
    """

    p: np.ndarray
    y: np.ndarray
    k: int
    v: np.ndarray | None = None
    kj: int | None = None

    @classmethod
    def fit(
        cls,
        p: np.ndarray,
        y: np.ndarray,
        k: int | None = None,
        v: np.ndarray | None = None,
        kj: int | None = None,
    ) -> LocalInterval:
        """From cross-fitted estimates ``p`` (m,), labels ``y`` (m,) and optionally the
        jackknife variances ``v`` (m,) of :func:`fold_spread`; ``k`` and ``kj`` default
        to ``ceil(2 sqrt(m))`` and ``ceil(m / INTERVAL_JEFFREYS_SHARE)`` (at least 2, at
        most ``m``)."""
        p, y = _check(p, y)
        order = np.argsort(p, kind="stable")
        k = int(np.ceil(2 * np.sqrt(p.size))) if k is None else int(k)
        kj = int(np.ceil(p.size / INTERVAL_JEFFREYS_SHARE)) if kj is None else int(kj)
        if v is not None:
            v = np.asarray(v, dtype=float).ravel()
            if v.shape != p.shape or not np.all(np.isfinite(v) & (v >= 0)):
                raise InputError("interval spread needs one finite variance >= 0 per estimate")
            v = v[order]
        return cls(p[order], y[order], max(2, min(k, p.size)), v, max(2, min(kj, p.size)))

    def _window(self, pos: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
        """Sum of ``values`` (m,) over the ``k`` pairs nearest each position of ``pos``."""
        start = np.clip(pos - k // 2, 0, self.p.size - k)
        csum = np.concatenate([[0.0], np.cumsum(values)])
        return csum[start + k] - csum[start]

    def __call__(
        self, p_hat: np.ndarray, estimate: np.ndarray, level: float = 0.9
    ) -> tuple[np.ndarray, np.ndarray]:
        """Intervals ``(lo, hi)`` (each shape (n,)) at estimates ``p_hat`` (n,), containing
        ``estimate`` (n,), the probabilities reported there."""
        if not 0 < level < 1:
            raise InputError(f"level must lie strictly between 0 and 1, got {level}")
        k = self.k
        pos = np.searchsorted(self.p, np.asarray(p_hat, dtype=float))
        a = (1 - level) / 2
        est = np.asarray(estimate, dtype=float)
        if self.v is not None:
            kj = k if self.kj is None else self.kj
            hits = self._window(pos, self.y, kj)
            spread = self._window(pos, self.v, k) / k
            alpha, beta = hits + 0.5, kj - hits + 0.5
            jeffreys = alpha * beta / ((alpha + beta) ** 2 * (alpha + beta + 1))
            half = norm.ppf(1 - a) * np.sqrt(jeffreys + spread)
            return np.clip(est - half, 0.0, 1.0), np.clip(est + half, 0.0, 1.0)
        hits = self._window(pos, self.y, k)
        lo = np.where(hits > 0, beta_dist.ppf(a, hits + 0.5, k - hits + 0.5), 0.0)
        hi = np.where(hits < k, beta_dist.ppf(1 - a, hits + 0.5, k - hits + 0.5), 1.0)
        return np.minimum(lo, est), np.maximum(hi, est)


def fold_spread(raw: np.ndarray, g: MonotoneMap) -> np.ndarray:
    """Delete-a-fold jackknife variance of the recalibrated estimate, per row.

    ``raw`` (F, m) holds each of the F fold fits' estimates at the m rows of the
    cross-fitted pairs; the variance of ``g`` of them over the fits, times ``F - 1`` (the
    delete-d jackknife's factor for F folds of equal size), estimates the sampling
    variance of the full fit's recalibrated estimate there.  Returns shape (m,)."""
    raw = np.asarray(raw, dtype=float)
    if raw.ndim != 2 or raw.shape[0] < 2:
        return np.zeros(raw.shape[-1])
    return (raw.shape[0] - 1) * g(raw).var(axis=0)


def recalibrated_terms(
    p: np.ndarray,
    y: np.ndarray,
    name: str,
    terms,
    n_folds: int = 5,
    seed: int = 0,
) -> np.ndarray:
    """Per-row score terms of the recalibrated estimate, cross-validated on the pairs.

    The pairs ``(p, y)`` (estimates (m,), 0/1 labels (m,)) are split into ``n_folds``
    stratified folds; map ``name`` fitted on the other folds maps each fold's estimates,
    and ``terms(q, y)`` (per-row losses, shape (m,)) scores them.  ``"auto"`` returns the
    terms of the candidate :func:`guarded_choice` takes on these terms (the maps of
    :data:`AUTO_MAPS` and, with :func:`auto_guard`, the spline at each penalty):
    the tuning search's view of what ``calibration="auto"`` would return, the same
    candidate as :func:`choose_map` when ``terms`` is the log loss and the folds agree.
    With fewer than two rows of a class the estimates are scored unmapped.
    """
    p, y = _check(p, y)
    folds = _folds(y, n_folds, seed)
    if not folds:
        return np.asarray(terms(p, y), dtype=float)
    if name not in AUTO_CHOICES:
        q = _out_of_fold(p, y, _candidates((name,), False, seed), folds)
        return np.asarray(terms(q[name], y), dtype=float)
    maps = AUTO_CHOICES[name]
    guard = auto_guard(p.size)
    q = _out_of_fold(p, y, _candidates(maps, guard is not None, seed), folds)
    scored = {k: np.asarray(terms(v, y), dtype=float) for k, v in q.items()}
    return scored[guarded_choice(scored, maps, guard)]


#: Names a ``calibration`` parameter takes: no map, a cross-validated choice
#: (:data:`AUTO_CHOICES`), or one map.
CALIBRATIONS = ("none", *AUTO_CHOICES, *MAPS)


#: Folds of the cross-fitting when the tuning split is a single hold-out (or nothing is
#: tuned): 3 folds cost about a third of 5 on large data (the path's cost grows faster
#: than linearly) and scored no worse (benchmarks/results/recalibration_study.md).
CALIBRATION_FOLDS = 3


def calibration_folds(
    tuning: list[Fold] | None,
    y: np.ndarray,
    seed,
    sample_weight: np.ndarray | None = None,
) -> list[Fold]:
    """The splits to cross-fit on: the tuning folds when they are k >= 2 folds, else
    :data:`CALIBRATION_FOLDS` stratified folds of labels ``y`` (n,) without the rows of
    zero ``sample_weight`` (n,)."""
    if tuning is not None and len(tuning) >= 2:
        return list(tuning)
    folds = kfold_splits(y, CALIBRATION_FOLDS, seed)
    if sample_weight is None:
        return folds
    return [(tr[sample_weight[tr] > 0], te[sample_weight[te] > 0]) for tr, te in folds]


def fold_fits(
    X: np.ndarray,
    problem: LadderProblem,
    folds: list[Fold],
    kernel: Kernel,
    lam: float,
    n_final: float,
    weights: np.ndarray,
    *,
    engine: str = "path",
    solver: str = "libsvm",
    n_jobs: int = 1,
    tracker: ProgressTracker,
    sample_weight: np.ndarray | None = None,
) -> Iterator[tuple[FittedLadder, np.ndarray, np.ndarray]]:
    """The ladder of ``problem`` fitted on each fold's training part, with its tuning rows.

    Each fold's fit keeps the final fit's ``C`` (lambda rescaled by
    :func:`~wsvmgui.ladder.gridsearch.rescale_lambda` from ``n_final`` to the part's rows,
    or their summed weights); folds without a row of the problem on either side are
    skipped.  Yields ``(fit, te, y_te)``: the fold's fit, its tuning rows of the problem
    (indices into ``X``) and their +-1 labels.
    """
    n = X.shape[0]
    for train, test in folds:
        tr, _ = problem.select(np.asarray(train), n)
        te, y_te = problem.select(np.asarray(test), n)
        if te.size == 0 or tr.size == 0:
            continue
        tracker.add_total(weights.size)
        lam_tr = rescale_lambda(lam, n_final, problem.size(tr, n, sample_weight))
        fit = fit_ladders(
            X, [problem], tr, kernel, [(lam_tr, kernel.sigma)], [weights],
            engine=engine, solver=solver, n_jobs=n_jobs, tracker=tracker,
            sample_weight=sample_weight, stage="calibration",
        )[0]  # fmt: skip
        yield fit, te, y_te


def cross_fitted(
    X: np.ndarray,
    problem: LadderProblem,
    folds: list[Fold],
    kernel: Kernel,
    lam: float,
    n_final: float,
    weights: np.ndarray,
    *,
    rule: str = "count",
    engine: str = "path",
    solver: str = "libsvm",
    n_jobs: int = 1,
    tracker: ProgressTracker,
    sample_weight: np.ndarray | None = None,
    spread: bool = False,
    fits_out: list[FittedLadder] | None = None,
    rows_out: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, ...]:
    """Cross-fitted estimates of a problem's rows at one (lambda, kernel).

    For each fold, the ladder of ``problem`` is fitted on its rows of the fold's training
    part with the final fit's ``C`` (:func:`~wsvmgui.ladder.gridsearch.rescale_lambda`
    from ``n_final`` to the part's rows, or their summed weights) and estimates its rows
    of the tuning part.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    problem : LadderProblem
    folds : list of (train, test)
    kernel : Kernel
        The final fit's kernel (its sigma).
    lam : float
        The final fit's lambda, on ``n_final`` rows.
    n_final : float
        Rows of the final fit (their summed sample weights when weighted).
    weights : ndarray, shape (M - 1,)
    rule, engine, solver, n_jobs, tracker, sample_weight
        As for :func:`~wsvmgui.ladder.final.fit_ladders`.
    spread : bool
        Also return every fold fit's estimates at the rows of all pairs (for
        :func:`fold_spread`).
    fits_out : list or None
        If given, every fold's fit (:class:`~wsvmgui.ladder.final.FittedLadder`) is
        appended to it, in the order of ``folds`` (folds without a row of the problem on
        either side are skipped).
    rows_out : list or None
        If given, every fold's tuning rows of the problem (indices into ``X``, in the
        order of the pairs) are appended to it, one array per fit of ``fits_out``.

    Returns
    -------
    p : ndarray, shape (m,)
        Estimates of the problem's rows that lie in some tuning part (a row in several
        parts appears once per part).
    y : ndarray, shape (m,)
        Their labels, 1 for the problem's +1 class, else 0.
    raw : ndarray, shape (F, m)
        With ``spread``: fold fit f's estimate at the row of pair i in ``raw[f, i]``.
    """
    ps, ys, rows, fits = [], [], [], []
    for fit, te, y_te in fold_fits(
        X, problem, folds, kernel, lam, n_final, weights,
        engine=engine, solver=solver, n_jobs=n_jobs, tracker=tracker,
        sample_weight=sample_weight,
    ):  # fmt: skip
        ps.append(fit.ladder.estimate(fit.kernel(X[te], X[fit.support]), rule).p)
        ys.append((y_te > 0).astype(float))
        rows.append(te)
        fits.append(fit)
    if not ps:
        raise InputError("recalibration: no tuning split holds a row of the problem")
    if fits_out is not None:
        fits_out.extend(fits)
    if rows_out is not None:
        rows_out.extend(rows)
    if not spread:
        return np.concatenate(ps), np.concatenate(ys)
    at = np.concatenate(rows)
    raw = np.array([f.ladder.estimate(f.kernel(X[at], X[f.support]), rule).p for f in fits])
    return np.concatenate(ps), np.concatenate(ys), raw


def fit_calibration(name: str, p: np.ndarray, y: np.ndarray, seed: int = 0) -> MonotoneMap:
    """The map of a ``calibration`` parameter (not ``"none"``) fitted to ``(p, y)``."""
    if name in AUTO_CHOICES:
        return choose_map(p, y, maps=AUTO_CHOICES[name], seed=seed)
    return fit_map(name, p, y, seed=seed)


__all__ = [
    "AUTO_MAPS",
    "AUTO_PLATEAU_MAPS",
    "AUTO_CHOICES",
    "AUTO_SPLINE_GUARD",
    "AUTO_SPLINE_MIN_PAIRS",
    "auto_guard",
    "SPLINE_PENALTIES",
    "fit_spline",
    "fit_plateau",
    "guarded_choice",
    "spline_basis",
    "spline_knots",
    "CALIBRATIONS",
    "CALIBRATION_FOLDS",
    "calibration_folds",
    "LocalInterval",
    "INTERVAL_JEFFREYS_SHARE",
    "cross_fitted",
    "fold_fits",
    "fit_calibration",
    "fold_spread",
    "MAPS",
    "MonotoneMap",
    "choose_map",
    "fit_map",
    "map_scores",
    "recalibrated_terms",
]
