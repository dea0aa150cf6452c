"""The strength ledger's tables as Markdown: `nogobot train report LEDGER.yaml --markdown PAGE`.

The ledger (``models/ledger.yaml``) is the one record of the nets' Elo and of the matches;
docs/results.md shows it between two markers, and this module writes what goes between them:
the nets (games, hours, Elo and interval, where each figure comes from) and the matches (newest
first, with their conditions). Nothing outside the markers is touched, and the page's text is
rewritten only when the tables changed.
"""

from __future__ import annotations

from pathlib import Path

from ..core.atomicio import write_atomic
from .report import ReportError

BEGIN = ("<!-- ledger tables: begin (written by `nogobot train report LEDGER.yaml --markdown PAGE`"
         " from the ledger; edit the ledger, not this region) -->")
END = "<!-- ledger tables: end -->"
BEGIN_PREFIX = "<!-- ledger tables: begin"

MATCH_FIELDS = ("a", "b", "conditions", "games", "wins", "losses", "wilson95", "time_losses",
                "date")
TEXT_FIELDS = ("a", "b", "conditions")


def ledger_matches(led: dict, path="ledger") -> list[dict]:
    """The ledger's matches, each with the fields of ``MATCH_FIELDS``.

    An unquoted comma inside a YAML flow mapping (``{a: sp2 (hybrid, weight 0.8), b: rave}``)
    splits a text into a key with no value; such a fragment is joined back to the text before
    it (with ``,`` between digits, as in 3,192), so the table shows what the ledger's author
    wrote. Any other field that is not a match's is refused, naming the match."""
    out = []
    for i, raw in enumerate(led.get("matches") or []):
        if not isinstance(raw, dict):
            raise ReportError(f"{path}: matches[{i}] is not a mapping")
        match: dict = {}
        last = None
        for key, value in raw.items():
            if key in MATCH_FIELDS:
                match[key] = value
                last = key if key in TEXT_FIELDS else None
            elif value is None and last is not None:
                before, piece = str(match[last]), str(key)
                sep = "," if before[-1:].isdigit() and piece[:1].isdigit() else ", "
                match[last] = before + sep + piece
            else:
                raise ReportError(f"{path}: matches[{i}] ({raw.get('a')}): unknown field "
                                  f"{key!r}")
        for key in ("a", "b", "games", "wins", "losses"):
            if key not in match:
                raise ReportError(f"{path}: matches[{i}] needs '{key}'")
        out.append(match)
    return out


def _cell(value) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def _elo(x: float) -> str:
    return "0" if x == 0 else f"{'+' if x > 0 else '−'}{abs(x):g}"


def _count(x) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def nets_table(led: dict) -> list[str]:
    anchor = led.get("anchor")
    rows = [("| net | label | line | self-play games | machine hours | Elo | 95% | where it "
             "comes from |"), "|---|---|---|---|---|---|---|---|"]
    for n in led["nets"]:
        ci = n.get("elo_ci")
        interval = ("anchor" if n["name"] == anchor else
                    f"[{_elo(ci[0])}, {_elo(ci[1])}]" if ci else "")
        hours = f"{n['box_hours']:g}" if "box_hours" in n else ""
        rows.append("| " + " | ".join(_cell(c) for c in (
            n["name"], n.get("short", ""), n.get("line", "campaign"),
            _count(n["selfplay_games"]), hours, _elo(n["elo"]), interval,
            n.get("source", ""))) + " |")
    return rows


def matches_table(matches: list[dict]) -> list[str]:
    rows = ["| date | a | b | games | a's score | Wilson 95% | time losses (a / b) | conditions |",
            "|---|---|---|---|---|---|---|---|"]
    order = sorted(range(len(matches)), key=lambda i: str(matches[i].get("date", "")),
                   reverse=True)  # newest first; the ledger's order within a date
    for m in (matches[i] for i in order):
        w = m.get("wilson95")
        wilson = f"{100 * w[0]:.0f}–{100 * w[1]:.0f}%" if w else ""
        t = m.get("time_losses")
        lost = f"{t.get('a', 0)} / {t.get('b', 0)}" if isinstance(t, dict) else ""
        rows.append("| " + " | ".join(_cell(c) for c in (
            m.get("date", ""), m["a"], m["b"], m["games"], f"{m['wins']}-{m['losses']}", wilson,
            lost, m.get("conditions", ""))) + " |")
    return rows


def ledger_markdown(led: dict, path="ledger") -> str:
    """The region between the markers (the markers excluded)."""
    matches = ledger_matches(led, path)
    games = sum(m["games"] for m in matches)
    lines = ["", "### The nets", ""]
    if led.get("conditions"):
        lines += [_cell(f"Elo anchored on {led.get('anchor')} = 0: {led['conditions']}."), ""]
    if led.get("box_hours_axis"):
        lines += [_cell(f"Machine hours: {led['box_hours_axis']}."), ""]
    lines += nets_table(led)
    lines += ["", "### The matches", "",
              (f"{len(matches)} matches, {games:,} games, newest first; the score is a's "
               "against b."), ""]
    lines += matches_table(matches)
    return "\n".join(lines) + "\n"


def replace_region(text: str, body: str, page="page") -> str:
    """``text`` with what lies between its markers replaced by ``body``."""
    start = text.find(BEGIN_PREFIX)
    end = text.find(END, start)
    if start < 0 or end < 0:
        raise ReportError(f"{page}: no ledger tables region (a line starting '{BEGIN_PREFIX}', "
                          f"then '{END}')")
    head = text[:start] + BEGIN + "\n"
    return head + body + "\n" + text[end:]


def write_ledger_tables(ledger_path, page) -> bool:
    """Rewrite ``page``'s region from the ledger; True when the page changed."""
    from .report import read_ledger

    led = read_ledger(ledger_path)
    page = Path(page)
    try:
        text = page.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{page}: no such page") from None
    new = replace_region(text, ledger_markdown(led, ledger_path), page)
    if new == text:
        return False
    write_atomic(page, new.encode("utf-8"))
    return True
