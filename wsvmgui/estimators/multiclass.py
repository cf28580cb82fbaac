"""K-class probabilities from binary weighted-SVM ladders by divide and conquer.

One estimator, :class:`MulticlassWeightedSVMClassifier`, runs every scheme of METHODS
section 5 (Wang, Zhang & Wu 2019; Zeng & Zhang), chosen by ``scheme``:

* ``"pairwise"`` (P-SVM): all K(K-1)/2 pairs, coupled with a per-point baseline;
* ``"baseline1"`` / ``"baseline2"`` (B1, B2): the K - 1 pairs against one baseline class
  (the largest class / the class of median aggregated distance);
* ``"bp1"`` / ``"bp2"`` (BP1, BP2): the baseline pairs rebuilt into a full pairwise table
  at no extra cost, then coupled per point; their probabilities equal B1's / B2's (the
  rebuilt table is consistent) and they add max voting;
* ``"ova"`` (A-SVM): K one-against-the-rest ladders, normalised to sum to one.

Each sub-problem is tuned on its own data by EGKL (Zeng section 6); see
:mod:`wsvmgui.multiclass.subproblems`.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError
from ..ladder.rules import RULES, LadderEstimate, probabilities_from_signs
from ..ladder.tuning import stratified_split
from ..multiclass import coupling
from ..multiclass.baseline_choice import choose_baseline
from ..multiclass.interpolation import INTERPOLATE, interpolated_estimate
from ..multiclass.ova import OVA_NORMALISATIONS, normalise
from ..multiclass.subproblems import (
    SubProblem,
    SubproblemSet,
    fit_subproblems,
    pair_problem,
    rest_problem,
)
from ..progress import CancelCheck, ProgressCallback
from ..solvers.kernels import Kernel, default_sigma_grid
from ..solvers.wsvm import SOLVERS
from ._validation import validate_fit_data, validate_predict_data
from .report import ProbabilityReport

#: Scheme name -> one-line description, for the command line and the app.
SCHEME_INFO: dict[str, str] = {
    "pairwise": "P-SVM: all K(K-1)/2 class pairs, coupled with a per-point baseline class",
    "baseline1": "B1-SVM: K-1 pairs against the largest class (linear in K)",
    "baseline2": "B2-SVM: K-1 pairs against the class of median aggregated distance",
    "bp1": "BP1-SVM: B1's pairs rebuilt into a full pairwise table (no extra fits, adds voting)",
    "bp2": "BP2-SVM: B2's pairs rebuilt into a full pairwise table (no extra fits, adds voting)",
    "ova": "A-SVM: K one-against-the-rest ladders, normalised to sum to one",
}
SCHEMES = tuple(SCHEME_INFO)
#: Ladder rules: the binary engine's plus "interpolate" (see .interpolation).
MULTICLASS_RULES = (*RULES, INTERPOLATE)
_BASELINE_METHOD = {
    "baseline1": "largest",
    "bp1": "largest",
    "baseline2": "median_distance",
    "bp2": "median_distance",
}
#: Schemes with a full pairwise table, which also predict by max voting (TE2).
VOTING_SCHEMES = ("pairwise", "bp1", "bp2")


class LadderView(NamedTuple):
    """One sub-problem's ladder at a set of points, for drawing.

    Attributes
    ----------
    label : str
        Sub-problem name: ``"b|a,b"`` (the ladder estimates ``q_{b|(a,b)}``; positive
        signs favour b) or ``"j|rest"`` (One-vs-All for class j).
    weights : ndarray, shape (M - 1,)
    signs : ndarray of bool, shape (n, M - 1)
        ``f_{pi_m}(x) > 0``.
    lo, hi : ndarray, shape (n,)
        Bracket of the sub-problem's probability.
    """

    label: str
    weights: np.ndarray
    signs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


class MulticlassWeightedSVMClassifier(ClassifierMixin, BaseEstimator):
    """K-class probabilities from binary weighted-SVM ladders (divide and conquer).

    Parameters
    ----------
    scheme : {"pairwise", "baseline1", "baseline2", "bp1", "bp2", "ova"}
        See :data:`SCHEME_INFO`.
    kernel : {"rbf", "linear", "poly"}
    n_weights : int or None
        M of every ladder (interior weights ``m / M``); None: ``default_n_weights`` of
        each sub-problem's final-fit size (one grid for tuning and final fits, as in the
        binary engine).
    final_n_weights : int or None
        M of the final fits only: tuning uses ``n_weights``, the final ladders this finer
        grid (a finer final ladder averages more sign changes; see
        benchmarks/results/zeng_reproduction.md).  None: as ``n_weights``.
    lam, sigma : float or None
        Fixed penalty / RBF width for every sub-problem; None tunes it.
    lambdas : array-like or None
        Lambda grid of every sub-problem; None: ``1 / (2 n_s C)`` for C in 0.1 ... 100
        and the sub-problem's size ``n_s``.
    sigmas : array-like or None
        RBF width grid shared by the sub-problems; None: ``(0.25 .. 1.5) * sigma_M`` of all
        labelled points (training and tuning).
    degree, coef0, poly_gamma : polynomial kernel ``(poly_gamma x'x' + coef0) ** degree``.
    rule : {"count", "extreme", "interpolate"}
        How a ladder becomes a probability: METHODS section 2, or "interpolate" (the
        zero crossing of the decision values inside the count rule's bracket; see
        :mod:`wsvmgui.multiclass.interpolation`).
    tune_fraction : float
        Share of the data held out (stratified) for tuning when no tuning set is given.
    refit : bool
        After tuning, refit every sub-problem on its training plus tuning points, keeping
        the tuned ``C = 1 / (2 n lambda)`` (as the binary engine does).
    ova_normalise : {"sum", "simplex"}
        How the One-vs-All values are made to sum to one (raw values stay available in
        :meth:`report` and :meth:`raw_ova`).
    solver : {"libsvm", "qp"}
    qp_solver : str
    n_jobs : int or None
        Threads for the sub-problem fits; None or -1: ``os.cpu_count()``.
    random_state : int or None
        Seed of the tuning split.

    Attributes
    ----------
    classes_ : ndarray, shape (K,)
    baseline_ : label or None
        The common baseline class of the baseline schemes.
    subproblems_ : SubproblemSet
        The fitted sub-problems (``subproblems_.fitted``) and their support points.
    fit_info_ : dict
        Fits made, sub-problem count, per-sub-problem seconds, wall time.
    """

    def __init__(
        self,
        scheme: str = "ova",
        kernel: str = "rbf",
        n_weights: int | None = None,
        final_n_weights: int | None = None,
        lam: float | None = None,
        sigma: float | None = None,
        lambdas=None,
        sigmas=None,
        degree: int = 3,
        coef0: float = 1.0,
        poly_gamma: float = 1.0,
        rule: str = "count",
        tune_fraction: float = 0.3,
        refit: bool = True,
        ova_normalise: str = "sum",
        solver: str = "libsvm",
        qp_solver: str = "quadprog",
        n_jobs: int | None = None,
        random_state: int | None = 0,
    ) -> None:
        self.scheme = scheme
        self.kernel = kernel
        self.n_weights = n_weights
        self.final_n_weights = final_n_weights
        self.lam = lam
        self.sigma = sigma
        self.lambdas = lambdas
        self.sigmas = sigmas
        self.degree = degree
        self.coef0 = coef0
        self.poly_gamma = poly_gamma
        self.rule = rule
        self.tune_fraction = tune_fraction
        self.refit = refit
        self.ova_normalise = ova_normalise
        self.solver = solver
        self.qp_solver = qp_solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ----------------------------------------------------------------------------- fit
    def _check_params(self) -> None:
        if self.scheme not in SCHEME_INFO:
            raise InputError(f"unknown scheme {self.scheme!r}; choose one of {', '.join(SCHEMES)}")
        if self.rule not in MULTICLASS_RULES:
            raise InputError(
                f"unknown rule {self.rule!r}; choose one of {', '.join(MULTICLASS_RULES)}"
            )
        if self.solver not in SOLVERS:
            raise InputError(f"unknown solver {self.solver!r}; choose one of {', '.join(SOLVERS)}")
        if self.ova_normalise not in OVA_NORMALISATIONS:
            raise InputError(
                f"unknown ova_normalise {self.ova_normalise!r}; choose one of "
                + ", ".join(OVA_NORMALISATIONS)
            )
        if self.lam is not None and not (np.isfinite(self.lam) and self.lam > 0):
            raise InputError(f"lambda must be a positive number, got {self.lam!r}")
        if self.sigma is not None and not (np.isfinite(self.sigma) and self.sigma > 0):
            raise InputError(f"sigma must be a positive number, got {self.sigma!r}")
        for name in ("n_weights", "final_n_weights"):
            value = getattr(self, name)
            if value is not None and int(value) < 2:
                raise InputError(f"{name} must be at least 2, got {value!r}")

    def _n_threads(self) -> int:
        if self.n_jobs is None or self.n_jobs == -1:
            return os.cpu_count() or 1
        if int(self.n_jobs) < 1:
            raise InputError(f"n_jobs must be a positive integer or -1, got {self.n_jobs!r}")
        return int(self.n_jobs)

    def _lambda_grid(self) -> np.ndarray | None:
        if self.lam is not None:
            return np.array([float(self.lam)])
        if self.lambdas is not None:
            grid = np.asarray(self.lambdas, dtype=float).ravel()
            if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
                raise InputError("the lambda grid must hold positive numbers")
            return grid
        return None

    def _fixed_sigmas(self) -> np.ndarray | None:
        if self.kernel != "rbf":
            return np.array([np.nan])
        if self.sigma is not None:
            return np.array([float(self.sigma)])
        if self.sigmas is not None:
            grid = np.asarray(self.sigmas, dtype=float).ravel()
            if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
                raise InputError("the sigma grid must hold positive numbers")
            return grid
        return None

    def _needs_tuning(self) -> bool:
        lam_fixed = self.lam is not None or (
            self.lambdas is not None and np.size(self.lambdas) == 1
        )
        sig_fixed = (
            self.kernel != "rbf"
            or self.sigma is not None
            or (self.sigmas is not None and np.size(self.sigmas) == 1)
        )
        return not (lam_fixed and sig_fixed)

    def _specs(self, K: int) -> list[SubProblem]:
        c = self.classes_
        if self.scheme == "ova":
            return [rest_problem(j, c) for j in range(K)]
        if self.scheme == "pairwise":
            return [pair_problem(a, b, c) for a in range(K) for b in range(a + 1, K)]
        k = self.baseline_index_
        return [pair_problem(j, k, c) for j in range(K) if j != k]

    def fit(
        self,
        X,
        y,
        *,
        X_tune=None,
        y_tune=None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ) -> MulticlassWeightedSVMClassifier:
        """Tune and fit every binary sub-problem of the scheme.

        Parameters
        ----------
        X : array-like, shape (n, p)
        y : array-like, shape (n,)
            Two or more classes of any label type.
        X_tune, y_tune : array-like, shapes (m, p) and (m,), optional
            Tuning set; without it a stratified ``tune_fraction`` split of the training
            data is used (only when something is tuned; unlike the binary engine there is
            no cross-validation mode).
        progress : callable, optional
            ``progress(done, total, None)`` after every weighted fit.
        should_cancel : callable, optional
            Polled between fits; True stops the fit with :class:`Cancelled`.

        Returns
        -------
        self
        """
        start = time.perf_counter()
        self._check_params()
        n_jobs = self._n_threads()
        X, y = validate_fit_data(self, X, y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        K = self.classes_.size
        method = _BASELINE_METHOD.get(self.scheme)
        self.baseline_index_ = None if method is None else choose_baseline(method, X, codes, K)
        self.baseline_ = None if method is None else self.classes_[self.baseline_index_]
        template = Kernel(
            self.kernel,
            sigma=1.0 if self.sigma is None else float(self.sigma),
            degree=self.degree,
            coef0=self.coef0,
            gamma=self.poly_gamma,
        )
        lambdas = self._lambda_grid()
        sigmas = self._fixed_sigmas()
        if self._needs_tuning():
            if X_tune is None:
                # Split row indices by the labels themselves, so messages name the label;
                # the partition is the one the binary engine draws for the same seed.
                i_tr, i_tu, _, _ = stratified_split(
                    np.arange(y.size)[:, None], y, self.tune_fraction, self.random_state
                )
                i_tr, i_tu = i_tr.ravel(), i_tu.ravel()
                X_tr, X_tu, c_tr, c_tu = X[i_tr], X[i_tu], codes[i_tr], codes[i_tu]
                fit_data = (X, codes)
            else:
                X_tr, c_tr = X, codes
                X_tu, c_tu = self._tuning_codes(X_tune, y_tune)
                fit_data = None
            if sigmas is None:
                # sigma_M of all labelled points (training and tuning), as the binary
                # engine computes it.
                X_s, c_s = (
                    (X, codes)
                    if fit_data is not None
                    else (np.vstack([X_tr, X_tu]), np.concatenate([c_tr, c_tu]))
                )
                sigmas = default_sigma_grid(X_s, c_s, seed=self.random_state or 0)
        else:
            X_tr, c_tr, X_tu, c_tu, fit_data = X, codes, None, None, None
        counted = {"done": 0}

        def count(done: int, total: int, partial=None) -> None:
            counted["done"] = done
            if progress is not None:
                progress(done, total, partial)

        fitted, X_fit = fit_subproblems(
            self._specs(K),
            X_tr,
            c_tr,
            X_tu,
            c_tu,
            template,
            lambdas=lambdas,
            sigmas=sigmas,
            n_weights=self.n_weights,
            final_n_weights=self.final_n_weights,
            rule=self.rule,
            refit=self.refit,
            solver=self.solver,
            qp_solver=self.qp_solver,
            n_jobs=n_jobs,
            fit_data=fit_data,
            progress=count,
            should_cancel=should_cancel,
        )
        self.subproblems_ = SubproblemSet(fitted, X_fit)
        self.fit_info_ = {
            "scheme": self.scheme,
            "n_subproblems": len(fitted),
            "n_fits": counted["done"],
            "subproblem_seconds": {f.spec.name: f.seconds for f in fitted},
            "n_train": int(X_fit.shape[0]),
            "n_jobs": n_jobs,
            "seconds": time.perf_counter() - start,
        }
        return self

    def _tuning_codes(self, X_tune, y_tune) -> tuple[np.ndarray, np.ndarray]:
        X_tu = validate_predict_data(self, X_tune)
        if y_tune is None:
            raise InputError("X_tune was given without y_tune")
        y_tu = np.asarray(y_tune)
        if y_tu.ndim != 1 or y_tu.shape[0] != X_tu.shape[0]:
            raise InputError("the tuning set's X and y have different lengths")
        if y_tu.dtype.kind == "f" and np.isnan(y_tu).any():
            raise InputError("the tuning label has a missing value")
        unknown = ~np.isin(y_tu, self.classes_)
        if unknown.any():
            raise InputError(f"tuning label {y_tu[unknown][0]!r} is not a training class")
        codes = np.searchsorted(self.classes_, y_tu)
        missing = np.setdiff1d(np.arange(self.classes_.size), codes)
        if missing.size:
            raise InputError(f"class {self.classes_[missing[0]]!r} has no point in the tuning set")
        return X_tu, codes

    # ------------------------------------------------------------------------- predict
    def _estimates(self, X) -> tuple[list[np.ndarray], list[LadderEstimate]]:
        check_is_fitted(self, "subproblems_")
        X = validate_predict_data(self, X)
        decisions = self.subproblems_.decisions(X)
        ests = [
            interpolated_estimate(d, f.weights)
            if self.rule == INTERPOLATE
            else probabilities_from_signs(d > 0, f.weights, self.rule)
            for d, f in zip(decisions, self.subproblems_.fitted, strict=True)
        ]
        return decisions, ests

    def _table(self, ests: list[LadderEstimate], n: int) -> np.ndarray:
        """Pairwise table (n, K, K) of the pair schemes (pairs not fitted stay 1/2)."""
        Q = coupling.empty_table(n, self.classes_.size)
        for f, est in zip(self.subproblems_.fitted, ests, strict=True):
            coupling.set_pair(Q, f.spec.positive, f.spec.negative[0], est.p)
        return Q

    def _combine(self, ests: list[LadderEstimate], n: int) -> dict[str, np.ndarray]:
        """Probabilities (and the pairwise table or raw One-vs-All values) from estimates."""
        K = self.classes_.size
        if self.scheme == "ova":
            raw = np.column_stack([e.p for e in ests])
            m_max = max(f.weights.size + 1 for f in self.subproblems_.fitted)
            proba = normalise(raw, self.ova_normalise, floor=1.0 / (2.0 * m_max * K))
            return {"proba": proba, "raw": raw}
        Q = self._table(ests, n)
        if self.scheme == "pairwise":
            return {"proba": coupling.couple(Q), "table": Q}
        k = self.baseline_index_
        q_base = Q[:, :, k]
        if self.scheme in ("baseline1", "baseline2"):
            return {"proba": coupling.couple_baseline(q_base, k)}
        table = coupling.rebuild_table(q_base, k)
        return {"proba": coupling.couple(table), "table": table}

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; shape (n, K), columns in the order of ``classes_``."""
        _, ests = self._estimates(X)
        return self._combine(ests, ests[0].p.size)["proba"]

    def predict(self, X) -> np.ndarray:
        """Most probable class (TE1); shape (n,)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def predict_vote(self, X) -> np.ndarray:
        """Class with the most pairwise wins (TE2; pairwise, bp1 and bp2 only); shape (n,)."""
        if self.scheme not in VOTING_SCHEMES:
            raise InputError(
                f"max voting needs a full pairwise table; scheme {self.scheme!r} has none "
                f"(use one of {', '.join(VOTING_SCHEMES)})"
            )
        _, ests = self._estimates(X)
        out = self._combine(ests, ests[0].p.size)
        return self.classes_[coupling.vote_predict(out["table"], out["proba"])]

    def raw_ova(self, X) -> np.ndarray:
        """One-vs-All values before normalisation; shape (n, K) (scheme "ova" only)."""
        if self.scheme != "ova":
            raise InputError(
                f"raw One-vs-All values exist only for scheme 'ova', not {self.scheme!r}"
            )
        _, ests = self._estimates(X)
        return np.column_stack([e.p for e in ests])

    def pairwise_table(self, X) -> np.ndarray:
        """Full pairwise table ``Q[i, j, k] = q_{j|(j,k)}``; shape (n, K, K) (voting schemes)."""
        if self.scheme not in VOTING_SCHEMES:
            raise InputError(f"scheme {self.scheme!r} has no full pairwise table")
        _, ests = self._estimates(X)
        return self._combine(ests, ests[0].p.size)["table"]

    def subproblem_ladders(self, X) -> list[LadderView]:
        """Every sub-problem's weights, signs and bracket at ``X`` (n, p), for drawing."""
        decisions, ests = self._estimates(X)
        return [
            LadderView(f.spec.name, f.weights, d > 0, e.lo, e.hi)
            for f, d, e in zip(self.subproblems_.fitted, decisions, ests, strict=True)
        ]

    def report(self, X) -> ProbabilityReport:
        """Probabilities, labels and every sub-problem's bracket for ``X`` (n, p).

        Extra columns: ``lo_<name>`` and ``hi_<name>`` for each sub-problem (``name`` as
        in :class:`LadderView`), ``raw_<class>`` for One-vs-All, ``vote_label`` for the
        schemes with a full pairwise table.
        """
        _, ests = self._estimates(X)
        out = self._combine(ests, ests[0].p.size)
        extra: dict[str, np.ndarray] = {}
        if "table" in out:
            extra["vote_label"] = self.classes_[coupling.vote_predict(out["table"], out["proba"])]
        if "raw" in out:
            for k, c in enumerate(self.classes_):
                extra[f"raw_{c}"] = out["raw"][:, k]
        for f, e in zip(self.subproblems_.fitted, ests, strict=True):
            extra[f"lo_{f.spec.name}"] = e.lo
            extra[f"hi_{f.spec.name}"] = e.hi
        return ProbabilityReport.from_proba(self.classes_, out["proba"], extra)


__all__ = ["SCHEME_INFO", "SCHEMES", "LadderView", "MulticlassWeightedSVMClassifier"]
