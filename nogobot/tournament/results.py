"""The results file (JSON lines, one finished game per line) and the tables computed from it.

Durability: each game is one ``os.write`` of a complete line on a file opened with O_APPEND,
followed by fsync, under a lock; the SGF is written (atomically) before the line, so the line is
the commit point. On load, a torn last line (a crash during the write, power loss) is cut off
before anything is appended. A game is identified by its key (engine pair in name order + game
index), so a rerun skips finished games and plays only the rest.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .elo import Ratings, bradley_terry, los_head_to_head


class ResultsLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def load(self) -> list[dict]:
        """All complete records; truncates a torn final line so appends stay well formed."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        records, good = [], 0
        pos = 0
        while pos < len(data):
            end = data.find(b"\n", pos)
            if end < 0:
                break  # torn last line: no newline
            line = data[pos:end].strip()
            if line:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    break  # garbage from a torn write; everything after it is dropped too
            pos = end + 1
            good = pos
        if good < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(good)
                f.flush()
                os.fsync(f.fileno())
        return records

    def append(self, record: dict) -> None:
        line = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(line)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                os.fsync(fd)
            finally:
                os.close(fd)


@dataclass
class Pairing:
    a: str
    b: str
    a_wins: int = 0
    b_wins: int = 0
    a_black_wins: int = 0  # a won with black
    a_white_wins: int = 0
    b_black_wins: int = 0
    b_white_wins: int = 0

    @property
    def games(self) -> int:
        return self.a_wins + self.b_wins


@dataclass
class Standings:
    names: list[str]
    ratings: Ratings | None
    wins: dict[str, int] = field(default_factory=dict)
    losses: dict[str, int] = field(default_factory=dict)
    black_record: dict[str, tuple[int, int]] = field(default_factory=dict)  # (won, played)
    white_record: dict[str, tuple[int, int]] = field(default_factory=dict)
    pairings: list[Pairing] = field(default_factory=list)
    reasons: Counter = field(default_factory=Counter)
    losses_by_reason: dict[str, Counter] = field(default_factory=dict)
    black_wins: int = 0
    total: int = 0
    mean_plies: float = 0.0
    move_time: dict[str, tuple[float, float]] = field(default_factory=dict)  # (mean, max) s

    def order(self) -> list[str]:
        """Names sorted by rating (then score)."""
        def key(n):
            r = self.ratings.elo.get(n, float("nan")) if self.ratings else float("nan")
            return (-(r if r == r else -1e9), -self.wins.get(n, 0), n)
        return sorted(self.names, key=key)


