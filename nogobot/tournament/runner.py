"""Run a tournament: schedule, pre-flight check, parallel games, resume, progress and summary.

Design decisions:

* **A fresh engine process per game** (per colour). This is the simplest way to get a clean
  state, and it makes crash recovery automatic: a crashed or hung engine loses that game and the
  next game starts a new process. Start-up is not on the clock (the clock starts at the first
  ``genmove``), and engines get ``startup_timeout`` to answer their first command.
* **Parallelism** is games on threads (``--jobs``); the engines are subprocesses, so threads are
  enough. Each engine gets ``threads`` (default 1) in OMP/NUMBA/MKL/OPENBLAS_NUM_THREADS so that
  jobs × threads can be kept within the cores.
* **Resume:** results.jsonl is appended game by game (see results.py); rerunning the same spec
  with the same ``--out`` plays only the games that have no line yet. Games in flight when the
  harness was killed are replayed from scratch.
* **Openings and pairs:** games 2j and 2j+1 of a pairing are a pair: the same start position
  (opening j of the suite, cycling; the empty board without a suite), colours swapped. Game
  ids stay ``NNN-A-vs-B`` (NNN = k+1) and each record carries ``pair`` and ``opening``.
* **SPRT** (two engines only): after every recorded game the LLR of the finished pairs is
  computed (results.match_stats); once it leaves its bounds no new game starts. Games already
  in flight are played out and recorded (their engines' time is spent, and the last pair is
  completed more often than not); the verdict stays the one at the crossing, and the final
  tables show the LLR over every recorded game too. A rerun replays the records to the same
  crossing, so a resumed test continues (or reports) the same test.
* **Pre-flight:** before any game, every engine is started once and must answer
  ``protocol_version`` and accept ``boardsize``; otherwise nothing is played.
* **Where games run** is a game executor: ``LocalGames`` (threads here, the default) or
  ``nogobot.cluster.RayGames`` (each game on a cluster node that reserved its cores; the record
  then names the node). Resume and the summary stay here; the schedule, the thread pool and
  the SPRT's stop are scheduler.py's, saving a game recorder.py's, the live view display.py's.

Output directory (the spec's ``results:``, else ``tournaments/results/<spec name>/``):
``results.jsonl``, ``games.sgf`` (every game, one SGF collection), ``logs.tar.gz`` (engine
stderr; ``logs/`` while games run), ``standings.txt``, ``summary.json`` and, with ``--plot``,
``standings.png`` (folder.py).
"""

from __future__ import annotations

import concurrent.futures as cf
import fcntl
import json
import os
import tempfile
import threading
from contextlib import contextmanager, nullcontext
from pathlib import Path

from rich.console import Console

from ..core.atomicio import write_atomic
from . import netfiles
from .display import LiveView, game_line, plot_standings, render_summary, shown, summary_text
from .folder import GAMES, GameCollection, pack_folder, pack_logs
from .gtp_client import EngineError, GtpProcess
from .recorder import Recorder
from .referee import EngineConfig, GameResult, Interrupted, Referee
from .results import ResultsLog, compute_standings, summary_dict, two_engine_stats
from .scheduler import GameTask, SprtStop, game_argv, play_all, schedule
from .spec import TournamentSpec


class TournamentError(Exception):
    """Bad input discovered before any game was played (message is for the user)."""


def default_out(spec: TournamentSpec) -> Path:
    """The folder the spec names (``results:``), else ``tournaments/results/<name>/``."""
    if spec.results is not None:
        return Path(spec.results)
    return Path("tournaments") / "results" / spec.name


# ------------------------------------------------------------------------------------------
# Checks before any game
# ------------------------------------------------------------------------------------------


