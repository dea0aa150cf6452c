"""A deliberately broken GTP engine for the tournament tests.

Usage: python tests/broken_engine.py MODE [--after K]

It plays the first legal move until its K-th genmove (default 1), then misbehaves:

=========  ===============================================================
crash      exits with status 3 (no reply)
hang       never replies
slow       sleeps 3 s, then plays a legal move
garbage    prints a line that is not a GTP response
illegal    answers an occupied point (or, on an empty board, a move it can't)
pass       answers ``pass``
resign     answers ``resign`` though it has legal moves
notvertex  answers ``= Z99``
error      answers ``? no move for you``
refuse     (on ``play`` instead of genmove) answers ``? illegal move`` to a legal move
hangplay   (on ``play``) never replies
nostart    exits at once, before reading anything
noboard    refuses ``boardsize``
good       never misbehaves
=========  ===============================================================
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from nogobot.game import coords  # noqa: E402
from nogobot.game.board import BLACK, WHITE, Board  # noqa: E402

COLOUR = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


def main() -> int:
    mode = sys.argv[1]
    after = int(sys.argv[sys.argv.index("--after") + 1]) if "--after" in sys.argv else 1
    if mode == "nostart":
        print("cannot start: broken on purpose", file=sys.stderr)
        return 2
    board = Board(9)
    genmoves = plays = 0

    def reply(text: str = "", ok: bool = True) -> None:
        sys.stdout.write(("= " if ok else "? ") + text + "\n\n")
        sys.stdout.flush()

    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        cmd, args = parts[0], parts[1:]
        if cmd == "quit":
            reply()
            return 0
        if cmd == "protocol_version":
            reply("2")
        elif cmd == "list_commands":
            reply("\n".join(["protocol_version", "list_commands", "boardsize", "clear_board",
                             "komi", "play", "genmove", "quit", "time_settings", "time_left"]))
        elif cmd == "boardsize":
            if mode == "noboard":
                reply("unacceptable size", ok=False)
            else:
                board = Board(int(args[0]))
                reply()
        elif cmd == "clear_board":
            board = Board(board.size)
            reply()
        elif cmd == "play":
            plays += 1
            if mode == "hangplay" and plays >= after:
                time.sleep(3600)
            if mode == "refuse" and plays >= after:
                reply("illegal move", ok=False)
                continue
            board.play(coords.from_gtp(args[1], board.size), COLOUR[args[0].lower()])
            reply()
        elif cmd == "genmove":
            genmoves += 1
            colour = COLOUR[args[0].lower()]
            bad = genmoves >= after
            if bad and mode == "crash":
                print("crashing on purpose", file=sys.stderr)
                sys.stderr.flush()
                os._exit(3)
            if bad and mode == "hang":
                time.sleep(3600)
            if bad and mode == "slow":
                time.sleep(3)
            if bad and mode == "garbage":
                sys.stdout.write("I think E5 is nice\n\n")
                sys.stdout.flush()
                continue
            if bad and mode == "pass":
                reply("pass")
                continue
            if bad and mode == "resign":
                reply("resign")
                continue
            if bad and mode == "notvertex":
                reply("Z99")
                continue
            if bad and mode == "error":
                reply("no move for you", ok=False)
                continue
            if bad and mode == "illegal" and board.moves:
                reply(coords.to_gtp(board.moves[-1][1], board.size))  # occupied
                continue
            moves = board.legal_moves(colour)
            if len(moves) == 0:
                reply("resign")
                continue
            p = int(moves[0])
            board.play(p, colour)
            reply(coords.to_gtp(p, board.size))
        else:
            reply()  # komi, time_settings, time_left, anything else: accepted
    return 0


if __name__ == "__main__":
    sys.exit(main())
