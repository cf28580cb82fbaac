"""Accuracy against the true probabilities on two binary designs of the papers, and
against tuned Platt scaling on the same data (reduced: 5 seeds; see benchmarks/ for more).

Bounds from the papers
----------------------
Neither paper reports L1; both report Kullback-Leibler-type losses, which bound L1 by
Pinsker's inequality: for one point, |p_hat - p| <= sqrt(KL(p || p_hat) / 2), so by Jensen
the mean per-point error E|p_hat - p| <= sqrt(E KL / 2).

* Wang, Shen & Liu 2008, Table 1, Example 1, Gaussian-kernel SVM, "Our" method: GKL
  0.566 (se 0.0014).  Their GKL is the cross-entropy against the true p, so the KL part is
  0.566 - H(0.8) = 0.566 - 0.5004 = 0.066.
* Wu & Liu 2011, Table 1, Example 1, Wang et al.'s method, test eGLK "2.1591".  Read
  literally this is impossible: the constant estimate 0.5 already has KL 0.488 on this
  design, so the table is scaled.  We take the x100 reading (0.0216; Zeng's tables also
  print x100), which is also the tighter bound and close to the parametric rate
  (d + 1) / (2n) = 0.015 of a correctly specified logistic fit with n = 100.

The estimator's default tunes by 5-fold cross-validated EGKL at this size, where Wang et al.
tune with a covariance-penalty estimate on all 100; a split or fold loses points, so we
allow twice the papers' KL: bound = sqrt(2 KL / 2) = sqrt(KL), i.e. 0.257
(Wang Ex.1) and 0.147 (Wu & Liu Ex.1).  For scale, the constant 0.5 has E|p_hat - p| =
0.300 and 0.413 on the two designs, so the bounds exclude a useless estimator.
Measured with split tuning and M = max(floor(sqrt n), 20) (5 seeds): 0.182 and 0.061; with
the current defaults (CV, M = 40) 0.1715 and 0.0599.  Tuned Platt scaling (split): 0.153 and
0.037, ahead by a factor up to 1.6 on Wu & Liu Ex.1; we assert at most 2.0.  The 10-seed
comparison is benchmarks/results/binary_tuning.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import log_loss

from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.evaluation.baselines import _PlattSVC
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import egkl, l1_error
from wsvmgui.ladder.splits import holdout_split, with_tuning_set
from wsvmgui.ladder.tuning import DEFAULT_C_GRID
from wsvmgui.solvers.kernels import default_sigma_grid

SEEDS = range(5)
N_TRAIN, N_TEST = 100, 5000
PAPER_KL = {"wang2008_ex1": 0.566 - 0.5004, "wuliu2011_ex1": 2.1591 / 100}
PLATT_FACTOR = 2.0


def _platt(X_tr, y_tr, X_tu, y_tu, seed):
    """libsvm's Platt scaling (5-fold CV sigmoid; the baselines' rebuild of
    SVC(probability=True), which scikit-learn 1.11 removes), tuned over C x gamma by
    log-loss on the tuning part, then refitted on training + tuning data."""

    def model(C, sigma):
        return _PlattSVC(C=C, gamma=1 / sigma**2, random_state=seed)

    best = None
    for C in DEFAULT_C_GRID:
        for sigma in default_sigma_grid(X_tr, y_tr):
            m = model(C, sigma).fit(X_tr, y_tr)
            loss = log_loss(y_tu, m.predict_proba(X_tu), labels=m.classes_)
            if best is None or loss < best[0]:
                best = (loss, C, sigma)
    return model(*best[1:]).fit(np.vstack([X_tr, X_tu]), np.concatenate([y_tr, y_tu]))


def _run(design):
    ours, platt, kl_ours = [], [], []
    for seed in SEEDS:
        train = simulate(design, N_TRAIN, seed=seed)
        test = simulate(design, N_TEST, seed=10_000 + seed)
        tr, tu = holdout_split(train.y, 0.3, seed)
        X_tr, X_tu, y_tr, y_tu = train.X[tr], train.X[tu], train.y[tr], train.y[tu]
        X, y, cv = with_tuning_set(X_tr, y_tr, X_tu, y_tu)
        est = WeightedSVMClassifier(random_state=seed, cv=cv).fit(X, y)
        pl = _platt(X_tr, y_tr, X_tu, y_tu, seed)
        p_true = test.p[:, 1]
        P = est.predict_proba(test.X)
        ours.append(np.mean(np.abs(P[:, 1] - p_true)))
        platt.append(np.mean(np.abs(pl.predict_proba(test.X)[:, 1] - p_true)))
        kl_ours.append(egkl(P, test.p))
        # metrics.l1_error on the (n, 2) matrices counts each point twice.
        assert l1_error(P, test.p) == pytest.approx(2 * ours[-1])
    return np.mean(ours), np.mean(platt), np.mean(kl_ours)


@pytest.mark.slow
@pytest.mark.parametrize("design", ["wang2008_ex1", "wuliu2011_ex1"])
def test_binary_accuracy_against_truth_and_platt(design):
    ours, platt, kl = _run(design)
    bound = np.sqrt(PAPER_KL[design])
    print(
        f"\n{design}: mean |p_hat - p| ours {ours:.4f}, tuned Platt {platt:.4f} "
        f"(ratio {ours / platt:.2f}); ours KL {kl:.4f} vs paper {PAPER_KL[design]:.4f}; "
        f"bound {bound:.3f}"
    )
    assert ours < bound
    assert ours <= PLATT_FACTOR * platt
