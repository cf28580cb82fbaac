"""``wsvmgui demo``: fit a simulation design and print accuracy against the truth."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ..app.capabilities import fit_notes
from ..app.schemes import SCHEMES, fit_scheme
from ..app.settings import RunSettings
from ..errors import InputError
from .console import Progress
from .limits import run_cost_limit

#: Offset of the test sample's seed from the training sample's.
TEST_SEED_OFFSET = 1_000_003


def cmd_demo(args: argparse.Namespace) -> int:
    """``wsvmgui demo``: fit a simulation design and print accuracy against the truth."""
    from ..evaluation.designs import get_design
    from ..evaluation.metrics import truth_metrics

    design = get_design(args.design)
    n = args.n or design.default_n
    train = design.sample(n, seed=args.seed)
    test = design.sample(args.n_test, seed=args.seed + TEST_SEED_OFFSET)
    settings = RunSettings(seed=args.seed)
    if args.scheme:
        settings.scheme = args.scheme
    elif design.n_classes > 2:
        multi = [s.name for s in SCHEMES.values() if s.multiclass and s.availability()[0]]
        if not multi:
            raise InputError(
                f"design {design.name} has {design.n_classes} classes and no "
                "multiclass scheme is available"
            )
        settings.scheme = multi[0]
    print(f"design   {design.name}: {design.source} ({design.description})")
    print(f"data     n = {n} training points, {args.n_test} test points, K = {design.n_classes}")
    start = time.perf_counter()
    progress = Progress(enabled=sys.stderr.isatty())
    with run_cost_limit(args):
        est = fit_scheme(settings, train.X, train.y, progress=progress)
    seconds = time.perf_counter() - start
    p_hat = est.predict_proba(test.X)
    print(f"scheme   {settings.scheme}; fitted in {seconds:.2f} s")
    for text in fit_notes(est.fit_info_):
        print(f"note     {text}")
    fitted = est.fitted_summary()
    chosen = [f"{k} = {fitted[k]:.4g}" for k in ("lambda", "sigma") if fitted[k] is not None]
    if fitted["n_weights"] is not None:
        chosen.append(f"M = {fitted['n_weights']}")
    if chosen:
        print(f"tuned    {', '.join(chosen)}")
    metrics = truth_metrics(p_hat, test.p)
    err = float(np.mean(est.classes_[p_hat.argmax(1)] != test.y))
    bayes = float(np.mean(test.classes[test.p.argmax(1)] != test.y))
    print("accuracy against the true probabilities on the test set:")
    for key, value in metrics.items():
        print(f"  {key:5s} {value:.4f}")
    print(f"  error {err:.4f}  (Bayes error {bayes:.4f})")
    return 0
