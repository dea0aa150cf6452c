"""What analysis shows, as text: Leela Zero / KataGo ``info`` lines (Sabaki, Lizzie) and GoGui's
gfx, pspairs, board and table replies, from the candidate moves (``engine.candidates``).

Pure functions of their arguments (no engine state); ``analyze.py`` runs the searches and calls
them. Conventions: a ``Candidate``'s values are for the side to move at the root; GoGui boards
are rows top first; ``INFLUENCE`` values are signed by the mover's colour (GoGui draws positive
values black, negative white); LZ lines use integers x10000, kata lines floats with a point.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.candidates import Candidate
from ..game import coords
from ..game.coords import BLACK, WHITE
from .engine import GtpError, GtpSyntaxError, color, integer, number

COLOUR = {"b": BLACK, "w": WHITE}
NAME = {BLACK: "Black", WHITE: "White"}
_LETTER = {BLACK: "b", WHITE: "w"}
GFX_CANDIDATES = 10  # labelled moves in gfx views

# Heat map palette, cold to hot (GoGui COLOR takes #rrggbb).
_HEAT = ("#fff5b8", "#ffe08a", "#ffc45c", "#ffa23d", "#ff7b2e", "#f2512a", "#d92b2b", "#b01030")


@dataclass
class AnalyzeRequest:
    """Parsed arguments of the lz-/kata- analyze commands."""

    colour: int | None = None
    interval: float = 0.0  # seconds between info lines; 0: only the final one
    minmoves: int = 0
    maxmoves: int = 0  # 0: no cap
    ownership: bool = False


def fmt_visits(n: int) -> str:
    """Short visit counts for board labels: 950, 1.2k, 34k, 1.5M."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def parse_analyze_args(args: tuple[str, ...] | list[str], kata: bool) -> AnalyzeRequest:
    """``[colour] [interval] [key value ...]`` (Leela Zero / KataGo syntax; interval in
    centiseconds). Keys: interval, minmoves, maxmoves, ownership (kata); KataGo's output
    switches rootInfo, pvVisits, pvEdgeVisits, movesOwnership and ownershipStdev are accepted
    and ignored. ``avoid``/``allow`` are refused."""
    req = AnalyzeRequest()
    toks = list(args)
    i = 0
    if i < len(toks):
        try:
            req.colour = COLOUR[color(toks[i])]
            i += 1
        except ValueError:
            pass
    if i < len(toks) and toks[i][:1].isdigit():
        req.interval = _interval(toks[i])
        i += 1
    ignored = {"rootinfo", "pvvisits", "pvedgevisits", "movesownership", "ownershipstdev"}
    while i < len(toks):
        key = toks[i].lower()
        if key in ("avoid", "allow"):
            raise GtpError(f"{key} is not supported")
        if i + 1 >= len(toks):
            raise GtpSyntaxError()
        value = toks[i + 1]
        i += 2
        try:
            if key == "interval":
                req.interval = _interval(value)
            elif key == "minmoves":
                req.minmoves = integer(value)
            elif key == "maxmoves":
                req.maxmoves = integer(value)
            elif key == "ownership" and kata:
                req.ownership = parse_bool(value)
            elif key in ignored and kata:
                parse_bool(value)
            else:
                raise GtpSyntaxError()
        except ValueError:
            raise GtpSyntaxError() from None
    return req


def _interval(token: str) -> float:
    cs = number(token)
    if not 0 <= cs < 1e9:
        raise GtpSyntaxError()
    return cs / 100.0


def parse_bool(token: str) -> bool:
    t = token.lower()
    if t in ("1", "true", "on", "yes"):
        return True
    if t in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"not a boolean: {token!r}")


def info_line(cands: list[Candidate], size: int, kata: bool, *,
              score_lead: dict[int, float] | None = None,
              ownership: list[float] | None = None) -> str:
    """One analysis line: ``info move .. visits .. winrate .. ... pv ..`` per candidate (and
    ``ownership ...`` at the end for kata). LZ: integers x10000; kata: floats with a point."""
    parts = []
    for k, c in enumerate(cands):
        pv = " ".join(coords.to_gtp(p, size) for p in (c.pv or [c.move]))
        move = coords.to_gtp(c.move, size)
        if kata:
            lead = (score_lead or {}).get(c.move, 0.0)
            parts.append(f"info move {move} visits {c.visits} utility {2 * c.winrate - 1:.6f} "
                         f"winrate {c.winrate:.6f} scoreMean {lead:.6f} scoreLead {lead:.6f} "
                         f"prior {c.prior:.6f} lcb {c.lcb:.6f} order {k} pv {pv}")
        else:
            parts.append(f"info move {move} visits {c.visits} "
                         f"winrate {round(10000 * c.winrate)} prior {round(10000 * c.prior)} "
                         f"lcb {round(10000 * c.lcb)} order {k} pv {pv}")
    if kata and ownership is not None:
        parts.append("ownership " + " ".join(f"{v:.6f}" for v in ownership))
    return " ".join(parts)


