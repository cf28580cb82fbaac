"""wsvmgui: class probabilities from weighted large-margin classifiers."""

__version__ = "0.1.0"
