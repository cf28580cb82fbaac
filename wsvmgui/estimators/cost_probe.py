"""The price of a fit's units, measured on the actual problem in well under a second.

A :class:`~wsvmgui.estimators.cost_plan.FitPlan` counts what a fit will do; this module
prices it.  For each kind of work a plan holds, a probe
(:mod:`wsvmgui.estimators.cost_kinds`) fits a few real units of a representative size on
the data itself, and this module times them (CPU seconds of the probe's thread, and wall
seconds):

``"ladder"``
    Bare binary ladders (the cell's kernel matrix, the ladder by the plan's engine: path,
    auto or grid, and its estimate of half the rows, as a search's task scores its fold),
    not whole estimator fits, on a stage's rows of the data (the first binary problem: the
    two classes, or one class against the rest), at up to five (lambda, sigma) cells of
    the estimator's grids (its middle, then the ends of each grid: a ladder's cost depends
    on the cell), until about :data:`~wsvmgui.estimators.cost_kinds.TARGET_CPU` CPU
    seconds are spent; a task priced at the geometric mean over the cells.
``"map"``
    A problem's calibration map (``calibration="auto"``'s cross-validated choice, or one
    map) fitted to made-up cross-fitted points of the stage's number, a task each.
``"noncrossing"``
    The non-crossing ladder's constrained fits, at the middle cell; at the width an
    earlier stage chooses (the preconditioned SVM's); or, where the non-crossing
    estimator tunes the width itself, at every width of its grid, priced at their mean
    (the hinge tuning's each weight over the lambda grid).
``"joint"``
    The joint fit's feature map, then its fits of the simplex grid's first weights at
    the middle of its penalty and width grids (and at the narrowest width, if the budget
    allows); the other widths priced by their feature counts.
``"svm"``
    The preconditioned SVM's plain SVMs on a stage's rows: a level's SVMs over the lambda
    grid chosen by hinge loss (engine ``"hinge"``), or one SVM (``"plain"``), a task each.
``"estimator"``
    The estimator itself on the data (Probing), its first units.

Each probe reads ``(CPU, units done)`` at every progress event and fits a line: the CPU of
a task's start (kernel matrix, feature map, a path's whole trace) and of each further
unit.  A stage then costs ``tasks x start + fits x unit``, scaled by ``(rows / probe
rows) ** ROW_EXPONENT`` where its rows differ from the probe's.

The split between start and unit is the fragile part: two readings of one task's clock
decide it, and a task whose work all comes before its first event (or after it) puts
the start at 0 (or the unit).  A stage whose tasks have fewer units than the probe's
(a path traced once, one SVM per level, a fit that reports no units) would then be priced
at almost nothing.  So no task is priced below what the probe *measured* a task of no
more units to cost (:meth:`Price.task_floor`: the CPU at its events, and at its end when
it finished), whatever the split says.

A probe runs on a thread of its own, timed by that thread's CPU clock, and is left at its
share of the wall-clock budget even inside a unit that does not stop (a QP solve): the
thread stops at its next unit.  A probe that has not finished a unit by then gives a
lower bound (the unit, or for a ladder the whole task, takes at least what it spent).
The probes' wall seconds over their CPU seconds say how busy the machine is.

The clocks are module attributes (:data:`cpu_clock`, :data:`wall_clock`): tests replace
them to make a fit "long" by construction rather than by the machine's speed.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import Cancelled, WSVMError
from .cost_plan import FitPlan, Stage

#: CPU seconds for the probes; None: each probe thread's own CPU clock.
cpu_clock: Callable[[], float] | None = None
#: Wall-clock seconds.
wall_clock: Callable[[], float] = time.perf_counter

#: Wall seconds all probes of one estimate take (when the fit is clearly long, or the
#: probes are done sooner).
PROBE_BUDGET = 1.0
#: Wall seconds they may take on a busy machine to measure a fit not clearly long.
PROBE_PATIENCE = 4.0
#: Cost of a fit grows about as the square of its rows (libsvm, the path, the QPs, between
#: the sizes a plan's stages differ by: folds and final fits, a screening third).
ROW_EXPONENT = 2.0
#: The exact path's cost grows faster (its events grow with the rows too): measured on a
#: 20-feature binary problem at a fixed cell, 2.4 from 1000 to 2000 rows and 3.1 from
#: 2000 to 4000 (CPU seconds, one thread; libsvm's grid engine: 2.0 and 2.1).
PATH_ROW_EXPONENT = 2.8


@dataclass(frozen=True)
class Price:
    """CPU seconds of one task's start and of each unit, measured on ``rows`` rows.

    Attributes
    ----------
    start : float
        CPU seconds of a task beyond its units.
    unit : float
        CPU seconds per unit (progress step).
    rows : int
        Rows of the probe's fits.
    lower_bound : bool
        No unit finished within the probe's budget: ``start`` (and ``unit``) are minimums.
    cpu, wall : float
        Seconds the probe took.
    wall_start, wall_unit : float
        Wall seconds the unfinished first unit (``wall_unit``) or task (``wall_start``)
        of a lower bound has taken: on a machine too busy to give the probe CPU time,
        the slowness is the evidence (0 when a unit finished).
    exponent : float
        Exponent of the cost in the rows.
    steps : tuple of tuple of (int, float)
        Per probe task, ``(units done, CPU seconds)`` as measured: at each progress event,
        and at its end when it finished (:meth:`task_floor`).
    """

    start: float
    unit: float
    rows: int
    lower_bound: bool = False
    cpu: float = 0.0
    wall: float = 0.0
    wall_start: float = 0.0
    wall_unit: float = 0.0
    exponent: float = ROW_EXPONENT
    steps: tuple[tuple[tuple[int, float], ...], ...] = ()

    def _scale(self, stage: Stage) -> float:
        return (max(stage.rows, 1) / max(self.rows, 1)) ** self.exponent

    def task_floor(self, units: float) -> float:
        """CPU seconds a task of ``units`` units costs at least, on the probe's rows: the
        median over the probe's tasks of the CPU each had spent on reaching at most that
        many units (0 where none had: the split's start is all there is)."""
        if not self.steps:
            return 0.0
        reached = [max((c for d, c in task if d <= units), default=0.0) for task in self.steps]
        return float(np.median(reached))

    def cost(self, stage: Stage) -> float:
        """CPU seconds of ``stage``: ``tasks x start + fits x unit``, each task at least
        its :meth:`task_floor`."""
        cpu = stage.tasks * self.start + stage.fits * self.unit
        if stage.tasks > 0:
            cpu = max(cpu, stage.tasks * self.task_floor(stage.fits / stage.tasks))
        return float(cpu) * self._scale(stage)

    def wall_floor(self, stage: Stage) -> float:
        """Wall seconds ``stage`` takes at least, as busy as the machine is now, by what
        an unfinished first unit has taken (0 when the probe finished a unit)."""
        return float(stage.tasks * self.wall_start + stage.fits * self.wall_unit) * self._scale(
            stage
        )


_probing: contextvars.ContextVar[bool] = contextvars.ContextVar("wsvmgui_probing", default=False)


def in_probe() -> bool:
    """Whether the caller runs inside a probe (whose fits the cost guard lets through)."""
    return _probing.get()


@contextmanager
def probing() -> Iterator[None]:
    """Mark the fits inside the block as probes."""
    token = _probing.set(True)
    try:
        yield
    finally:
        _probing.reset(token)


class _Stop(WSVMError):
    """Raised inside a probe's fit to stop it."""


def _thread_cpu_clock() -> Callable[[], float]:
    """The calling thread's CPU clock, readable from any thread (:data:`cpu_clock` when a
    test set one; the process's CPU clock where threads have none)."""
    if cpu_clock is not None:
        return cpu_clock
    try:
        clock_id = time.pthread_getcpuclockid(threading.get_ident())
        time.clock_gettime(clock_id)
    except (AttributeError, OSError):
        return time.process_time
    return lambda: time.clock_gettime(clock_id)


class Probe:
    """What one probe has measured so far, shared by its thread and the caller.

    The probe thread fits tasks (:meth:`events` for each); the caller reads
    :meth:`price` whenever it stops waiting, from the tasks finished so far or the one
    under way.

    Parameters
    ----------
    deadline : float
        :data:`wall_clock` time at which the probe is left.
    soft : float
        :data:`wall_clock` time after which the probe starts no further task.
    cancel : callable or None
        The user's cancel.
    per_unit : bool
        A task that has not finished a unit prices its *unit* at what it spent (the
        joint fit's, non-crossing ladder's, a learner's units); else its start (a ladder
        whose trace is its start).
    """

    def __init__(
        self, deadline: float, soft: float, cancel: Callable[[], bool] | None, per_unit: bool
    ) -> None:
        self.deadline = deadline
        self.soft = soft
        self.cancel = cancel
        self.per_unit = per_unit
        self.stopped = threading.Event()
        self.rows = 0
        #: Exponent of the cost in the rows (:data:`PATH_ROW_EXPONENT` for the path).
        self.exponent = ROW_EXPONENT
        self.known_start = 0.0
        self.tasks: list[tuple[float, float, bool]] = []
        #: Per task, ``(units, CPU)`` measured (:meth:`_Events.steps`).
        self.steps: list[tuple[tuple[int, float], ...]] = []
        self.current: _Events | None = None
        self._unfinished = 0.0  # wall seconds of a task that ended without a unit
        self._clock: Callable[[], float] = time.process_time
        self._cpu0 = 0.0
        self._cpu_end: float | None = None
        #: ``factor(tasks) -> float``: the price is the first task's times this (the joint
        #: fit's other widths); None: the median over the tasks.
        self.factor: Callable[[list], float] | None = None

    def started(self) -> None:
        """Called first on the probe thread: its CPU clock starts."""
        self._clock = _thread_cpu_clock()
        self._cpu0 = self._clock()

    def ended(self) -> None:
        """Called last on the probe thread (its clock is gone once it has ended)."""
        self._cpu_end = self._clock() - self._cpu0

    def cpu(self) -> float:
        """CPU seconds of the probe thread so far."""
        if self._cpu_end is not None:
            return self._cpu_end
        try:
            return self._clock() - self._cpu0
        except OSError:  # the thread ended between the check and the read
            return self._cpu_end or 0.0

    def check(self) -> None:
        """Between units: stop when left or past the deadline; raise on the user's cancel."""
        if self.cancel is not None and self.cancel():
            raise Cancelled("cancelled by the user")
        if self.stopped.is_set() or wall_clock() > self.deadline:
            raise _Stop("budget spent")

    def unfinished_wall(self) -> tuple[float, float]:
        """``(wall_start, wall_unit)``: wall seconds of the first task under way when no
        task has finished and it has not finished a unit (else zeros)."""
        if any(not t[2] for t in self.tasks):
            return 0.0, 0.0
        current = self.current
        if current is not None and not current.points:
            spent = max(wall_clock() - current.wall0, self._unfinished)
        elif self._unfinished > 0:
            spent = self._unfinished
        else:
            return 0.0, 0.0
        return (0.0, spent) if self.per_unit else (spent, 0.0)

    def spent(self) -> bool:
        """Past the soft deadline: start no further task."""
        return self.stopped.is_set() or wall_clock() >= self.soft

    def events(self, max_units: int) -> _Events:
        """Record the next task (at most ``max_units`` units)."""
        self.current = _Events(self, max_units)
        return self.current

    def task_done(self) -> tuple[float, float, bool]:
        """Keep the current task's line; returns it."""
        assert self.current is not None
        if not self.current.points:
            self._unfinished = max(self._unfinished, wall_clock() - self.current.wall0)
        line = self.current.line(self.known_start, self.per_unit)
        self.tasks.append(line)
        self.steps.append(self.current.steps())
        self.current = None
        return line

    def measured(self) -> tuple[tuple[tuple[int, float], ...], ...]:
        """The ``(units, CPU)`` steps of the tasks :meth:`price` reads (times the
        :attr:`factor`, as the price is), for :meth:`Price.task_floor`."""
        if self.factor is not None and self.tasks:
            f = self.factor(self.tasks)
            return (tuple((d, c * f) for d, c in self.steps[0]),)
        finished = [s for t, s in zip(self.tasks, self.steps, strict=True) if not t[2]]
        if finished or self.steps:
            return tuple(finished or self.steps)
        current = self.current
        return (current.steps(),) if current is not None else ()

    def price(self) -> tuple[float, float, bool]:
        """``(start, unit, lower_bound)`` of a task: the median over the finished tasks
        (robust to a first one that paid for compiling; a later task cut short is left
        out), else from the task under way."""
        if self.factor is not None and self.tasks:
            start, unit, lower = self.tasks[0]
            f = self.factor(self.tasks)
            return start * f, unit * f, lower
        finished = [t for t in self.tasks if not t[2]] or self.tasks
        if finished:
            return (
                float(np.median([t[0] for t in finished])),
                float(np.median([t[1] for t in finished])),
                any(t[2] for t in finished),
            )
        if self.current is not None:
            return self.current.line(self.known_start, self.per_unit)
        cpu = self.cpu()
        if self.per_unit:
            return self.known_start, max(cpu - self.known_start, 0.0), True
        return cpu, 0.0, True


class _Events:
    """One task of a probe: ``(cpu, done)`` at every progress event; it stops at the
    probe's deadline or after ``max_units``."""

    def __init__(self, probe: Probe, max_units: int) -> None:
        self.probe = probe
        self.max_units = max_units
        self.cpu0 = probe.cpu()
        self.wall0 = wall_clock()
        self.points: list[tuple[float, int]] = []
        self.finished = False

    @property
    def cpu(self) -> float:
        return self.probe.cpu() - self.cpu0

    def progress(self, done: int, total: int, partial: Any = None) -> None:
        self.points.append((self.cpu, int(done)))
        if done >= self.max_units and done < total:
            raise _Stop("enough units")

    def should_cancel(self) -> bool:
        self.probe.check()
        return False

    def steps(self) -> tuple[tuple[int, float], ...]:
        """``(units done, CPU seconds)`` measured: at each event, and at the end of a task
        that finished (with its last event's units, or none)."""
        steps = tuple((d, c) for c, d in self.points)
        if self.finished:
            steps += ((steps[-1][0] if steps else 0, self.cpu),)
        return steps

    def run(self, fit: Callable[..., Any]) -> None:
        """``fit(progress=..., should_cancel=...)`` until it ends or is stopped."""
        try:
            fit(progress=self.progress, should_cancel=self.should_cancel)
            self.finished = True
        except _Stop:
            pass

    def line(self, known_start: float = 0.0, per_unit: bool = False) -> tuple[float, float, bool]:
        """``(start, unit, lower_bound)`` from the events (see the module docstring).

        ``known_start`` is CPU seconds of the task's start measured apart (the joint fit's
        feature map).
        """
        cpu = self.cpu
        if not self.points:  # not one unit: it (or the task) takes at least this long
            if per_unit:
                return known_start, max(cpu - known_start, 0.0), True
            return cpu, 0.0, True
        c1, d1 = self.points[0]
        c2, d2 = self.points[-1]
        if self.finished:
            c2 = cpu  # the task's end (compression, scoring) belongs to its last unit
        elif d2 < self.max_units:  # stopped by the deadline: the unit under way counts
            c2, d2 = cpu, d2 + 1
        unit = (c2 - c1) / (d2 - d1) if d2 > d1 and c2 > c1 else 0.0
        lower = False
        if not self.finished and self.points[-1][1] == d1 and d2 == d1 + 1:
            # one unit done and the next under way: price a unit as the first one (a
            # cold start: rather too much), or the next one's time so far if longer
            first = max(c1 - known_start, 0.0) / max(d1, 1)
            lower = unit > first
            unit = max(unit, first)
        return max(c1 - d1 * unit, 0.0), unit, lower


#: Seconds the caller waits past a probe's deadline for its thread to stop by itself.
GRACE = 0.05
#: Seconds between the caller's looks at the user's cancel while a probe runs.
POLL = 0.02


def _run_probe(
    body: Callable[[Probe], None],
    soft: float,
    hard: float,
    cancel: Callable[[], bool] | None,
    per_unit: bool,
    enough: Callable[[Price], bool] | None = None,
) -> Price:
    """Run ``body(probe)`` on a thread of its own until it ends, or the ``hard`` deadline
    passes, or the ``soft`` one passes and ``enough(price so far)`` holds."""
    probe = Probe(hard, soft, cancel, per_unit)
    failure: list[BaseException] = []
    context = contextvars.copy_context()

    def target() -> None:
        probe.started()
        try:
            with probing():
                body(probe)
        except _Stop:
            pass
        except BaseException as exc:  # the caller raises it
            failure.append(exc)
        finally:
            probe.ended()

    wall0 = wall_clock()

    def price() -> Price:
        start, unit, lower = probe.price()
        floor = probe.unfinished_wall() if lower else (0.0, 0.0)
        return Price(
            start,
            unit,
            max(probe.rows, 1),
            lower,
            probe.cpu(),
            wall_clock() - wall0,
            *floor,
            probe.exponent,
            probe.measured(),
        )

    # not a daemon: left at its deadline, it stops at its next unit; the interpreter waits
    # for it at exit rather than killing it inside compiled code (an abort)
    thread = threading.Thread(target=context.run, args=(target,), name="wsvmgui-probe")
    thread.start()
    while thread.is_alive():
        if cancel is not None and cancel():
            probe.stopped.set()
            raise Cancelled("cancelled by the user")
        now = wall_clock()
        if now > hard + GRACE or (now > soft and (enough is None or enough(price()))):
            break
        thread.join(POLL)
    probe.stopped.set()  # a unit that outlasted the deadline: the thread stops after it
    if failure:  # the user's cancel, or a fit that failed: as the fit itself would
        raise failure[0]
    return price()


@dataclass(frozen=True)
class PricedPlan:
    """A plan with the CPU seconds of each stage.

    Attributes
    ----------
    plan : FitPlan
    cpu : tuple of float
        CPU seconds of each stage.
    lower_bound : tuple of bool
        The stage's price is a minimum (its probe did not finish a unit).
    prices : dict
        ``(kind, engine) -> Price``.
    probe_cpu, probe_wall : float
        Seconds the probes took.
    busy : float
        How much longer than their CPU seconds fits take now (:func:`machine_busy`).
    floor : tuple of float
        Wall seconds each stage takes at least by its probe's unfinished unit
        (:meth:`Price.wall_floor`; 0 for a stage whose probe finished a unit).
    """

    plan: FitPlan
    cpu: tuple[float, ...]
    lower_bound: tuple[bool, ...]
    prices: dict
    probe_cpu: float
    probe_wall: float
    busy: float = 1.0
    floor: tuple[float, ...] = ()

    def seconds(self, cores: int) -> float:
        """Expected wall seconds of the fit, as busy as the machine is now."""
        return float(sum(self.wall_seconds(cores)))

    def wall_seconds(self, cores: int) -> list[float]:
        """Expected wall seconds of each stage, as busy as the machine is now: its idle
        seconds times :attr:`busy`, at least its :attr:`floor`."""
        idle = self.stage_seconds(cores)
        floor = self.floor or (0.0,) * len(idle)
        threads = [max(min(self.plan.threads, s.parallel, cores), 1) for s in self.plan.stages]
        return [max(s * self.busy, f / t) for s, f, t in zip(idle, floor, threads, strict=True)]

    def stage_seconds(self, cores: int) -> list[float]:
        """Wall seconds of each stage on an idle machine: its CPU over the threads it
        can use (the plan's threads, its parallel tasks, the machine's cores)."""
        out = []
        for stage, cpu in zip(self.plan.stages, self.cpu, strict=True):
            threads = max(min(self.plan.threads, stage.parallel, cores), 1)
            out.append(cpu / threads)
        return out


def price_plan(
    estimator: Any,
    X: np.ndarray,
    codes: np.ndarray,
    plan: FitPlan,
    budget: float = PROBE_BUDGET,
    should_cancel: Callable[[], bool] | None = None,
    patience: float | None = None,
    enough: float | None = None,
) -> PricedPlan:
    """Price every stage of ``plan`` by probes of its kinds of work.

    Parameters
    ----------
    estimator : BaseProbabilityClassifier
        With ``classes_`` set (as inside ``fit``).
    X : ndarray, shape (n, p)
    codes : ndarray of int, shape (n,)
    plan : FitPlan
    budget : float
        Wall seconds the probes take together (shared by the kinds of work).
    should_cancel : callable, optional
        The user's cancel (raises :class:`~wsvmgui.errors.Cancelled`).
    patience : float, optional
        Wall seconds the probes may take when, after ``budget``, the fit does not yet
        look longer than ``enough`` seconds (a busy machine): they measure on instead of
        giving a lower bound.  Default: ``budget``.
    enough : float, optional
        Expected wall seconds of the fit beyond which the probes stop at ``budget``
        (the decision it serves is made); None: always at ``budget``.

    Returns
    -------
    PricedPlan
    """
    from .cost_kinds import PROBES

    _load_compiled(plan)
    K = int(np.size(estimator.classes_))
    cores = machine_cores()
    # one probe per kind of work, at the rows of the stage that weighs most
    chosen: dict[tuple[str, str], Stage] = {}
    for stage in plan.stages:
        key = (stage.kind, stage.engine)
        if stage.fits + stage.tasks == 0:
            continue
        best = chosen.get(key)
        if best is None or stage.fits * stage.rows**2 > best.fits * best.rows**2:
            chosen[key] = stage
    prices: dict[tuple[str, str], Price] = {}
    patience = budget if patience is None else max(patience, budget)
    start = wall_clock()

    def over(key: tuple[str, str]) -> Callable[[Price], bool] | None:
        if enough is None:
            return None

        def check(partial: Price) -> bool:
            busy = machine_busy(partial.wall, partial.cpu)
            return _priced(plan, {**prices, key: partial}, busy).seconds(cores) > enough

        return check

    for i, (key, stage) in enumerate(chosen.items()):
        used = wall_clock() - start
        soft = (budget - used) / (len(chosen) - i)
        hard = (patience - used) / (len(chosen) - i)
        body, per_unit = PROBES.get(stage.kind, PROBES["estimator"])
        now = wall_clock()
        prices[key] = _run_probe(
            _bound(body, estimator, X, codes, K, stage),
            now + max(soft, 0.0),
            now + max(hard, 0.0),
            should_cancel,
            per_unit,
            over(key),
        )
        record_busy(prices[key].wall, prices[key].cpu)
    return _priced(plan, prices, machine_busy())


#: The groups of compiled kernels (:data:`wsvmgui.joint.kernels.ENGINE_KERNELS`, the
#: warm-up's) each kind of work uses, when its engine is not libsvm's grid.
KIND_KERNELS: dict[str, tuple[str, ...]] = {
    "ladder": ("ladder",),
    "noncrossing": ("ladder",),
    "joint": ("joint",),
}


def _load_compiled(plan: FitPlan) -> None:
    """Load the compiled kernels the plan's fits use (numba's cache: a second or more of
    CPU, once per process) before a probe's clock starts: the first estimate of a session
    must not price its fits as if they paid for loading them (a ladder's read 16 times its
    repeat; a joint fit's probe finished no unit and gave a lower bound of a tenth of
    the estimate that followed).

    The kernels are the warm-up's own groups (:data:`KIND_KERNELS` of
    :data:`wsvmgui.joint.kernels.ENGINE_KERNELS`), so a kernel added to a group is loaded
    here too.
    """
    from ..joint.kernels import ENGINE_KERNELS

    kinds = {s.kind for s in plan.stages if s.engine != "grid"}
    for group in dict.fromkeys(g for kind in sorted(kinds) for g in KIND_KERNELS.get(kind, ())):
        ENGINE_KERNELS[group]()


def _bound(body: Callable[..., None], *args: Any) -> Callable[[Probe], None]:
    """``body(*args, probe)`` as a function of the probe."""
    return lambda probe: body(*args, probe)


def _priced(plan: FitPlan, prices: dict[tuple[str, str], Price], busy: float) -> PricedPlan:
    cpu, lower, floor = [], [], []
    for stage in plan.stages:
        price = prices.get((stage.kind, stage.engine))
        cpu.append(0.0 if price is None else price.cost(stage))
        lower.append(bool(price is not None and price.lower_bound))
        floor.append(0.0 if price is None else price.wall_floor(stage))
    return PricedPlan(
        plan,
        tuple(cpu),
        tuple(lower),
        prices,
        float(sum(p.cpu for p in prices.values())),
        float(sum(p.wall for p in prices.values())),
        busy,
        tuple(floor),
    )


#: Seconds over which the probes' wall and CPU seconds are pooled into how busy the
#: machine is (a property of the machine that changes slowly; one probe's second is noisy).
BUSY_WINDOW = 180.0
_busy_log: deque[tuple[float, float, float]] = deque()
_busy_lock = threading.Lock()


def record_busy(wall: float, cpu: float) -> None:
    """Pool a probe's wall and CPU seconds into :func:`machine_busy`."""
    with _busy_lock:
        _busy_log.append((wall_clock(), float(wall), float(cpu)))


def machine_busy(wall: float = 0.0, cpu: float = 0.0) -> float:
    """How much longer than their CPU seconds single-threaded fits take now: the probes'
    wall over CPU seconds in the last :data:`BUSY_WINDOW` seconds (and ``wall``, ``cpu``
    not recorded yet), within [1, 20]; 1 on an idle machine."""
    now = wall_clock()
    with _busy_lock:
        while _busy_log and _busy_log[0][0] < now - BUSY_WINDOW:
            _busy_log.popleft()
        walls = wall + sum(w for _, w, _ in _busy_log)
        cpus = cpu + sum(c for _, _, c in _busy_log)
    if cpus <= 0.02:
        return 1.0
    return float(min(max(walls / cpus, 1.0), 20.0))


def machine_cores() -> int:
    """Cores this process may run on."""
    import os

    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)
