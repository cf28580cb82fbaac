"""Parameter handling shared by the estimators that fit one binary ladder.

:class:`~wsvmgui.estimators.binary.WeightedSVMClassifier` and
:class:`~wsvmgui.estimators.noncrossing.NonCrossingLadderClassifier` take the same kernel, grid
and penalty parameters; this mixin checks them and turns them into grids in one place.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..ladder.rules import RULES
from ..ladder.tuning import default_lambda_grid, default_n_weights
from ..ladder.weights import check_weights, weight_grid


class LadderParamsMixin:
    """Checks and grids from ``rule``, ``lam``, ``sigma``, ``lambdas``, ``sigmas``,
    ``weights``, ``n_weights`` and ``kernel`` (attributes of the estimator)."""

    def _check_ladder_params(self) -> None:
        """Raise InputError for an unknown rule or a non-positive lambda or sigma."""
        if self.rule not in RULES:
            raise InputError(f"unknown rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.lam is not None and not (np.isfinite(self.lam) and self.lam > 0):
            raise InputError(f"lambda must be a positive number, got {self.lam!r}")
        if self.sigma is not None and not (np.isfinite(self.sigma) and self.sigma > 0):
            raise InputError(f"sigma must be a positive number, got {self.sigma!r}")

    def _weight_grid(self, n: int) -> np.ndarray:
        """Interior weights for ``n`` fitted points; shape (M - 1,)."""
        if self.weights is not None:
            return check_weights(self.weights)
        return weight_grid(default_n_weights(n) if self.n_weights is None else self.n_weights)

    def _lambda_grid(self, n: int) -> np.ndarray:
        """``[lam]``, the user's ``lambdas``, or the default grid for ``n`` points; shape (L,)."""
        if self.lam is not None:
            return np.array([float(self.lam)])
        if self.lambdas is not None:
            return np.asarray(self.lambdas, dtype=float).ravel()
        return default_lambda_grid(n)

    def _given_sigmas(self) -> np.ndarray | None:
        """``[sigma]`` or the user's ``sigmas`` for the RBF kernel; None otherwise."""
        if self.kernel != "rbf":
            return None
        if self.sigma is not None:
            return np.array([float(self.sigma)])
        if self.sigmas is not None:
            return np.asarray(self.sigmas, dtype=float).ravel()
        return None