# -- GoGui ----------------------------------------------------------------------------------------


def board_text(values: list[str], size: int) -> str:
    """A GoGui board reply (dboard, sboard, ...): a leading newline, then rows top first."""
    rows = [" ".join(values[r * size:(r + 1) * size]) for r in range(size)]
    return "\n" + "\n".join(rows)


def visits_gfx(size: int, to_move: int, cands: list[Candidate], pv: list[int], visits: int,
               seconds: float) -> list[str]:
    """gfx lines: squares sized by visits (in the mover's colour), visit counts on the best
    moves but the first of the PV, the PV as numbered stones, and a status line."""
    sign = 1.0 if to_move == BLACK else -1.0
    top = max((c.visits for c in cands), default=0)
    lines = []
    if top > 0:
        lines.append("INFLUENCE " + " ".join(
            f"{coords.to_gtp(c.move, size)} {sign * c.visits / top:.3f}"
            for c in cands if c.visits > 0))
    labels = [f"{coords.to_gtp(c.move, size)} {fmt_visits(c.visits)}"
              for c in cands[:GFX_CANDIDATES] if c.visits > 0 and c.move not in pv[:1]]
    if labels:
        lines.append("LABEL " + " ".join(labels))
    if pv:
        colour, var = to_move, []
        for p in pv:
            var.append(f"{_LETTER[colour]} {coords.to_gtp(p, size)}")
            colour = 3 - colour
        lines.append("VAR " + " ".join(var))
    best = (f", best {coords.to_gtp(cands[0].move, size)} {cands[0].winrate:.1%}"
            if cands else "")
    lines.append(f"TEXT {NAME[to_move]} to move: {visits} visits in {seconds:.1f}s{best}")
    return lines


def policy_gfx(size: int, to_move: int, legal: list[int], p) -> list[str]:
    """gfx heat map of move probabilities ``p`` (indexed by point): COLOR by share of the
    largest, labels in percent on the likeliest moves, and the top three as status text."""
    top = max((float(p[q]) for q in legal), default=0.0)
    if top <= 0:
        return [f"TEXT {NAME[to_move]} has no legal move"]
    buckets: dict[int, list[str]] = {}
    for q in legal:
        share = float(p[q]) / top
        if share >= 0.02:
            level = min(int(share * len(_HEAT)), len(_HEAT) - 1)
            buckets.setdefault(level, []).append(coords.to_gtp(q, size))
    lines = [f"COLOR {_HEAT[level]} {' '.join(pts)}" for level, pts in sorted(buckets.items())]
    ranked = sorted(legal, key=lambda q: -float(p[q]))
    labels = [f"{coords.to_gtp(q, size)} {round(100 * float(p[q]))}"
              for q in ranked[:GFX_CANDIDATES] if p[q] >= 0.005]
    if labels:
        lines.append("LABEL " + " ".join(labels))
    lines.append(f"TEXT {NAME[to_move]} policy: " + ", ".join(
        f"{coords.to_gtp(q, size)} {float(p[q]):.1%}" for q in ranked[:3]))
    return lines


def _winrate_label(c: Candidate) -> str:
    return "WIN" if c.proof > 0 else "LOSS" if c.proof < 0 else f"{round(100 * c.winrate)}%"


def candidates_pspairs(size: int, cands: list[Candidate]) -> str:
    """pspairs: each move labelled with its win rate in percent (WIN/LOSS when proven)."""
    return " ".join(f"{coords.to_gtp(c.move, size)} {_winrate_label(c)}" for c in cands)


def candidates_table(size: int, to_move: int, cands: list[Candidate], visits: int,
                     playouts: int, seconds: float, reason: str) -> str:
    lines = [f"{NAME[to_move]} to move: {visits} visits, {playouts} playouts in "
             f"{seconds:.2f}s ({reason})",
             "move  visits  winrate  prior    lcb  pv"]
    for c in cands:
        wr = _winrate_label(c) if c.proof else f"{c.winrate:.1%}"
        pv = " ".join(coords.to_gtp(p, size) for p in c.pv)
        lines.append(f"{coords.to_gtp(c.move, size):<4} {c.visits:7d}  {wr:>7}  "
                     f"{c.prior:5.1%}  {c.lcb:5.1%}  {pv}")
    return "\n".join(lines)
