"""A recalibration's fold fits are not the model's fits: live views must not draw them."""

from __future__ import annotations

import numpy as np

from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.grid import FitEvent


def test_fold_fits_report_the_calibration_stage_and_final_fits_the_model_rows():
    d = simulate("wuliu2011_ex1", 90, 3)
    events: list[FitEvent] = []

    def progress(_done, _total, partial):
        if isinstance(partial, FitEvent):
            events.append(partial)

    est = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_jobs=1, engine="grid", n_weights=6)
    est.fit(d.X, d.y, progress=progress)
    assert est.calibration_ is not None
    final = [e for e in events if e.stage == "final"]
    folds = [e for e in events if e.stage == "calibration"]
    # the model's ladder: one fit per weight, on every training row
    assert len(final) == est.weights_.size
    assert all(e.X.shape[0] == d.X.shape[0] for e in final)
    assert sorted(e.fit.pi for e in final) == sorted(est.weights_.tolist())
    # the cross-fit: each fold's ladder, on that fold's training part only
    assert len(folds) >= 2 * est.weights_.size
    assert all(e.X.shape[0] < d.X.shape[0] for e in folds)
    # a final event's boundary is the model's own ladder at that weight
    m = int(np.argmin(np.abs(est.weights_ - final[0].fit.pi)))
    np.testing.assert_allclose(
        final[0].decision(d.X[:20]), est.ladder_decision(d.X[:20])[:, m], rtol=1e-6, atol=1e-8
    )
