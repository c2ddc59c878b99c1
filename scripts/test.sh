#!/usr/bin/env bash
# Runs lint, the migration check and the whole test suite against the local PostgreSQL and Redis.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh dev
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# The floors of the house (docs/architecture.md): no app imports an app above it.
.venv/bin/lint-imports
.venv/bin/python manage.py makemigrations --check --dry-run
.venv/bin/python scripts/openapi_compat.py  # docs/openapi.yaml current, narrowings in docs/changelog.md
# The real-browser tests (tests/core/browser.py) drive Debian's Chromium; a fresh machine (CI runs
# as root) gets it here, before pytest, not from inside a fixture. Elsewhere those tests skip.
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq chromium >/dev/null
  else
    echo "No Chromium at $chromium (apt-get install -y chromium): the browser tests will skip." >&2
  fi
fi
# --create-db: a fresh test database every run, so a stale schema can never hide a migration bug.
.venv/bin/pytest --create-db -q "$@"
