"""scripts/bootstrap.sh, which `make run` and `make test` both start with: run side by side on a
fresh clone they install into .venv one after the other, never both at once."""

import fcntl
import hashlib
import shutil
import subprocess
import sys
import time

from tests.gunicorn import ROOT


def checkout_with_installed_venv(root):
    """A copy of the script in a checkout whose .venv is already installed (its stamp current):
    the script has nothing to do but take its lock."""
    (root / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", root / "scripts" / "bootstrap.sh")
    (root / "requirements.txt").write_text("Django\n")
    (root / "requirements-dev.txt").write_text("-r requirements.txt\npytest\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").symlink_to(sys.executable)
    digest = hashlib.sha256(b"Django\n-r requirements.txt\npytest\n").hexdigest()
    (root / ".venv" / ".installed-dev").write_text(f"{digest}\n")
    return root / "scripts" / "bootstrap.sh"


def bootstrap(script) -> subprocess.Popen:
    return subprocess.Popen(["bash", str(script), "dev"], stderr=subprocess.PIPE)


def test_a_second_bootstrap_waits_until_the_first_is_done(tmp_path):
    script = checkout_with_installed_venv(tmp_path)
    (tmp_path / "var").mkdir()
    with open(tmp_path / "var" / "bootstrap.lock", "a") as first:
        fcntl.flock(first, fcntl.LOCK_EX)  # the first one, still installing
        second = bootstrap(script)
        time.sleep(1.5)
        assert second.poll() is None
    # The first one's lock went with its file: the second finds the install done.
    assert second.wait(timeout=30) == 0, second.stderr.read()


def test_an_unlocked_bootstrap_with_nothing_to_install_returns_at_once(tmp_path):
    script = checkout_with_installed_venv(tmp_path)
    started = time.monotonic()
    run = bootstrap(script)
    assert run.wait(timeout=30) == 0, run.stderr.read()
    assert time.monotonic() - started < 5
    # The lock is released on exit: a third one does not wait either.
    assert bootstrap(script).wait(timeout=10) == 0