def preflight(spec: TournamentSpec, names: list[str], jobs: int) -> None:
    """Start each engine once; raise TournamentError listing every engine that fails."""

    def check(name: str) -> str | None:
        e = spec.engines[name]
        with tempfile.NamedTemporaryFile(prefix=f"nogobot-{name}-", suffix=".log") as log:
            try:
                eng = GtpProcess(game_argv(e.argv, None, name), name=name, cwd=e.cwd,
                                 env=e.environment(),
                                 stderr_path=log.name)
            except EngineError as err:
                return f"engine {name!r} ({e.command}) does not start: {err}"
            try:
                ok, _, _ = eng.command("protocol_version", spec.startup_timeout)
                ok, text, _ = eng.command(f"boardsize {spec.board_size}", spec.command_timeout)
                if not ok:
                    return (f"engine {name!r} ({e.command}) refuses boardsize "
                            f"{spec.board_size}: {text}")
                eng.command("clear_board", spec.command_timeout)
                return None
            except EngineError as err:
                return f"engine {name!r} ({e.command}) failed its start-up check: {err}"
            finally:
                eng.close(grace=2.0)

    with cf.ThreadPoolExecutor(max_workers=max(1, min(jobs, len(names)))) as pool:
        problems = [p for p in pool.map(check, names) if p]
    if problems:
        raise TournamentError("\n".join(problems))


class LocalGames:
    """The default game executor: games on this machine's threads, engines as subprocesses."""

    def workers(self, jobs: int) -> int:
        return jobs

    def check(self, spec: TournamentSpec, names: list[str], jobs: int, console: Console) -> None:
        busy = jobs * max(spec.engines[n].threads for n in names)
        if busy > (os.cpu_count() or 1):
            console.print(f"[yellow]note:[/] {jobs} jobs x up to "
                          f"{max(spec.engines[n].threads for n in names)} threads per engine > "
                          f"{os.cpu_count()} cores; timed games may suffer")

    def preflight(self, spec: TournamentSpec, names: list[str], jobs: int) -> None:
        preflight(spec, names, jobs)

    def play(self, spec: TournamentSpec, task: GameTask, out: Path, stop: threading.Event,
             on_move, live: set, live_lock: threading.Lock) -> tuple[GameResult, dict]:
        """Play one game (raises ``Interrupted`` when ``stop`` is set); returns its result and
        extra fields for its record (none here)."""
        cfg = {n: EngineConfig(n, game_argv(spec.engines[n].argv, task, n),
                               spec.engines[n].cwd, spec.engines[n].environment(),
                               spec.engines[n].time)
               for n in (task.black, task.white)}
        ref = Referee(cfg[task.black], cfg[task.white], size=spec.board_size, time=spec.time,
                      startup_timeout=spec.startup_timeout,
                      command_timeout=spec.command_timeout, log_dir=out / "logs",
                      game_id=task.game_id, stop=stop, on_move=on_move, live=live,
                      live_lock=live_lock,
                      opening=task.opening.moves if task.opening is not None else ())
        return ref.play(), {}

    def cancel(self) -> None:
        """Stop games in flight (local engines are killed by the runner itself)."""


def check_resume(spec: TournamentSpec, records: list[dict], results_path: Path) -> None:
    """Refuse to mix results of a different engine command, clock, board size or opening suite
    into this run. Commands are compared word for word, but for the nets and books they name,
    compared by content (netfiles): a net that moved with the same bytes resumes."""
    for r in records:
        if "key" in r:
            op = spec.opening_of(r["key"][2])
            if r.get("opening") != (op.name if op is not None else None):
                raise TournamentError(
                    f"{results_path}: game {r.get('id')} started from "
                    f"{r.get('opening') or 'the empty board'}, but the spec now gives it "
                    f"{op.name if op is not None else 'the empty board'}; use another --out "
                    "(or restore the openings) so results are not mixed")
        if r.get("size") != spec.board_size:
            raise TournamentError(
                f"{results_path} holds games on a {r.get('size')}x{r.get('size')} board but the "
                f"spec says {spec.board_size}; use another --out")
        for colour in ("black", "white"):
            name = r[colour]
            cmd = r.get("commands", {}).get(colour)
            if name not in spec.engines or cmd is None:
                continue
            now = spec.engines[name]
            why = netfiles.mismatch(cmd, r.get("files", {}).get(colour, {}), now.command,
                                    now.cwd)
            if why is not None:
                raise TournamentError(
                    f"{results_path}: engine {name!r} played earlier games as {cmd!r}, but the "
                    f"spec now says {now.command!r}{': ' + why if why else ''}; use another "
                    "--out (or restore the command) so results are not mixed")
        if r["black"] in spec.engines and r["white"] in spec.engines:
            now = spec.describe_time((r["black"], r["white"]))
            if r.get("time_control", now) != now:
                raise TournamentError(
                    f"{results_path}: game {r.get('id')} was played at {r['time_control']!r}, "
                    f"but the spec now says {now!r}; use another --out (or restore the "
                    "time control) so results are not mixed")


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------


