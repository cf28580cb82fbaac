"""A binary ladder problem on some rows of the data (the binary estimator has one, a
divide-and-conquer scheme one per sub-problem)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LadderProblem:
    """One binary ladder problem on some rows of the data.

    Attributes
    ----------
    rows : ndarray of int, shape (n_s,)
        Rows of the data that take part (rows of zero sample weight are best left out:
        they change nothing).
    y : ndarray, shape (n_s,)
        Their labels in {-1, +1} (+1 is the class whose probability the ladder estimates).
    name : str
        Sub-problem name for messages and progress events (empty for a binary problem).
    """

    rows: np.ndarray
    y: np.ndarray
    name: str = ""

    def select(self, rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Of ``rows`` (indices into data of ``n`` rows), those in this problem, in order,
        with their labels."""
        label = np.zeros(n)
        label[self.rows] = self.y
        keep = rows[label[rows] != 0]
        return keep, label[keep]

    def size(self, rows: np.ndarray, n: int, sample_weight: np.ndarray | None = None) -> float:
        """How many of ``rows`` are in this problem (their summed sample weight if given)."""
        keep, _ = self.select(np.asarray(rows), n)
        return int(keep.size) if sample_weight is None else float(sample_weight[keep].sum())

    @property
    def what(self) -> str:
        """The problem in messages."""
        return f"sub-problem {self.name}" if self.name else "the problem"
