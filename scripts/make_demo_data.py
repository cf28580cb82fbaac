"""Write the demo data set wsvmgui/resources/demo/two_moons_like.csv.

    python scripts/make_demo_data.py [--n 200] [--seed 20261122] [--noise 0.25]

Two interleaved half circles ("moons") in the plane with Gaussian noise, so that the
classes overlap and the class probability varies smoothly between 0 and 1 near the
boundary. Columns: x1, x2, label, with label in {-1, +1} (the binary convention of
wsvmgui.evaluation.designs). Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "wsvmgui" / "resources" / "demo"


def two_moons(n: int, seed: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Sample ``n`` points of two noisy moons.

    Returns
    -------
    X : ndarray of shape (n, 2)
    y : ndarray of shape (n,), values -1 (upper moon) and +1 (lower moon)
    """
    rng = np.random.default_rng(seed)
    n_pos = n // 2
    n_neg = n - n_pos
    t_neg = rng.uniform(0.0, np.pi, n_neg)
    t_pos = rng.uniform(0.0, np.pi, n_pos)
    upper = np.column_stack([np.cos(t_neg), np.sin(t_neg)])
    lower = np.column_stack([1.0 - np.cos(t_pos), 0.5 - np.sin(t_pos)])
    X = np.vstack([upper, lower]) + rng.normal(scale=noise, size=(n, 2))
    y = np.concatenate([-np.ones(n_neg, dtype=int), np.ones(n_pos, dtype=int)])
    order = rng.permutation(n)
    return X[order], y[order]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--noise", type=float, default=0.25)
    parser.add_argument("--out", type=Path, default=OUT / "two_moons_like.csv")
    args = parser.parse_args(argv)
    X, y = two_moons(args.n, args.seed, args.noise)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("x1,x2,label\n")
        for (a, b), label in zip(X, y, strict=True):
            fh.write(f"{a:.4f},{b:.4f},{label}\n")
    print(f"wrote {args.out} ({args.n} rows)")


if __name__ == "__main__":
    main()
