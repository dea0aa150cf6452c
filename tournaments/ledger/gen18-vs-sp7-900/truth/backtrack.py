"""Where a match's games were lost, against exact truth: for each game ENGINE lost in a
tournament's results.jsonl, solve the positions with the loser to move, two plies at a time from
26-27 empty points up, with `nogobot solve` within NODES each, until one is not a proven loss (a
proven win: the loser's next move threw it away; or unknown: the budget's horizon). With
--winner, the same for the positions with the winner to move, until one is not a proven win.
One JSON line per position goes to OUT.

    python backtrack.py RESULTS.jsonl ENGINE NODES OUT.jsonl [--winner]
"""
import json
import subprocess
import sys

AREA = 81  # 9x9; NoGo captures nothing, so a position after n moves has AREA - n empty points
FIRST_EMPTY = 26  # start at the loser's last move with at least this many empty points


def solve(moves: list[str], nodes: int) -> dict:
    # `nogobot solve --moves` alternates colours from black when none are named.
    run = subprocess.run(["nogobot", "solve", "--size", "9", "--moves", " ".join(moves),
                          "--json", "-q", "--max-nodes", str(nodes), "--tt-mb", "512"],
                         capture_output=True, text=True)
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError:
        return {"result": "error", "stderr": run.stderr[-300:]}


def main(results: str, engine: str, nodes: int, out_path: str, winner: bool = False) -> None:
    expected = "win" if winner else "loss"
    with open(results) as games, open(out_path, "a") as out:
        for line in games:
            game = json.loads(line)
            side = "black" if (game["winner"] == "B") == winner else "white"
            if game[side] != engine:
                continue
            plies = range(0 if side == "black" else 1, len(game["moves"]), 2)
            start = max(p for p in plies if p <= AREA - FIRST_EMPTY)
            for ply in range(start, 20, -2):
                report = solve(game["moves"][:ply], nodes)
                record = {"game": game["id"], "ply": ply, "empty": AREA - ply, "side": engine,
                          "result": report.get("result"), "report": report}
                out.write(json.dumps(record) + "\n")
                out.flush()
                print(game["id"], ply, AREA - ply, record["result"], report.get("nodes"),
                      report.get("seconds"), flush=True)
                if record["result"] != expected:
                    break


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(float(sys.argv[3])), sys.argv[4],
         winner="--winner" in sys.argv[5:])
