"""One serialisable settings model for a run.

The desktop app binds its settings panel to :class:`RunSettings`, the command line builds
one from its arguments, saved settings files hold its JSON, and every exported CSV's JSON
sidecar and every model file record it, so a result can always be traced to how it was
made.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..errors import InputError
from ..estimators.multiclass import PAIR_TUNINGS
from ..estimators.multiclass import SCHEMES as MULTICLASS_SCHEMES
from ..io.preprocessing import MISSING_CHOICES
from ..ladder.engines import DEFAULT_ENGINE, ENGINES
from ..ladder.rules import RULES
from ..solvers.kernels import KERNELS
from ..solvers.wsvm import SOLVERS
from .schemes import SCHEMES

TUNING_MODES = ("auto", "split", "cv", "tune-set")
#: Most extensions of the binary tuning grid a run may ask for (``tuning_extend``).
MAX_EXTEND = 10
#: ``calibration`` of the ladder schemes that have it (:mod:`wsvmgui.ladder.recalibration`):
#: the command line's ``--calibration`` choices, the settings' validation and the GUI's
#: list all read this tuple.  Every map by name (``"plateau"``: the sigmoid between a
#: fitted floor and ceiling, one of the binary ``"auto"``'s choices since the ninth
#: sitting); ``"auto_plateau"`` is not offered: for the binary scheme it is ``"auto"``.
CALIBRATION_CHOICES = ("none", "auto", "sigmoid", "beta", "isotonic", "spline", "plateau")
#: ``ties`` of the baseline schemes; the tuning scores and rules of the ladder searches.
TIES_CHOICES = ("table", "pairs", "key")
TUNING_SCORES = ("egkl", "brier", "log_loss")
TUNING_RULES = ("min", "one_se", "auto")
SETTINGS_VERSION = 1
#: Largest weight grid M (steps of 1e-5: finer than any estimate needs).
MAX_WEIGHTS = 100_000
#: Largest simplex grid N and polynomial degree accepted.
MAX_JOINT_N = 1000
MAX_DEGREE = 100
#: Penalties and RBF widths whose reciprocal squares are normal float64 numbers.
VALUE_RANGE = (1e-150, 1e150)
#: Largest settings file nesting (a real one nests 3 deep).
MAX_NESTING = 64
_SCHEDULER = re.compile(
    r"((tcp|tls|ucx|ws|wss)://)?([^\s/:\[\]]+|\[[0-9a-fA-F:.]+\]):[0-9]{1,5}", re.ASCII
)


@dataclass
class RunSettings:
    """Everything that defines a run.

    Attributes
    ----------
    scheme : str
        A name from :data:`wsvmgui.app.schemes.SCHEMES`.
    kernel : {"rbf", "linear", "poly"}
    degree, coef0, poly_gamma : polynomial kernel parameters.
    engine : {"path", "auto", "grid"}
        Engine of every binary ladder of the ladder schemes (binary, non-crossing's
        tuning, preconditioned's independent ladder, the divide-and-conquer
        sub-problems): the exact weight path (default) or the grid of weighted SVMs;
        :mod:`wsvmgui.ladder.engines`.
    n_weights : int or None
        M of the binary ladders (None: the default rule for the data size).  The grid
        engine fits these weights; for the path they only set the weights the sign
        ladders are drawn at.
    joint_n : int
        N of the joint simplex grid (d_pi = 1 / N).
    lambdas : list of float or None
        Penalty grid (None: the default for the data size); one value fixes lambda.
    sigmas : list of float or None
        RBF width grid (None: multiples of sigma_M); one value fixes sigma.
    rule : {"count", "extreme"}
    tuning : {"auto", "split", "cv", "tune-set"}
        Tune on a stratified ``tune_fraction`` split of the training data, by stratified
        ``cv_folds``-fold cross-validation, on a given tuning set, or "auto" (each
        scheme's default, stated by ``wsvmgui schemes``: cross-validation for small data
        and a split for large data for the binary ladders, 3-fold cross-validation over
        a coarse grid for the multiclass pair schemes, a split for the costlier
        schemes).  Every scheme receives it as its estimator's ``cv``.
    tune_fraction : float
        Share of the training data held out in "split" mode.
    cv_folds : int
        Folds in "cv" mode.
    refit : bool
        Refit on training plus tuning data after tuning.
    screen : bool
        Screened tuning of the EGKL searches (binary, non-crossing and the
        divide-and-conquer schemes: every cell on a third of the rows first, the 6 best
        on all; only where each fold trains on at least 1000 rows;
        :mod:`wsvmgui.ladder.screening`).
    seed : int
    n_jobs : int
        Worker threads; 0 means all cores.
    scheduler : str
        Address of a Dask scheduler (``tcp://host:8786``) to run the fits on; empty:
        this machine (:func:`wsvmgui.executor.use_scheduler`).
    solver : {"libsvm", "qp"}
    options : dict
        Scheme-specific options (e.g. ``learner`` for Probing, ``level`` for the
        preconditioned SVM, ``normalise`` for One-vs-All).
    missing : {"error", "drop", "impute"}
        Rows with missing values: refuse, leave out, or fill in training medians
        (:mod:`wsvmgui.io.preprocessing`).
    standardize : bool
        Centre and scale every feature by the training rows before the estimator.
    na_values : list of str
        Further cell values that mean "missing" when reading tables.
    calibration : {"none", "auto", "sigmoid", "beta", "isotonic", "spline", "plateau"} or None
        Monotone recalibration of the ladder's estimate (binary and the multiclass
        ladder schemes; docs/notes/calibration.md).  None (and None for the two tuning
        settings below): the estimator's default ("auto", "egkl", and "auto" for the binary
        scheme's rule, "min" for the others).
    ties : {"table", "pairs", "key"}
        How the baseline schemes resolve tied classes.
    tuning_score : {"egkl", "brier", "log_loss"} or None
        What the ladder schemes' tuning minimises (of the recalibrated estimate when
        ``calibration`` is on, for the Brier score and the log loss).
    tuning_rule : {"min", "one_se", "auto"} or None
        The cell of the smallest score, or the smoothest within one standard error;
        ``"auto"`` (the binary and multiclass ladder schemes' default) the widest kernel
        near the smallest score: the binary scheme's within one standard error on any
        split (k folds up to 500 rows, the hold-out above), the multiclass pair schemes'
        within half a standard error on their 3 folds (above 1000 rows with the spline
        pair map where it fits better); else the smallest.
    tuning_extend : int >= 0 or None
        The binary scheme: how many times the lambda x sigma grid may grow by one value
        past an end the tuned cell sits on (0: the grid as given); None: the estimator's
        default.
    pair_tuning : {"folds", "holdout"} or None
        The multiclass pair schemes (pairwise, baseline1/2, bp1/2) on three or more
        classes: what tuning "auto" and blank lambda and sigma grids mean for them
        (``MulticlassWeightedSVMClassifier(pair_tuning=...)``): "folds", 3 stratified
        folds over C in {0.1, 1, 10, 100} x sigma in {0.25, 0.5, 1, 1.5} sigma_M;
        "holdout", a 30% hold-out over the full 7 x 6 grid (as before issue 23's fifth
        sitting).  A tuning mode other than "auto" sets the split and given grids the
        grid, whichever this says.  None (and settings files written before it existed):
        the estimator's default, "folds".
    intervals : bool
        Add per-point 90% intervals for the class probabilities (``p_<class>_lo``,
        ``p_<class>_hi``) to the results; the binary scheme with a calibration only.
    """

    scheme: str = "binary"
    kernel: str = "rbf"
    degree: int = 3
    coef0: float = 1.0
    poly_gamma: float = 1.0
    engine: str = DEFAULT_ENGINE
    n_weights: int | None = None
    joint_n: int = 20
    lambdas: list[float] | None = None
    sigmas: list[float] | None = None
    rule: str = "count"
    tuning: str = "auto"
    tune_fraction: float = 0.3
    cv_folds: int = 5
    refit: bool = True
    screen: bool = True
    seed: int = 0
    n_jobs: int = 0
    scheduler: str = ""
    solver: str = "libsvm"
    options: dict[str, Any] = field(default_factory=dict)
    missing: str = "error"
    standardize: bool = True
    na_values: list[str] = field(default_factory=list)
    calibration: str | None = None
    ties: str = "table"
    tuning_score: str | None = None
    tuning_rule: str | None = None
    tuning_extend: int | None = None
    pair_tuning: str | None = None
    intervals: bool = False

    def validate(self) -> RunSettings:
        """Raise InputError naming the first invalid setting; return self."""
        self._check_types()
        if self.scheme not in SCHEMES:
            raise InputError(f"unknown scheme {self.scheme!r}; choose one of {', '.join(SCHEMES)}")
        if self.kernel not in KERNELS:
            raise InputError(f"unknown kernel {self.kernel!r}; choose one of {', '.join(KERNELS)}")
        if self.engine not in ENGINES:
            raise InputError(
                f"unknown ladder engine {self.engine!r}; choose one of {', '.join(ENGINES)}"
            )
        if self.rule not in RULES:
            raise InputError(f"unknown rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.tuning not in TUNING_MODES:
            modes = ", ".join(TUNING_MODES)
            raise InputError(f"unknown tuning mode {self.tuning!r}; choose one of {modes}")
        if self.solver not in SOLVERS:
            raise InputError(f"unknown solver {self.solver!r}; choose one of {', '.join(SOLVERS)}")
        if self.n_weights is not None and not 2 <= self.n_weights <= MAX_WEIGHTS:
            raise InputError(
                f"the weight grid needs 2 <= M <= {MAX_WEIGHTS} intervals, got {self.n_weights}"
            )
        if not 3 <= self.joint_n <= MAX_JOINT_N:
            raise InputError(f"the simplex grid needs 3 <= N <= {MAX_JOINT_N}, got {self.joint_n}")
        if not 0.0 < self.tune_fraction < 1.0:
            raise InputError(
                f"tune fraction must lie strictly between 0 and 1, got {self.tune_fraction}"
            )
        for name in ("lambdas", "sigmas"):
            grid = getattr(self, name)
            if grid is not None and (not grid or any(not (v > 0) for v in grid)):
                raise InputError(f"{name} must be a non-empty list of positive numbers")
        if not 1 <= self.degree <= MAX_DEGREE:
            raise InputError(
                f"polynomial degree must lie between 1 and {MAX_DEGREE}, got {self.degree}"
            )
        for name in ("coef0", "poly_gamma"):
            if not math.isfinite(getattr(self, name)):
                raise InputError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        if not self.poly_gamma > 0:
            raise InputError(f"poly_gamma must be positive, got {self.poly_gamma!r}")
        if self.scheduler.strip() and not _SCHEDULER.fullmatch(self.scheduler.strip()):
            raise InputError(
                f"scheduler address {self.scheduler!r} is not HOST:PORT or "
                "PROTOCOL://HOST:PORT (e.g. tcp://10.0.0.5:8786)"
            )
        if self.cv_folds < 2:
            raise InputError(f"cross-validation needs at least 2 folds, got {self.cv_folds}")
        if self.n_jobs < 0:
            raise InputError(f"n_jobs must be 0 (all cores) or positive, got {self.n_jobs}")
        if not 0 <= self.seed < 2**32:
            raise InputError(f"seed must lie between 0 and 2**32 - 1, got {self.seed}")
        for name in ("lambdas", "sigmas"):
            grid = getattr(self, name)
            if grid is not None and not all(math.isfinite(v) for v in grid):
                raise InputError(f"{name} must be finite numbers, got {grid}")
            low, high = VALUE_RANGE
            bad = next((v for v in grid or () if not low <= v <= high), None)
            if bad is not None:
                what = "lambda" if name == "lambdas" else "sigma"
                raise InputError(
                    f"{what} {bad!r} is outside {low:g}..{high:g} (its square would over- or "
                    "underflow)"
                )
        if not isinstance(self.options, dict) or _depth(self.options) > MAX_NESTING:
            raise InputError("options nest too deep")
        for name, names in (
            ("calibration", CALIBRATION_CHOICES),
            ("ties", TIES_CHOICES),
            ("tuning_score", TUNING_SCORES),
            ("tuning_rule", TUNING_RULES),
            ("pair_tuning", PAIR_TUNINGS),
        ):
            value = getattr(self, name)
            if value not in names and not (value is None and name != "ties"):
                raise InputError(f"unknown {name} {value!r}; choose one of {', '.join(names)}")
        if self.tuning_extend is not None and not 0 <= self.tuning_extend <= MAX_EXTEND:
            raise InputError(
                f"tuning_extend must be 0 to {MAX_EXTEND} grid extensions, got {self.tuning_extend}"
            )
        if self.tuning_rule == "auto" and self.scheme not in ("binary", *MULTICLASS_SCHEMES):
            raise InputError(
                f"tuning_rule 'auto' is for the binary and the multiclass ladder schemes "
                f"({', '.join(MULTICLASS_SCHEMES)}); got scheme {self.scheme!r} "
                "(choose 'min' or 'one_se')"
            )
        if self.intervals and (self.scheme != "binary" or self.calibration == "none"):
            raise InputError(
                "per-point intervals need the binary scheme and a calibration (e.g. "
                f"calibration 'auto'); got scheme {self.scheme!r}, calibration "
                f"{self.calibration!r}"
            )
        if self.missing not in MISSING_CHOICES:
            choices = ", ".join(MISSING_CHOICES)
            raise InputError(f"unknown missing-value choice {self.missing!r}; choose {choices}")
        return self

    def _check_types(self) -> None:
        """Raise InputError naming the first setting of the wrong type (e.g. from JSON)."""

        def is_int(v: Any) -> bool:
            return isinstance(v, numbers.Integral) and not isinstance(v, bool)

        def is_real(v: Any) -> bool:
            return isinstance(v, numbers.Real) and not isinstance(v, bool)

        for name in (
            "degree",
            "joint_n",
            "seed",
            "n_jobs",
            "cv_folds",
            "n_weights",
            "tuning_extend",
        ):
            value = getattr(self, name)
            if value is None and name in ("n_weights", "tuning_extend"):
                continue
            if not is_int(value):
                raise InputError(f"{name} must be an integer, got {_short(value)}")
            if abs(int(value)) >= 2**63:
                raise InputError(f"{name} is too large ({int(value).bit_length()} bits)")
        for name in ("coef0", "poly_gamma", "tune_fraction"):
            if not is_real(getattr(self, name)):
                raise InputError(f"{name} must be a number, got {getattr(self, name)!r}")
        for name in ("calibration", "ties", "tuning_score", "tuning_rule", "pair_tuning"):
            value = getattr(self, name)
            if not isinstance(value, str) and not (value is None and name != "ties"):
                raise InputError(f"{name} must be a name, got {_short(getattr(self, name))}")
        for name in ("refit", "screen", "intervals"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.standardize, bool):
            raise InputError(f"standardize must be true or false, got {self.standardize!r}")
        if not isinstance(self.scheduler, str):
            raise InputError(f"scheduler must be an address or empty, got {self.scheduler!r}")
        if not isinstance(self.engine, str):
            raise InputError(f"engine must be a name, got {self.engine!r}")
        if not isinstance(self.missing, str):
            raise InputError(f"missing must be a name, got {self.missing!r}")
        if not isinstance(self.na_values, list) or not all(
            isinstance(v, str) for v in self.na_values
        ):
            raise InputError(f"na_values must be a list of strings, got {self.na_values!r}")
        if not isinstance(self.options, dict):
            raise InputError(f"options must be a mapping of names to values, got {self.options!r}")
        for name in ("lambdas", "sigmas"):
            grid = getattr(self, name)
            if grid is not None and (
                not isinstance(grid, (list, tuple)) or not all(is_real(v) for v in grid)
            ):
                raise InputError(f"{name} must be a list of numbers, got {grid!r}")

    def resolved_n_jobs(self) -> int:
        """Worker count with 0 replaced by the number of cores."""
        return self.n_jobs or (os.cpu_count() or 1)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form, with a version tag."""
        out = asdict(self)
        out["settings_version"] = SETTINGS_VERSION
        return out

    def to_json(self) -> str:
        """JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSettings:
        """Build and validate settings from a dict; unknown keys are an error."""
        if not isinstance(data, dict):
            raise InputError("settings must be a JSON object")
        data = dict(data)
        version = data.pop("settings_version", SETTINGS_VERSION)
        if version != SETTINGS_VERSION:
            raise InputError(
                f"settings version {version} is not supported (expected {SETTINGS_VERSION})"
            )
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"unknown setting(s): {', '.join(unknown)[:200]}")
        if _depth(data) > MAX_NESTING:
            raise InputError(f"settings nest more than {MAX_NESTING} deep")
        try:
            return cls(**data).validate()
        except TypeError as exc:
            raise InputError(f"invalid settings: {exc}") from exc

    @classmethod
    def from_json(cls, text: str) -> RunSettings:
        """Parse JSON text into validated settings (strict JSON: no NaN or Infinity)."""
        try:
            data = json.loads(text, parse_constant=_no_constant)
        except RecursionError:
            raise InputError("not valid JSON: nested too deep") from None
        except ValueError as exc:  # JSONDecodeError, NaN, or an integer of > 4300 digits
            why = " ".join(str(exc).split())
            if "integer string conversion" in why:
                why = "an integer has more than 4300 digits"
            raise InputError(f"not valid JSON: {why[:200]}") from None
        return cls.from_dict(data)


def _short(value: Any) -> str:
    """``repr(value)`` cut to 80 characters (and safe for huge integers)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any, limit: int = MAX_NESTING) -> int:
    """Nesting depth of plain JSON data, counted up to ``limit + 1`` (iteratively)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
    return deepest
