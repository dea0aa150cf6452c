"""Settle the engine's moves in engine_moves.py outputs against exact truth: for each move the
truth files do not already settle, solve the position after it (the opponent to move) with
`nogobot solve --max-nodes NODES`; the move wins where that is a loss for the opponent. One
JSON line per move to OUT. Run from the repository root:

    python settle_moves.py OUT.jsonl NODES ENGINE_MOVES.jsonl ...
"""
import json
import subprocess
import sys

MATCH = "tournaments/ledger/gen18-vs-sp7-900/"
TRUTH = ("win-gen18.jsonl", "win-sp7.jsonl", "gen18.jsonl")


def known() -> dict:
    moves = {}
    for name in TRUTH:
        with open(MATCH + "truth/" + name) as f:
            for r in map(json.loads, f):
                moves[(r["game"], r["ply"])] = r["report"]["moves"]
    with open(MATCH + "truth/g002-all.json") as f:
        moves[("002-gen18-vs-sp7", 51)] = json.load(f)["moves"]
    return moves


def main(out_path: str, nodes: str, sources: list[str]) -> None:
    with open(MATCH + "gen18-vs-sp7-900/results.jsonl") as f:
        games = {g["id"]: g for g in map(json.loads, f)}
    truth = known()
    done = set()
    with open(out_path, "w") as out:
        for source in sources:
            with open(source) as f:
                for r in map(json.loads, f):
                    key = (r["game"], r["ply"], r["move"])
                    if key in done:
                        continue
                    done.add(key)
                    record = {"game": r["game"], "ply": r["ply"], "empty": r["empty"],
                              "move": r["move"]}
                    if "solver: win" in r["log"]:
                        record.update(result="win", by="the engine's own proof")
                    elif truth.get(key[:2], {}).get(r["move"]) in ("win", "loss"):
                        record.update(result=truth[key[:2]][r["move"]], by="truth files")
                    else:
                        moves = games[r["game"]]["moves"][:r["ply"]] + [r["move"]]
                        run = subprocess.run(["nogobot", "solve", "--moves", " ".join(moves),
                                              "--max-nodes", nodes, "--json", "--quiet"],
                                             capture_output=True, text=True, timeout=3600)
                        rep = json.loads(run.stdout)
                        flip = {"loss": "win", "win": "loss"}
                        record.update(result=flip.get(rep["result"], "unknown"),
                                      by=f"nogobot solve after it, {rep['nodes']:,} nodes")
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                    print(record, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