LOCK = ".lock"  # in a results folder while a run plays into it


@contextmanager
def folder_lock(out: Path):
    """Hold results folder ``out`` for one run, or raise TournamentError when another run holds
    it: two runs resuming the same folder would play and record the same games twice. The lock
    is the kernel's (``flock``), so a run that is killed leaves none behind."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    handle = open(path, "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise TournamentError(f"{out}: another `nogobot tournament` run is playing into this "
                              "folder; wait for it to end or stop it") from None
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        handle.close()


def run_tournament(spec: TournamentSpec, *, out: Path | None = None, jobs: int | None = None,
                   games: int | None = None, plot: bool = False, report_only: bool = False,
                   check: bool = True, console: Console | None = None,
                   executor=None) -> int:
    """Play every missing game of ``spec``; print and write the summary. Returns an exit code.

    ``executor`` runs the games (default ``LocalGames``: threads on this machine). Raises
    TournamentError for problems found before any game starts, another run playing into the
    same folder among them (``folder_lock``)."""
    out = Path(out) if out is not None else default_out(spec)
    with nullcontext() if report_only else folder_lock(out):
        return _run_tournament(spec, out, jobs, games, plot, report_only, check, console,
                               executor)


def _run_tournament(spec: TournamentSpec, out: Path, jobs: int | None, games: int | None,
                    plot: bool, report_only: bool, check: bool, console: Console | None,
                    executor) -> int:
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=140)  # a log file or pipe: room for the tables
    executor = executor if executor is not None else LocalGames()
    jobs = executor.workers(jobs or spec.jobs)
    games = games or spec.games
    names = list(spec.engines)
    results = ResultsLog(out / "results.jsonl")
    records = results.load() if results.path.exists() else []
    check_resume(spec, records, results.path)
    tasks = schedule(spec, games)
    done_keys = {tuple(r["key"]) for r in records if "key" in r}
    todo = [t for t in tasks if tuple(t.key) not in done_keys]
    if not report_only and records and (out / "sgf").is_dir():
        # A folder of the older layout: convert it first, so games.sgf holds every game.
        try:
            done = pack_folder(out)
        except ValueError as e:
            raise TournamentError(f"{e} (the folder is of the older layout; `nogobot "
                                  "tournament pack` converts it)") from None
        console.print(f"{out}: the older layout converted ({done['games']} games into "
                      f"{GAMES}, {done['logs']} logs into logs.tar.gz)")
        records = results.load()
    if not report_only and records:
        dropped = GameCollection(out).sync([r["id"] for r in records])
        if dropped:
            console.print(f"dropped {dropped} game(s) from {out / GAMES} that have no result "
                          "line (a run killed in between); they are played again")
    decided = two_engine_stats(spec, records)
    if decided is not None and decided.verdict is not None and not report_only:
        console.print(f"the SPRT was decided at game {decided.decided_at}: {decided.verdict} "
                      f"accepted; nothing to play")
        todo = []
        report_only = True
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            console.print("[yellow]warning:[/] --plot needs matplotlib, which is not installed; "
                          "the tables will still be written")
    if report_only or not todo:
        if not report_only:
            console.print(f"all {len(tasks)} games of {spec.name} are already in {results.path}")
        return _finish(spec, records, names, out, plot, console)
    executor.check(spec, names, jobs, console)
    if check:
        used = sorted({n for t in todo for n in (t.a, t.b)}, key=names.index)
        console.print(f"checking {len(used)} engines...")
        executor.preflight(spec, used, jobs)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    if records:
        console.print(f"resuming: {len(tasks) - len(todo)} of {len(tasks)} games already "
                      f"played ({results.path})")
    return _play_all(spec, todo, len(tasks), records, results, out, jobs, names, plot, console,
                     executor)


def _play_all(spec, todo, total, records, results, out, jobs, names, plot, console,
              executor) -> int:
    """Play ``todo``: the scheduler runs the games, the recorder saves each one, the SPRT's
    stop ends a decided match, and the live view shows it all on a terminal."""
    stop = threading.Event()  # Ctrl-C or SIGTERM: the games in flight end now
    live_engines: set = set()  # the engine processes running, killed on a stop
    live_lock = threading.Lock()
    view = LiveView(spec, total, total - len(todo))
    view.count(records)
    view.sprt = two_engine_stats(spec, records)
    recorder = Recorder(spec, out, results, records)
    sprt_stop = SprtStop()

    def play(task: GameTask) -> dict | None:
        if stop.is_set() or sprt_stop.is_set():
            return None
        gid = task.game_id
        view.started(gid, task.black, task.white)
        try:
            res, extra = executor.play(
                spec, task, out, stop, lambda r, clocks: view.moved(gid, len(r.moves), clocks),
                live_engines, live_lock)
        except Interrupted:
            return None
        finally:
            view.ended(gid)
        rec, ms = recorder.record(task, res, extra)
        n = view.finished(res.winner_name, res.loser_name, ms)
        console.print(game_line(n, total, gid, res, ms), highlight=False, markup=False)
        if sprt_stop.update(ms):
            console.print(f"SPRT: {ms.verdict} accepted after {ms.decided_at} games; games "
                          "in flight are played out, no new game starts", highlight=False,
                          markup=False)
        return rec

    def cancel() -> None:
        stop.set()
        with live_lock:
            for eng in list(live_engines):
                eng.kill()
        executor.cancel()

    with shown(view, console):
        interrupted = play_all(todo, jobs, play, cancel)
    all_records = recorder.records
    if interrupted:
        console.print(f"interrupted: {len(all_records)} finished games are saved in "
                      f"{results.path}; run the same command again to resume")
        _finish(spec, all_records, names, out, plot, console)
        return 130
    return _finish(spec, all_records, names, out, plot, console)


def _finish(spec, records, names, out: Path, plot: bool, console: Console) -> int:
    st = compute_standings(records, names, spec.anchor, spec.anchor_elo)
    ms = two_engine_stats(spec, records)
    console.print(render_summary(spec, st, ms))
    out.mkdir(parents=True, exist_ok=True)
    if (out / "logs").is_dir():
        pack_logs(out, [r["id"] for r in records])
    summary = summary_dict(st)
    summary["spec"] = {"name": spec.name, "anchor": spec.anchor, "anchor_elo": spec.anchor_elo,
                       "engines": names, "openings": spec.openings_path,
                       "time": spec.describe_time()}
    if ms is not None:
        summary["match"] = ms.to_dict()
    write_atomic(out / "standings.txt", summary_text(spec, st, ms))
    write_atomic(out / "summary.json", json.dumps(summary, indent=1, default=list))
    console.print(f"results: {out / 'results.jsonl'}; table: {out / 'standings.txt'}")
    if plot:
        problem = plot_standings(spec, st, out / "standings.png")
        if problem:
            console.print(f"[yellow]{problem}[/]")
        else:
            console.print(f"plot: {out / 'standings.png'}")
    return 0
