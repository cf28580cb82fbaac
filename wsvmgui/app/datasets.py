"""Data sets for the desktop app and scripts: built-in examples and train/tune/test splits.

No Qt here.  Built-in data sets are the bundled demo table, every simulation design of
:mod:`wsvmgui.evaluation.designs` (true class probabilities known) and scikit-learn's bundled
wine, iris and breast-cancer tables.  :func:`split_dataset` cuts a data set into training,
tuning and test parts and fits the preprocessing of :mod:`wsvmgui.io.preprocessing` on the
training part (missing values imputed by training medians when asked; features
standardised by training means and spreads), as the command line and model files do.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

import numpy as np

from ..errors import InputError
from ..evaluation.designs import DESIGNS

DEMO_NAME = "demo"
SKLEARN_SETS = {
    "wine": "load_wine",
    "iris": "load_iris",
    "breast_cancer": "load_breast_cancer",
}
#: Default number of points drawn from a simulation design in the app.
DEFAULT_DESIGN_N = 300


@dataclass(frozen=True)
class Dataset:
    """A labelled data set.

    Attributes
    ----------
    name : str
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    feature_names : list of str, length p
    p_true : ndarray, shape (n, K), or None
        True class probabilities (columns follow ``classes``) when known.
    description : str
    label_name : str
        The label column's name (model files record it).
    missing : {"error", "drop", "impute"}
        How missing feature values were handled when reading (NaN stays in ``X`` only
        with "impute": the split fills them with training medians).
    n_dropped : int
        Rows left out for missing values ("drop").
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    p_true: np.ndarray | None = None
    description: str = ""
    label_name: str = "label"
    missing: str = "error"
    n_dropped: int = 0

    @property
    def n_missing(self) -> int:
        """Missing feature cells (NaN) in ``X``."""
        return int(np.isnan(self.X).sum())

    @property
    def classes(self) -> np.ndarray:
        """Sorted distinct labels; shape (K,)."""
        return np.unique(self.y)

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    def summary(self) -> str:
        """One line: size, features, classes and whether the truth is known."""
        classes = ", ".join(str(c) for c in self.classes[:10])
        more = ", ..." if self.n_classes > 10 else ""
        truth = "; true probabilities known" if self.p_true is not None else ""
        gaps = ""
        if self.n_dropped:
            gaps += f"; {self.n_dropped} rows with missing values dropped"
        if self.n_missing:
            gaps += f"; {self.n_missing} missing cells imputed by training medians"
        return (
            f"{self.name}: n = {self.X.shape[0]}, p = {self.X.shape[1]}, "
            f"K = {self.n_classes} (classes {classes}{more}){truth}{gaps}"
        )


def builtin_names() -> list[str]:
    """Names accepted by :func:`load_builtin`, in display order."""
    return (
        [DEMO_NAME]
        + [f"design:{name}" for name in DESIGNS]
        + [f"sklearn:{name}" for name in SKLEARN_SETS]
    )


def builtin_label(name: str) -> str:
    """A readable display label for a built-in name."""
    if name == DEMO_NAME:
        return "Demo: two moons (n = 200, K = 2)"
    kind, _, key = name.partition(":")
    if kind == "design" and key in DESIGNS:
        d = DESIGNS[key]
        return f"Simulation: {d.source} (K = {d.n_classes})"
    if kind == "sklearn" and key in SKLEARN_SETS:
        return f"scikit-learn: {key.replace('_', ' ')}"
    return name


def is_simulation(name: str) -> bool:
    """Whether a built-in name is a simulation design (size and seed apply)."""
    return name.startswith("design:")


def load_demo() -> Dataset:
    """The bundled two-moons table (200 points, two features, labels -1 / +1)."""
    from ..io.tables import read_table, select_xy

    ref = resources.files("wsvmgui") / "resources" / "demo" / "two_moons_like.csv"
    with resources.as_file(ref) as path:
        frame = read_table(path)
    X, y, names = select_xy(frame, "label")
    return Dataset(DEMO_NAME, X, y, names, None, "two interleaved half-moons with noise")


