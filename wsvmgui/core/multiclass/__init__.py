"""Multiclass probabilities by divide and conquer over binary weighted-SVM ladders."""

from .estimator import (
    SCHEME_INFO,
    SCHEMES,
    VOTING_SCHEMES,
    LadderView,
    MulticlassWeightedSVMClassifier,
)

__all__ = [
    "SCHEME_INFO",
    "SCHEMES",
    "VOTING_SCHEMES",
    "LadderView",
    "MulticlassWeightedSVMClassifier",
]
