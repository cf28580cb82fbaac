"""Layouts of the compiled active-set solver's parameter and result vectors.

Shared by the kernels (:mod:`._active_set_kernel` and the modules it is built from) and
their caller (:mod:`.active_set`): ``prm`` holds the constants of one solve, ``out`` its
results; the ``START_*`` values select how :func:`._active_set_kernel.solve` starts.
"""

from __future__ import annotations

# prm: constants of one solve.
P_RHO, P_EPS_CD, P_EPS_B, P_MAX_EPOCHS, P_TOL, P_START, P_ROUNDS, P_MU, P_MAX_EVENTS = range(9)
P_PATH_ROUNDS, P_SWEEPS = 9, 10
P_SIZE = 11
# Starts of :func:`._active_set_kernel.solve`.
START_COLD, START_FACE, START_PATH = range(3)
# out: results of one solve.
O_KKT, O_GAP, O_OBJ, O_EPOCHS, O_EVENTS, O_STAT_B, O_FACES = range(7)
O_SIZE = 7