def load_builtin(name: str, n: int | None = None, seed: int = 0) -> Dataset:
    """Load a built-in data set.

    Parameters
    ----------
    name : str
        One of :func:`builtin_names`.
    n : int, optional
        Points drawn from a simulation design (default :data:`DEFAULT_DESIGN_N`); ignored
        for tables.
    seed : int
        Seed of the simulation draw.

    Returns
    -------
    Dataset
    """
    if name == DEMO_NAME:
        return load_demo()
    kind, _, key = name.partition(":")
    if kind == "design":
        if key not in DESIGNS:
            raise InputError(f"unknown design {key!r}; choose one of {', '.join(DESIGNS)}")
        design = DESIGNS[key]
        data = design.sample(DEFAULT_DESIGN_N if n is None else int(n), seed)
        return Dataset(
            name,
            data.X,
            data.y,
            [f"x{j + 1}" for j in range(data.X.shape[1])],
            data.p,
            design.description,
        )
    if kind == "sklearn" and key in SKLEARN_SETS:
        import sklearn.datasets

        bunch = getattr(sklearn.datasets, SKLEARN_SETS[key])()
        y = np.asarray(bunch.target_names)[bunch.target].astype(str)
        return Dataset(
            name,
            np.asarray(bunch.data, dtype=float),
            y,
            [str(f) for f in bunch.feature_names],
            None,
            f"scikit-learn's {key} data",
        )
    raise InputError(
        f"unknown built-in data set {name!r}; choose one of {', '.join(builtin_names())}"
    )


def dataset_from_table(
    path,
    label: str,
    features: list[str] | None = None,
    missing: str = "error",
    na_values: tuple[str, ...] = (),
) -> Dataset:
    """Read a CSV/TSV file and pick its label and feature columns (InputError if bad).

    Parameters
    ----------
    path : path-like
    label : str
    features : list of str, optional
        Default: every other column.
    missing : {"error", "drop", "impute"}
        A missing feature value is an error (naming the first one), drops its row, or is
        kept as NaN for the split to impute.  A missing label is an error, or drops its
        row with "drop".
    na_values : tuple of str
        Further cell values that mean "missing".
    """
    from pathlib import Path

    from ..io.preprocessing import check_complete, check_missing_choice
    from ..io.tables import read_data

    check_missing_choice(missing)
    data = read_data(path, label, features, na_values=na_values)
    n_read = data.n
    if missing == "error":
        check_complete(data, "rows")
    elif missing == "drop":
        data = data.subset(~data.label_missing() & ~np.isnan(data.X).any(axis=1))
    elif data.label_missing().any():
        first = int(data.rows[np.flatnonzero(data.label_missing())[0]])
        raise InputError(
            f"{Path(path).name}: {int(data.label_missing().sum())} rows have no label "
            f"(first row {first}); labels cannot be imputed: choose drop"
        )
    if data.n == 0:
        raise InputError(f"{Path(path).name}: no rows left after dropping missing values")
    y = np.asarray(data.y).astype(str)
    if np.unique(y).size < 2:
        raise InputError(f"label column {label!r} holds a single class; two or more are needed")
    return Dataset(
        Path(path).name,
        np.asarray(data.X, dtype=float),
        y,
        list(data.feature_names),
        None,
        str(path),
        label_name=label,
        missing=missing,
        n_dropped=n_read - data.n,
    )


@dataclass(frozen=True)
class Part:
    """One part of a split.

    Attributes
    ----------
    name : {"train", "tune", "test"}
    index : ndarray of int, shape (m,)
        Rows of the data set.
    X : ndarray, shape (m, p)
        Model inputs (standardised when the split is).
    y : ndarray, shape (m,)
    p_true : ndarray, shape (m, K), or None
    """

    name: str
    index: np.ndarray
    X: np.ndarray
    y: np.ndarray
    p_true: np.ndarray | None

    @property
    def size(self) -> int:
        return int(self.index.size)


@dataclass(frozen=True)
class DataSplit:
    """Training, tuning and test parts of a data set plus its preprocessing.

    Attributes
    ----------
    dataset : Dataset
        The rows as the views show them: missing cells filled with the training medians.
    train, tune, test : Part
    preprocessing : Preprocessing
        Fitted on the training part (:mod:`wsvmgui.io.preprocessing`): model inputs are
        ``preprocessing.transform(X_raw)``.
    source : Dataset
        The data set as read (missing cells NaN); ``dataset`` when it has none.
    """

    dataset: Dataset
    train: Part
    tune: Part
    test: Part
    preprocessing: Any
    source: Dataset
    parts: dict[str, Part] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "parts", {"train": self.train, "tune": self.tune, "test": self.test}
        )

    @property
    def mean(self) -> np.ndarray:
        """Training means (zeros when not standardising); shape (p,)."""
        pre = self.preprocessing
        return pre.means if pre.means is not None else np.zeros(len(pre.feature_names))

    @property
    def scale(self) -> np.ndarray:
        """Training spreads (ones when not standardising); shape (p,)."""
        pre = self.preprocessing
        return pre.scales if pre.scales is not None else np.ones(len(pre.feature_names))

    def same_as(self, other: DataSplit | None) -> bool:
        """Whether ``other`` splits the same data set object into the same rows, with the
        same preprocessing."""
        return (
            other is not None
            and other.source is self.source
            and all(np.array_equal(self.parts[k].index, other.parts[k].index) for k in self.parts)
            and self.preprocessing.to_dict() == other.preprocessing.to_dict()
        )

    def transform(self, X_raw: np.ndarray) -> np.ndarray:
        """Raw inputs (m, p) to model inputs (m, p)."""
        return self.preprocessing.transform(np.asarray(X_raw, dtype=float))

    @property
    def X_all(self) -> np.ndarray:
        """Model inputs of every row of the data set; shape (n, p)."""
        return self.transform(self.dataset.X)

    def part_of_rows(self) -> np.ndarray:
        """Name of the part each data set row belongs to; shape (n,), dtype str."""
        out = np.empty(self.dataset.X.shape[0], dtype=object)
        for name, part in self.parts.items():
            out[part.index] = name
        return out.astype(str)


