"""The traced directions of a weight path joined into one list of breakpoints, and the
merged duplicates split again (the arrays of :class:`~wsvmgui.ladder.path.WeightPath`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .path_tracer import _Records


@dataclass(frozen=True)
class _Flat:
    """Breakpoints in increasing pi as flat arrays (see :class:`WeightPath`)."""

    pis: np.ndarray
    intercepts: np.ndarray
    t_ptr: np.ndarray
    t_idx: np.ndarray
    t_val: np.ndarray
    ev_ptr: np.ndarray
    ev_idx: np.ndarray
    ev_state: np.ndarray
    state0: np.ndarray


def _assemble(down: _Records, up: _Records, state_at_zero: np.ndarray, n: int) -> _Flat:
    """Join the two traced directions into one list of breakpoints in increasing pi.

    ``down`` runs from the start to pi = 0; its records are reversed and so are its events
    (old -> new going down: the state after them, in increasing pi, is the old one).  The
    first records of both directions are the same start and merge (up's values win).
    Within a breakpoint the values are sorted by point, the last one traced winning.
    """
    Rd, Ru = down.pis.size, up.pis.size
    # Output position of every record: down k -> Rd - 1 - k (k >= 1), both starts -> Rd - 1.
    out_d = Rd - 1 - np.arange(Rd)
    out_u = Rd - 1 + np.arange(Ru)
    B = Rd + Ru - 1
    pis = np.empty(B)
    bs = np.empty(B)
    pis[out_d], bs[out_d] = down.pis, down.bs
    pis[out_u], bs[out_u] = up.pis, up.bs

    def rec_of(ptr: np.ndarray) -> np.ndarray:
        return np.repeat(np.arange(ptr.size - 1), np.diff(ptr))

    # Values: down's entries first, each direction in tracing order; keep the last per
    # (breakpoint, point).
    t_rec = np.concatenate([out_d[rec_of(down.t_ptr)], out_u[rec_of(up.t_ptr)]])
    t_idx = np.concatenate([down.t_idx, up.t_idx])
    t_val = np.concatenate([down.t_val, up.t_val])
    key = t_rec * n + t_idx
    order = np.argsort(key, kind="stable")
    key = key[order]
    last = np.append(key[1:] != key[:-1], True) if key.size else np.empty(0, dtype=bool)
    keep = order[last]
    t_counts = np.bincount(t_rec[keep], minlength=B)
    # Events: down's reversed within each breakpoint, as (point, old); up's as (point, new).
    ev_rec_d = out_d[rec_of(down.ev_ptr)]
    ev_rec_u = out_u[rec_of(up.ev_ptr)]
    ev_rec = np.concatenate([ev_rec_d, ev_rec_u])
    second = np.concatenate([np.zeros(ev_rec_d.size), np.ones(ev_rec_u.size)])
    third = np.concatenate([-np.arange(ev_rec_d.size), np.arange(ev_rec_u.size)])
    ev_order = np.lexsort((third, second, ev_rec))
    ev_pt = np.concatenate([down.ev[:, 0], up.ev[:, 0]])[ev_order]
    ev_state = np.concatenate([down.ev[:, 1], up.ev[:, 2]])[ev_order]
    ev_counts = np.bincount(ev_rec, minlength=B)
    return _Flat(
        pis=pis,
        intercepts=bs,
        t_ptr=np.concatenate([[0], np.cumsum(t_counts)]),
        t_idx=t_idx[keep].astype(np.intp),
        t_val=t_val[keep],
        ev_ptr=np.concatenate([[0], np.cumsum(ev_counts)]),
        ev_idx=ev_pt.astype(np.intp),
        ev_state=ev_state.astype(np.int8),
        state0=state_at_zero.astype(np.int8).copy(),
    )


def _expand(flat: _Flat, rep: np.ndarray, reps: np.ndarray, mult: np.ndarray) -> _Flat:
    """From merged duplicates back to the original points (coefficients split evenly)."""
    n = rep.size
    group = np.searchsorted(reps, rep)  # merged index of every original point
    order = np.argsort(group, kind="stable")
    gptr = np.concatenate([[0], np.cumsum(mult)])

    def spread(idx: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        counts = mult[idx]
        cum = np.concatenate([[0], np.cumsum(counts)])
        offsets = np.arange(cum[-1]) - np.repeat(cum[:-1], counts)
        members = order[np.repeat(gptr[idx], counts) + offsets]
        return members, np.repeat(np.arange(idx.size), counts), cum[ptr]

    t_idx, t_from, t_ptr = spread(flat.t_idx, flat.t_ptr)
    ev_idx, ev_from, ev_ptr = spread(flat.ev_idx, flat.ev_ptr)
    del n
    return _Flat(
        pis=flat.pis,
        intercepts=flat.intercepts,
        t_ptr=t_ptr,
        t_idx=t_idx,
        t_val=(flat.t_val / mult[flat.t_idx])[t_from],
        ev_ptr=ev_ptr,
        ev_idx=ev_idx,
        ev_state=flat.ev_state[ev_from],
        state0=flat.state0[group],
    )
