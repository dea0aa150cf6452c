"""The one driver that feeds searches to the network: ``BatchedSearches`` and ``run_search``.

Searches never call the network themselves: a search is a generator that yields the input planes
of its next batch of leaves and is sent their ``Evaluation`` (``inference.py``). ``BatchedSearches``
drives any number of them, one network call per round for the leaves of all (self-play: many
games; ``nogobot analysis``: many queries, in two pipelined lanes). ``run_search`` drives one
(play), either a batch at a time or pipelined: the network on a thread of its own, one batch
behind the search (``IN_FLIGHT``).

Never imports torch or ``nogobot.train``.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from .inference import Evaluation, Evaluator


@dataclass
class Finished:
    """A search that ended: its ``tag``, and its result or the exception that ended it."""

    tag: Any
    result: Any = None
    error: Exception | None = None
    in_network: bool = False  # the error came from the network call, not from the search


@dataclass
class _Waiting:
    tag: Any
    steps: Any  # the generator
    planes: np.ndarray  # the batch it waits to have evaluated


class BatchedSearches:
    """The one driver of every search (play, self-play, analysis): search generators
    (``search.Searcher.search_steps`` and wrappers of it) yield a batch of input planes, are
    sent its ``Evaluation`` and return their result. ``step`` evaluates the batches that ALL
    the searches started here wait on in one network call per board size (what keeps a GPU
    busy) and sends each search its rows. A lone search is the same loop with one member.

    ``evaluate`` and ``deliver`` are ``step``'s two halves, so a caller may run the network
    call on another thread while it delivers another driver's rows (``analysis.py``'s lanes).
    Errors never escape: each search that fails comes back as a ``Finished`` with ``error``."""

    def __init__(self, evaluator: Evaluator):
        self.evaluator = evaluator
        self.running: list[_Waiting] = []
        self.network_calls = 0
        self.network_rows = 0

    def __len__(self) -> int:
        return len(self.running)

    def tags(self) -> list:
        return [w.tag for w in self.running]

    def start(self, steps, tag: Any = None) -> Finished | None:
        """Run ``steps`` to its first batch; its ``Finished`` if it ended without the network."""
        try:
            self.running.append(_Waiting(tag, steps, next(steps)))
        except StopIteration as done:
            return Finished(tag, done.value)
        except Exception as e:  # noqa: BLE001 -- one failing search never stops the others
            return Finished(tag, error=e)
        return None

    def evaluate(self) -> list[tuple[list[_Waiting], Evaluation | Exception]]:
        """One network call per board size for the searches running now: [(those searches,
        their Evaluation or the exception the call raised)]. Changes nothing else."""
        groups: dict[tuple, list[_Waiting]] = {}
        for w in self.running:
            groups.setdefault(w.planes.shape[1:], []).append(w)
        out: list[tuple[list[_Waiting], Evaluation | Exception]] = []
        for group in groups.values():
            planes = (np.concatenate([w.planes for w in group]) if len(group) > 1
                      else group[0].planes)
            self.network_calls += 1
            self.network_rows += len(planes)
            try:
                out.append((group, self.evaluator.evaluate(planes)))
            except Exception as e:  # noqa: BLE001 -- e.g. a GPU error: these searches fail
                out.append((group, e))
        return out

    def deliver(self, evaluated: list[tuple[list[_Waiting], Evaluation | Exception]]
                ) -> list[Finished]:
        """Send each search of ``evaluated`` (from ``evaluate``) its rows; the searches that
        ended. Searches started since ``evaluate`` keep waiting for the next call."""
        ended: list[Finished] = []
        gone: set[int] = set()
        for group, ev in evaluated:
            if isinstance(ev, Exception):
                for w in group:
                    w.steps.close()
                    gone.add(id(w))
                    ended.append(Finished(w.tag, error=ev, in_network=True))
                continue
            at = 0
            for w in group:
                n = len(w.planes)
                rows = ev if len(group) == 1 else ev.slice(at, at + n)
                at += n
                try:
                    w.planes = w.steps.send(rows)
                except StopIteration as done:
                    gone.add(id(w))
                    ended.append(Finished(w.tag, done.value))
                except Exception as e:  # noqa: BLE001 -- one failing search never stops the rest
                    gone.add(id(w))
                    ended.append(Finished(w.tag, error=e))
        if gone:
            self.running = [w for w in self.running if id(w) not in gone]
        return ended

    def step(self) -> list[Finished]:
        """One network call for everything running, and its delivery: the searches that ended."""
        return self.deliver(self.evaluate())


class _InFlight:
    """``IN_FLIGHT``'s type (one instance, a readable repr)."""

    def __repr__(self) -> str:
        return "IN_FLIGHT"


# What a pipelining driver sends a search in place of an ``Evaluation``: the batch just yielded
# is being evaluated on another thread; select the next one. The search then yields its next
# batch (or ``None`` when it has none and waits), and is sent the evaluations in the order it
# yielded the batches. A plain driver never sends it, so a search has one batch at a time.
IN_FLIGHT = _InFlight()


def run_search(evaluator: Evaluator, steps, lanes: int = 1) -> Any:
    """Drive one search generator with ``evaluator`` to its result (its error is raised).

    With ``lanes`` 2 the network runs on a thread of its own, one batch behind the search: while
    it evaluates one batch the search selects the next (the kernels release Python's lock), so
    the tree's work and the network's overlap on two cores."""
    if lanes >= 2:
        return _run_pipelined(evaluator, steps)
    driver = BatchedSearches(evaluator)
    finished = driver.start(steps)
    while finished is None:
        ended = driver.step()
        finished = ended[0] if ended else None
    if finished.error is not None:
        raise finished.error
    return finished.result


def _run_pipelined(evaluator: Evaluator, steps) -> Any:
    """``run_search`` with two batches in flight (the network on a worker thread)."""
    flying: deque = deque()
    with ThreadPoolExecutor(1, thread_name_prefix="nogobot-network") as pool:
        try:
            request = next(steps)
            while True:
                if request is not None:
                    flying.append(pool.submit(evaluator.evaluate, request))
                    if len(flying) < 2:
                        request = steps.send(IN_FLIGHT)
                        continue
                if not flying:
                    raise RuntimeError("a search waited for an evaluation with none in flight")
                request = steps.send(flying.popleft().result())
        except StopIteration as done:
            return done.value
        finally:
            steps.close()  # a search stopped by an error gives up its batch in flight
            for f in flying:
                f.cancel()