def compute_standings(records: list[dict], names: list[str], anchor: str,
                      anchor_elo: float = 0.0) -> Standings:
    st = Standings(names=list(names), ratings=None)
    idx = {n: i for i, n in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    pair: dict[tuple[str, str], Pairing] = {}
    plies = []
    times: dict[str, list[float]] = defaultdict(list)
    for n in names:
        st.wins[n] = st.losses[n] = 0
        st.black_record[n] = (0, 0)
        st.white_record[n] = (0, 0)
        st.losses_by_reason[n] = Counter()
    for r in records:
        b, w, win = r["black"], r["white"], r["winner"]
        if b not in idx or w not in idx:
            continue  # an engine no longer in the spec
        winner, loser = (b, w) if win == "B" else (w, b)
        st.total += 1
        st.black_wins += win == "B"
        st.reasons[r["reason"]] += 1
        st.losses_by_reason[loser][r["reason"]] += 1
        st.wins[winner] += 1
        st.losses[loser] += 1
        bw, bp = st.black_record[b]
        st.black_record[b] = (bw + (win == "B"), bp + 1)
        ww, wp = st.white_record[w]
        st.white_record[w] = (ww + (win == "W"), wp + 1)
        wins[idx[winner], idx[loser]] += 1
        a_, b_ = sorted((b, w))
        p = pair.setdefault((a_, b_), Pairing(a_, b_))
        if winner == a_:
            p.a_wins += 1
            if win == "B":
                p.a_black_wins += 1
            else:
                p.a_white_wins += 1
        else:
            p.b_wins += 1
            if win == "B":
                p.b_black_wins += 1
            else:
                p.b_white_wins += 1
        plies.append(len(r.get("moves", [])))
        skip = r.get("opening_plies", 0)  # the suite's moves: nobody's thinking time
        for i, t in enumerate(r.get("times", [])):
            if i >= skip:
                times[b if i % 2 == 0 else w].append(t)
    st.pairings = sorted(pair.values(), key=lambda p: (names.index(p.a), names.index(p.b)))
    st.mean_plies = float(np.mean(plies)) if plies else 0.0
    st.move_time = {n: (float(np.mean(t)), float(np.max(t))) for n, t in times.items() if t}
    if st.total:
        st.ratings = bradley_terry(names, wins, anchor, anchor_elo)
    return st


def _fmt_elo(st: Standings, n: str) -> tuple[str, str]:
    if st.ratings is None:
        return "-", "-"
    r, ci = st.ratings.elo[n], st.ratings.ci95[n]
    if r != r:
        return "n/a", "-"
    return f"{round(r):+d}", ("anchor" if n == st.ratings.anchor else f"±{ci:.0f}")


def standings_rows(st: Standings) -> list[list[str]]:
    """Rows of the main table (see STANDINGS_HEADER); LOS is against the next engine down."""
    order = st.order()
    rows = []
    for k, n in enumerate(order):
        elo, ci = _fmt_elo(st, n)
        g = st.wins[n] + st.losses[n]
        los = "-"
        if st.ratings is not None and k + 1 < len(order) and g:
            nxt = order[k + 1]
            if st.ratings.connected.get(n) and st.ratings.connected.get(nxt):
                los = f"{100 * st.ratings.los(n, nxt):.0f}%"
        bw, bp = st.black_record[n]
        ww, wp = st.white_record[n]
        mt = st.move_time.get(n)
        rows.append([str(k + 1), n, elo, ci, str(g), f"{st.wins[n]}-{st.losses[n]}",
                     f"{100 * st.wins[n] / g:.0f}%" if g else "-",
                     f"{bw}/{bp}", f"{ww}/{wp}", los,
                     f"{mt[0]:.2f}/{mt[1]:.2f}" if mt else "-"])
    return rows


def loss_reasons_text(st: Standings) -> str:
    """Per engine, the games it lost other than by running out of moves (forfeits, time)."""
    parts = []
    for n in st.order():
        c = Counter({r: k for r, k in st.losses_by_reason[n].items() if r != "no_legal_move"})
        if c:
            parts.append(f"{n}: " + ", ".join(f"{r} {k}" for r, k in c.most_common()))
    return "; ".join(parts)


STANDINGS_HEADER = ["#", "engine", "Elo", "95%", "games", "W-L", "score", "won as B",
                    "won as W", "LOS>next", "s/move avg/max"]
PAIRING_HEADER = ["pairing A vs B", "games", "A-B", "A won as B/W", "B won as B/W", "LOS(A>B)"]


def pairing_rows(st: Standings) -> list[list[str]]:
    rows = []
    for p in st.pairings:
        rows.append([f"{p.a} vs {p.b}", str(p.games), f"{p.a_wins}-{p.b_wins}",
                     f"{p.a_black_wins}/{p.a_white_wins}", f"{p.b_black_wins}/{p.b_white_wins}",
                     f"{100 * los_head_to_head(p.a_wins, p.b_wins):.0f}%"])
    return rows


def summary_dict(st: Standings) -> dict:
    out = {"games": st.total, "black_wins": st.black_wins, "mean_plies": st.mean_plies,
           "reasons": dict(st.reasons), "engines": {}, "pairings": []}
    for n in st.order():
        e = {"wins": st.wins[n], "losses": st.losses[n], "black": st.black_record[n],
             "white": st.white_record[n], "losses_by_reason": dict(st.losses_by_reason[n])}
        if st.ratings is not None:
            e["elo"] = st.ratings.elo[n]
            e["ci95"] = st.ratings.ci95[n]
        out["engines"][n] = e
    if st.ratings is not None:
        out["anchor"] = st.ratings.anchor
        out["prior_draws"] = st.ratings.prior
    for p in st.pairings:
        out["pairings"].append(p.__dict__.copy())
    return out


# ------------------------------------------------------------------------------------------
# A two-engine match: pairs, Elo with interval, SPRT (the maths is sprt.py's)
# ------------------------------------------------------------------------------------------

PENTA_LABELS = ("LL", "LD", "WL", "WD", "WW")  # WL includes DD (none in NoGo)


@dataclass
class MatchStats:
    """``test`` against ``base``, from ``test``'s side."""

    test: str
    base: str
    wins: int = 0
    losses: int = 0
    as_black: tuple[int, int] = (0, 0)  # (won, played)
    as_white: tuple[int, int] = (0, 0)
    penta: list[int] = field(default_factory=lambda: [0] * 5)  # LL, LD, WL+DD, WD, WW
    pairs: int = 0
    elo: object = None  # sprt.EloEstimate, from pairs when there are any, else from games
    llr: float | None = None
    sprt: object = None  # sprt.SprtConfig
    verdict: str | None = None  # "H1"/"H0": the first crossing, in results order
    decided_at: int | None = None  # games recorded when it crossed

    @property
    def games(self) -> int:
        return self.wins + self.losses

    def summary_line(self) -> str:
        s = (f"{self.test} vs {self.base}: {self.games} games, {self.wins}-{self.losses}, "
             f"{self.pairs} pairs (LL {self.penta[0]}, WL {self.penta[2]}, WW {self.penta[4]})")
        if self.elo is not None:
            s += f"; Elo {self.elo.text()}" + (" (pairs)" if self.elo.paired else " (games)")
        if self.sprt is not None and self.llr is not None:
            s += (f"; LLR {self.llr:.2f} [{self.sprt.lower:.2f}, {self.sprt.upper:.2f}]")
            if self.verdict:
                s += f" -> {self.verdict} accepted at game {self.decided_at}"
        return s

    def to_dict(self) -> dict:
        from .sprt import json_number

        out = {"test": self.test, "base": self.base, "games": self.games, "wins": self.wins,
               "losses": self.losses, "as_black": list(self.as_black),
               "as_white": list(self.as_white), "pairs": self.pairs,
               "pentanomial": dict(zip(PENTA_LABELS, self.penta))}
        if self.elo is not None:
            out["elo"] = {"elo": json_number(self.elo.elo), "low95": json_number(self.elo.low),
                          "high95": json_number(self.elo.high),
                          "nelo": json_number(self.elo.nelo), "score": self.elo.score,
                          "from": "pairs" if self.elo.paired else "games", "n": self.elo.n}
        if self.sprt is not None:
            out["sprt"] = {**self.sprt.to_dict(), "lower": self.sprt.lower,
                           "upper": self.sprt.upper, "llr": json_number(self.llr),
                           "verdict": self.verdict, "decided_at": self.decided_at}
        return out


def _pair_of(r: dict) -> tuple | None:
    key = r.get("key")
    if not key or len(key) != 3:
        return None
    return (key[0], key[1], key[2] // 2)


def match_stats(records: list[dict], test: str, base: str, sprt=None) -> MatchStats:
    """The statistics of ``test`` against ``base`` in ``records`` (other games are ignored).

    Games 2j and 2j+1 of the pairing are a pair (one opening, colours swapped); a pair counts
    once both are recorded. The SPRT's verdict is where the LLR first left its bounds, replaying
    the records in file order, so a resumed match reaches the same verdict."""
    from .sprt import elo_estimate, llr

    st = MatchStats(test=test, base=base, sprt=sprt)
    halves: dict[tuple, int] = {}  # pair -> score of the first recorded game
    snapshots: list[tuple[int, list[int]]] = []  # (games so far, pentanomial) per new pair
    bw = bp = ww = wp = 0
    n = 0
    for r in records:
        if {r.get("black"), r.get("white")} != {test, base}:
            continue
        n += 1
        won = (r["winner"] == "B") == (r["black"] == test)
        st.wins += won
        st.losses += not won
        if r["black"] == test:
            bw, bp = bw + won, bp + 1
        else:
            ww, wp = ww + won, wp + 1
        pair = _pair_of(r)
        if pair is not None:
            if pair in halves:
                total = halves.pop(pair) + won  # 0, 1 or 2 games won of the pair
                st.penta[2 * total] += 1
                st.pairs += 1
                snapshots.append((n, list(st.penta)))
            else:
                halves[pair] = int(won)
    if sprt is not None and snapshots:
        # The LLR changes only when a pair completes: one vectorised call for all of them.
        ll = np.atleast_1d(llr(np.array([p for _, p in snapshots], dtype=float), sprt))
        for (games, _), x in zip(snapshots, ll):
            v = sprt.verdict(float(x))
            if v is not None:
                st.verdict, st.decided_at = v, games
                break
    st.as_black, st.as_white = (bw, bp), (ww, wp)
    st.elo = elo_estimate(st.penta) if st.pairs else elo_estimate([st.losses, 0, st.wins])
    if sprt is not None:
        st.llr = llr(st.penta, sprt) if st.pairs else 0.0
    return st


def two_engine_stats(spec, records: list[dict]) -> MatchStats | None:
    """``match_stats`` of a two-engine spec (its tested engine first, with its SPRT, if any);
    None for more engines."""
    if len(spec.engines) != 2:
        return None
    test, base = spec.sprt_engines()
    return match_stats(records, test, base, spec.sprt)
