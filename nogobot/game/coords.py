"""Every coordinate conversion in nogobot lives here.

Internally a move is a flat int ``p = row * N + col``. Row 0 is the TOP row (the way boards are
printed), column 0 the left column.

=============  ==============  =========================================================
system         example (9×9)   notes
=============  ==============  =========================================================
flat           0 .. N*N-1      what every kernel, tree and network uses
(row, col)     (0, 0)          row 0 = top
GTP vertex     "A9"            columns A..Z skipping I; row 1 = bottom; any case on input
SGF point      "aa"            read/written by sgfmill; sgf.py maps its (row, col), row 0 = bottom
Botzone        x, y            handled in botzone.py via (row, col)
=============  ==============  =========================================================

``RESIGN`` (-1) is the only non-point move: NoGo has no pass.

The colours are defined here too, once: ``EMPTY, BLACK, WHITE = 0, 1, 2`` (the other colour of
``c`` is ``3 - c``). ``board.py`` re-exports them, but modules on the GTP start-up path (gtp,
sgf, botzone, analysis) import them from here, which does not load numba.
"""

from __future__ import annotations

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # no I, as in every Go program
MIN_SIZE = 2
MAX_SIZE = 19
RESIGN = -1
EMPTY, BLACK, WHITE = 0, 1, 2  # stone colours, board.stones values


def to_flat(row: int, col: int, size: int) -> int:
    return row * size + col


def from_flat(p: int, size: int) -> tuple[int, int]:
    return divmod(p, size)


def to_gtp(p: int, size: int) -> str:
    """Flat index -> GTP vertex ("resign" for RESIGN). Always upper case."""
    if p == RESIGN:
        return "resign"
    row, col = from_flat(p, size)
    return f"{GTP_COLUMNS[col]}{size - row}"


def from_gtp(vertex: str, size: int) -> int:
    """GTP vertex (any case) -> flat index. Raises ValueError for pass, I, or off-board."""
    v = vertex.strip().upper()
    if len(v) < 2 or v[0] not in GTP_COLUMNS or not v[1:].isdigit():
        raise ValueError(f"not a vertex: {vertex!r}")
    col = GTP_COLUMNS.index(v[0])
    number = int(v[1:])
    if col >= size or not 1 <= number <= size:
        raise ValueError(f"vertex off the {size}x{size} board: {vertex!r}")
    return to_flat(size - number, col, size)

