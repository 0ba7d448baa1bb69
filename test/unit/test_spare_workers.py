"""child_process.Spare: a worker started before its job loads its modules meanwhile, then runs the job
it reads from stdin; closed unused, it leaves no process behind."""
import os
import subprocess
import sys
import time

import pytest

from ftuner_mlir.backends import child_process

# A worker: `load` writes a marker (what it loaded) before the job arrives; the job is echoed back.
WORKER = """
import os, sys
from ftuner_mlir.backends.child_process import spare_job
def load():
    open(os.environ["MARKER"], "w").write("loaded")
job = spare_job(sys.argv[1:], load)
if job is None:
    sys.exit(7)
print("job:", job, "after load:", os.path.exists(os.environ["MARKER"]))
sys.exit(int(job[0]) if job and job[0].isdigit() else 0)
"""


def _spare(tmp_path):
    marker = tmp_path / "marker"
    spare = child_process.Spare([sys.executable, "-c", WORKER], env={**os.environ, "MARKER": str(marker)})
    return spare, marker


def _eventually(holds, failure: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not holds():
        assert time.monotonic() < deadline, failure
        time.sleep(0.02)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_spare_loads_before_its_job_then_runs_it(tmp_path):
    spare, marker = _spare(tmp_path)
    _eventually(marker.exists, "the spare never loaded")     # loaded with no job sent yet
    assert spare.proc.poll() is None                  # and waiting for one
    done = spare.run(["5", "with space", "ü"], timeout_s=60)
    assert done.returncode == 5
    assert "job: ['5', 'with space', 'ü'] after load: True" in done.stdout
    with pytest.raises(RuntimeError, match="one job"):
        spare.run(["again"], timeout_s=60)


def test_a_spare_closed_unused_is_gone(tmp_path):
    spare, marker = _spare(tmp_path)
    pid = spare.proc.pid
    spare.close()
    spare.close()                                     # twice is fine
    _eventually(lambda: _gone(pid), "the closed spare was never reaped", 30)    # not left a zombie


def test_a_spare_past_its_time_limit_is_killed(tmp_path):
    marker = tmp_path / "marker"
    slow = WORKER.replace('print("job:"', 'import time; time.sleep(600); print("job:"')
    spare = child_process.Spare([sys.executable, "-c", slow], env={**os.environ, "MARKER": str(marker)})
    pid = spare.proc.pid
    with pytest.raises(subprocess.TimeoutExpired):
        spare.run(["1"], timeout_s=2)
    assert _gone(pid)


def test_a_worker_started_with_its_arguments_is_not_a_spare():
    assert child_process.spare_job(["a", "b"], load=lambda: pytest.fail("loaded")) == ["a", "b"]
