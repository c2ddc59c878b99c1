#!/usr/bin/env bash
# Creates .venv and installs the pinned requirements (runtime, or dev with "dev").
# Re-installs only when a requirements file changed since the last successful install.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-runtime}"
file=requirements.txt
[ "$kind" = "dev" ] && file=requirements-dev.txt
python=${PYTHON:-python3}
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
