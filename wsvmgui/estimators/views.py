"""What a fitted estimator shows beyond its probabilities: the view capabilities.

The desktop app draws sign ladders, sub-problem boundaries and simplex grids.  Rather than
probing estimators for methods (``hasattr``), it asks which of these capabilities an
estimator has (``isinstance(estimator, LadderViews)``); each is a small mixin that
declares the methods and fitted attributes the views may use.  Every method validates
``X`` and raises :class:`~sklearn.exceptions.NotFittedError` before fitting.

* :class:`LadderViews`, one binary ladder: ``WeightedSVMClassifier``,
  ``NonCrossingLadderClassifier``;
* :class:`SubproblemViews`, several binary ladders: ``MulticlassWeightedSVMClassifier``;
* :class:`SimplexViews`, the weight simplex: ``JointWSVMClassifier``.

The preconditioned SVM and Probing have none (the app draws their class borders only).
What each capability offers:

``LadderViews``
    ``classes_`` (2,); ``weights_`` (M - 1,), the interior weights;
    ``ladder_decision(X) -> (n, M - 1)`` (column m is ``f_{pi_m}``, positive favours
    ``classes_[1]``); ``ladder_signs(X) -> bool (n, M - 1)``; ``estimate(X) ->``
    :class:`~wsvmgui.ladder.rules.LadderEstimate` (``p``, ``lo``, ``hi``, ``monotone`` of
    ``P(classes_[1] | x)``, each (n,)); ``raw_estimate(X)``, the same before the
    recalibration ``recalibration`` (None without one).
``SubproblemViews``
    ``subproblem_ladders(X) -> list[LadderView]`` (name, weights, signs, bracket of every
    binary sub-problem); ``subproblem_decisions(X) -> list[(n, M_s - 1)]`` (decision
    values of every sub-problem's ladder, in the same order).
``SimplexViews``
    ``grid_`` (G, K), the simplex grid weights; ``grid_predictions(X) -> int (n, G)``
    (class index predicted at every grid weight); ``border_weights(X) -> (n, K)``;
    ``class_shares(X) -> (n, K)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..ladder.crossing import LadderDecisions
from ..ladder.rules import LadderEstimate, estimate_from_decision

if TYPE_CHECKING:
    from ..multiclass.subproblems import SubproblemSet


class LadderView(NamedTuple):
    """One binary ladder at a set of points, for drawing.

    Attributes
    ----------
    label : str
        Sub-problem name: ``"b|a,b"`` (the ladder estimates ``q_{b|(a,b)}``; positive
        signs favour b), ``"j|rest"`` (One-vs-All for class j), or ``"P(b): b vs a"`` for
        a binary estimator.
    weights : ndarray, shape (M - 1,)
    signs : ndarray of bool, shape (n, M - 1)
        ``f_{pi_m}(x) > 0``.
    lo, hi : ndarray, shape (n,)
        Bracket of the ladder's own probability (before any recalibration): on the pi
        axis of ``weights``, where ``signs`` change.
    calibrated : ndarray, shape (n,), or None
        The sub-problem's probability as the estimator reports it, through its
        recalibration ``calibration``; None without one.
    calibration : MonotoneMap or None
        The recalibration map (a non-decreasing callable on probabilities).
    """

    label: str
    weights: np.ndarray
    signs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    calibrated: np.ndarray | None = None
    calibration: Any = None


class LadderViews(LadderDecisions):
    """Capability: one fitted binary ladder (see the module docstring).

    Subclasses provide ``_ladder_decision(X)`` for validated inputs, the fitted
    ``weights_`` and the parameter ``rule``; ``_check_X`` comes from the base estimator.
    """

    weights_: np.ndarray
    classes_: np.ndarray
    rule: str

    if TYPE_CHECKING:  # provided by BaseProbabilityClassifier

        def _check_X(self, X) -> np.ndarray: ...

    def _ladder_decision(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _estimate(self, X: np.ndarray) -> LadderEstimate:
        return estimate_from_decision(self._ladder_decision(X), self.weights_, self.rule)

    def _raw_estimate(self, X: np.ndarray) -> LadderEstimate:
        """The ladder's own estimate; estimators with a recalibration override this."""
        return self._estimate(X)

    def raw_estimate(self, X) -> LadderEstimate:
        """The ladder's own estimate before any recalibration (``p``, ``lo``, ``hi``,
        ``monotone``, each (n,)): its bracket lies on the pi axis of the signs."""
        return self._raw_estimate(self._check_X(X))

    @property
    def recalibration(self) -> Any:
        """The fitted map :meth:`estimate` applies to the ladder's own estimate; None."""
        return getattr(self, "calibration_", None)

    def ladder_decision(self, X) -> np.ndarray:
        """Decision values of every weighted fit.

        Parameters
        ----------
        X : array-like, shape (n, p)

        Returns
        -------
        ndarray, shape (n, M - 1)
            Column m is ``f_{pi_m}(x)`` for ``pi_m = weights_[m]``; positive favours
            ``classes_[1]``.
        """
        return self._ladder_decision(self._check_X(X))

    def ladder_signs(self, X) -> np.ndarray:
        """``ladder_decision(X) > 0``; bool array of shape (n, M - 1)."""
        return self.ladder_decision(X) > 0

    def estimate(self, X) -> LadderEstimate:
        """Probability of ``classes_[1]`` with its bracket and monotonicity, each shape (n,)."""
        return self._estimate(self._check_X(X))


class SubproblemViews:
    """Capability: several fitted binary ladders (see the module docstring)."""

    subproblems_: SubproblemSet

    def subproblem_ladders(self, X) -> list[LadderView]:
        """Every sub-problem's weights, signs and bracket at ``X`` (n, p)."""
        raise NotImplementedError

    def subproblem_decisions(self, X) -> list[np.ndarray]:
        """Decision values of every sub-problem's ladder; arrays of shape (n, M_s - 1)."""
        raise NotImplementedError


class SimplexViews:
    """Capability: fits over the simplex of class weights (see the module docstring)."""

    grid_: np.ndarray

    def grid_predictions(self, X) -> np.ndarray:
        """Class index (into ``classes_``) predicted at every grid weight; int (n, G)."""
        raise NotImplementedError

    def border_weights(self, X) -> np.ndarray:
        """Estimated border weight of every point; shape (n, K)."""
        raise NotImplementedError

    def class_shares(self, X) -> np.ndarray:
        """Share of grid weights predicting each class; shape (n, K)."""
        raise NotImplementedError


__all__ = ["LadderView", "LadderViews", "SimplexViews", "SubproblemViews"]
