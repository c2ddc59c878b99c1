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
# --create-db: a fresh test database every run, so a stale schema can never hide a migration bug.
.venv/bin/pytest --create-db -q "$@"
