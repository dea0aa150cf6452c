"""Scale-out on Ray: self-play training, ladders and tournaments across a cluster (``--ray``).

One machine without Ray keeps working as it always did (worker processes); this package is
imported only when a command is given ``--ray``, and only it imports ``ray`` (an optional extra:
``pip install -e ".[cluster]"``). Modules:

* ``connect``: joining a cluster (``auto``, ``HOST:PORT``, ``local``) with a fast, clear error
  when it cannot be reached; every node's nogobot version and code hash checked against the
  driver's.
* ``actors``: ``GameActor`` (an evaluator per actor; self-play with many concurrent games, gating
  and ladder games) and ``ActorPool`` (work queue over the actors; a dead actor's games in flight
  go back to the queue, restarted actors and nodes that join later get work).
* ``training``: ``RayBackend``, the training loop's backend (``train/backend.py``), and
  ``LadderOnRay`` for ``nogobot train ladder``.
* ``tournament``: ``RayGames``, the tournament runner's game executor (a placement group per game
  reserves its cores; the record names the node).
* ``bench``: ``nogobot bench selfplay``: games per hour with and without Ray; driver ingest rate.

The run directory, results files and resume stay on the driver: games come back as Ray objects,
and nothing needs a shared filesystem.
"""

INSTALL_HINT = 'pip install -e ".[cluster]"'


class ClusterError(RuntimeError):
    """The cluster cannot be used as asked; the message (one line) says why and what to do."""


def require_ray():
    """``import ray``, or a ClusterError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ClusterError(f"--ray needs Ray, which is not installed: {INSTALL_HINT} "
                           "(or pip install ray)") from None
    return ray