def _cut(index: np.ndarray, y: np.ndarray, size: int, rng: np.random.Generator):
    """Take ``size`` rows of ``index`` stratified by ``y`` where possible."""
    if size <= 0:
        return index[:0], index
    if size >= index.size:
        raise InputError("the tuning and test parts leave no training data")
    classes, counts = np.unique(y[index], return_counts=True)
    take = np.floor(counts * size / index.size).astype(int)
    # Hand out the remainder to the largest classes, but keep one point of each in the rest.
    order = np.argsort(-counts)
    k = 0
    while take.sum() < size:
        c = order[k % classes.size]
        if take[c] < counts[c] - 1:
            take[c] += 1
        k += 1
        if k > 10 * size + classes.size:
            break
    chosen = []
    for c, t in zip(classes, take, strict=True):
        rows = index[y[index] == c]
        chosen.append(rng.permutation(rows)[:t])
    picked = np.sort(np.concatenate(chosen)) if chosen else index[:0]
    rest = np.setdiff1d(index, picked)
    return picked, rest


def split_dataset(
    dataset: Dataset,
    tune_fraction: float = 0.0,
    test_fraction: float = 0.3,
    seed: int = 0,
    standardise: bool = False,
) -> DataSplit:
    """Split a data set into training, tuning and test parts, stratified by class.

    Parameters
    ----------
    dataset : Dataset
    tune_fraction, test_fraction : float
        Shares of all rows for the tuning and test parts, each in [0, 1), together < 1.
    seed : int
    standardise : bool
        Centre and scale every feature by the training part's mean and standard deviation.
        Missing cells (a data set read with ``missing="impute"``) are filled with the
        training part's medians.

    Returns
    -------
    DataSplit
    """
    for label, frac in (("tune", tune_fraction), ("test", test_fraction)):
        if not 0.0 <= frac < 1.0:
            raise InputError(f"the {label} fraction must lie in [0, 1), got {frac}")
    if tune_fraction + test_fraction >= 0.9:
        raise InputError(
            "the tuning and test fractions together must leave at least 10% for training"
        )
    n = dataset.X.shape[0]
    y = np.asarray(dataset.y)
    rng = np.random.default_rng(seed)
    everything = np.arange(n)
    test_idx, rest = _cut(everything, y, int(round(test_fraction * n)), rng)
    tune_idx, train_idx = _cut(rest, y, int(round(tune_fraction * n)), rng)
    if np.unique(y[train_idx]).size < np.unique(y).size:
        raise InputError("the training part lacks a class; use smaller tuning/test fractions")
    from ..io.preprocessing import Preprocessing

    gaps = bool(np.isnan(dataset.X).any())
    if gaps and dataset.missing != "impute":
        raise InputError(
            f"{dataset.name} has missing values; choose drop or impute for missing values"
        )
    pre = Preprocessing.fit(
        dataset.X[train_idx],
        dataset.feature_names,
        "impute" if gaps else "error",
        bool(standardise),
    )
    source = dataset
    if gaps:  # the views show the rows with the training medians filled in
        medians = np.asarray(pre.medians, dtype=float)  # set by the "impute" fit
        filled = np.where(np.isnan(dataset.X), medians, dataset.X)
        dataset = replace(dataset, X=filled)

    def part(name: str, idx: np.ndarray) -> Part:
        return Part(
            name,
            idx,
            pre.transform(dataset.X[idx]),
            y[idx],
            None if dataset.p_true is None else dataset.p_true[idx],
        )

    return DataSplit(
        dataset,
        part("train", train_idx),
        part("tune", tune_idx),
        part("test", test_idx),
        pre,
        source,
    )
