#!/usr/bin/env bash
# Creates .venv and installs the pinned requirements (runtime, or dev with "dev").
# Re-installs only when a requirements file changed since the last successful install.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-runtime}"
file=requirements.txt
[ "$kind" = "dev" ] && file=requirements-dev.txt
python=${PYTHON:-python3}
# `make run` and `make test` started side by side on a fresh clone both come here: the second
# waits for the first's install (an exclusive lock on var/bootstrap.lock, released when this
# script exits) and then finds it done. Python's flock, as the flock command is not everywhere.
mkdir -p var
exec 9>>var/bootstrap.lock
"$python" -c 'import fcntl; fcntl.flock(9, fcntl.LOCK_EX)'
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
fi
stamp=".venv/.installed-$kind"
digest=$(cat requirements.txt "$file" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r "$file"
  echo "$digest" > "$stamp"
fi
