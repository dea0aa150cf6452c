"""Ray stays optional (no cluster needed for these):

* without Ray installed, every command behaves as before and ``--ray`` says in one line how to
  install it (``train``, ``train ladder``, ``tournament``);
* training, ladder and tournament code paths never import ray unless ``--ray`` is given;
* an address where no Ray head listens fails in seconds with one clear line;
* a worker whose nogobot version or code differs from the driver's is refused by name.
"""

import subprocess
import sys

import pytest

from conftest import ROOT
from nogobot.cluster import ClusterError
from nogobot.cluster.connect import check_same_code, node_info

NO_RAY = "import sys; sys.modules['ray'] = None\nfrom nogobot.cli import main\nmain()\n"


def nogobot_without_ray(*args, timeout=120):
    return subprocess.run([sys.executable, "-c", NO_RAY, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("args", [
    ["tournament", "tournaments/baselines.yaml", "--ray"],
    ["train", "ladder", "random", "greedy", "--ray", "local"],
    ["train", "configs/tiny.yaml", "--run-dir", "runs/never", "--ray"],
])
def test_ray_option_without_ray_says_how_to_install(args):
    r = nogobot_without_ray(*args)
    if "needs the train extra" in r.stderr:
        pytest.skip("the train extra is not installed")
    assert r.returncode == 1, r.stdout + r.stderr
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and 'pip install -e ".[cluster]"' in err[0], r.stderr
    assert not (ROOT / "runs" / "never").exists()


def test_commands_without_ray_option_never_import_ray():
    code = ("import sys\n"
            "import nogobot.cli, nogobot.tournament.runner, nogobot.train.match\n"
            "import nogobot.train.backend, nogobot.cluster\n"
            "try:\n    import nogobot.train.loop\nexcept ImportError:\n    pass\n"
            "print('LOADED:' + ','.join(m for m in sys.modules if m.split('.')[0] == 'ray'))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "LOADED:\n" in r.stdout, r.stdout


def test_unreachable_address_fails_fast_with_one_line():
    pytest.importorskip("ray")
    # Port 1 on the loopback address: nothing listens there; refused at once.
    r = subprocess.run([sys.executable, "-m", "nogobot", "tournament",
                        "tournaments/baselines.yaml", "--ray", "127.0.0.1:1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    err = r.stderr.strip().splitlines()
    assert err[-1].startswith("Error: cannot reach a Ray head at 127.0.0.1:1"), r.stderr
    r = subprocess.run([sys.executable, "-m", "nogobot", "tournament",
                        "tournaments/baselines.yaml", "--ray", "not-an-address"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "not a Ray address" in r.stderr


def test_other_nogobot_on_a_node_is_refused():
    mine = node_info()
    check_same_code(dict(mine), mine)  # the same code passes
    other = {**mine, "code": "ffffffffffffffff", "host": "w7", "ip": "10.0.0.7",
             "node_id": "abcdef0123"}
    with pytest.raises(ClusterError) as e:
        check_same_code(other, mine)
    msg = str(e.value)
    assert "w7 (10.0.0.7, node abcdef01)" in msg and "code ffffffffffffffff" in msg
    assert "install the same nogobot on every node" in msg and "\n" not in msg
