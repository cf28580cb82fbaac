"""Issue 23 (branch acc-mc, optional check): recalibrate the baseline schemes' tie pairs too.

BP1 at its defaults against the same with every tie pair recalibrated by the cross-fitted
monotone map on the calibration folds (as the baseline pairs are); iris 5 splits, the
digits subsample 3 splits (the splits of baseline_collapse.py).  Writes
benchmarks/results/tie_pair_recalibration.json.
"""

import json
import time

import numpy as np
from sklearn import datasets
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from wsvmgui.estimators._base import seed_of
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.ladder.recalibration import cross_fitted, fit_calibration
from wsvmgui.multiclass.subproblems import as_ladder_problem


class TieRecal(MulticlassWeightedSVMClassifier):
    def _fit_tie_pairs(self, X, codes, plan, tracker):
        out = super()._fit_tie_pairs(X, codes, plan, tracker)
        self.tie_maps_ = None
        folds = self._calibration_folds(plan, codes, None)
        if self.tie_pairs_ is not None and folds is not None:
            self.tie_maps_ = []
            for f in self.tie_pairs_.fitted:
                prob = as_ladder_problem(f.spec, codes, None)
                p, y = cross_fitted(
                    X,
                    prob,
                    folds,
                    f.kernel,
                    f.lam,
                    f.n_train,
                    f.weights,
                    rule=self.rule,
                    tracker=tracker,
                )
                self.tie_maps_.append(
                    fit_calibration(self.calibration, p, y, seed_of(self.random_state))
                )
        return out

    def _tie_pair_estimates(self, X):
        pairs = super()._tie_pair_estimates(X)
        maps = getattr(self, "tie_maps_", None)
        if not maps:
            return pairs
        return [(a, b, g(p)) for (a, b, p), g in zip(pairs, maps, strict=True)]


def data(name):
    if name == "iris":
        return datasets.load_iris(return_X_y=True)
    X, y = datasets.load_digits(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, train_size=1000, stratify=y, random_state=0)
    return X, y


rows = []
for name, seeds in (("iris", range(5)), ("digits", range(1000, 1003))):
    X, y = data(name)
    for seed in seeds:
        a, b, ya, yb = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
        sc = StandardScaler().fit(a)
        for cls in (MulticlassWeightedSVMClassifier, TieRecal):
            t = time.process_time()
            est = cls(scheme="bp1", n_jobs=1).fit(sc.transform(a), ya)
            P = est.predict_proba(sc.transform(b))
            c = time.process_time() - t
            codes = np.searchsorted(est.classes_, yb)
            ll = float(-np.mean(np.log(np.clip(P[np.arange(yb.size), codes], 1e-15, None))))
            acc = float(np.mean(est.classes_[P.argmax(1)] == yb))
            rows.append(dict(data=name, seed=seed, variant=cls.__name__, acc=acc, ll=ll, cpu=c))
            print(rows[-1], flush=True)
from pathlib import Path  # noqa: E402

Path("benchmarks/results/tie_pair_recalibration.json").write_text(json.dumps(rows, indent=1))
