"""Joint multiclass weighted SVM on the weight simplex (Wu, Zhang & Liu 2010).

Modules: :mod:`.simplex_grid` (interior grid, cells, snake order), :mod:`.features`
(inputs or kernel eigenfeatures), :mod:`.subproblem` (convex DCA step, Clarabel, KKT
check), :mod:`.dca` (truncated hinge by DCA), :mod:`.grid_fit` (all grid weights, warm
starts, threads, progress), :mod:`.volumes` (h_k and its inversion), :mod:`.schemes`
(direct and indirect recovery) and :mod:`.estimator` (the scikit-learn estimator).
"""

from .estimator import JointWSVMClassifier

__all__ = ["JointWSVMClassifier"]
