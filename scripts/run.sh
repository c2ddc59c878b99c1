#!/usr/bin/env bash
# Starts the whole service for development: web (gunicorn), Celery worker and beat, with the
# demo tenant. Ctrl-C stops all three.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh runtime
export DEBUG="${DEBUG:-true}"
.venv/bin/python scripts/ensure_database.py
.venv/bin/python manage.py migrate --noinput
# Admin and API docs assets into STATIC_ROOT, which gunicorn serves (WhiteNoise) with DEBUG off.
.venv/bin/python manage.py collectstatic --noinput --verbosity 0
.venv/bin/python manage.py demo
mkdir -p var
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
.venv/bin/celery -A delivery.celery:app worker --loglevel=INFO --pool=threads --concurrency=8 &
pids+=($!)
.venv/bin/celery -A delivery.celery:app beat --loglevel=INFO --schedule var/celerybeat-schedule &
pids+=($!)
.venv/bin/gunicorn delivery.wsgi:application -c gunicorn.conf.py &
pids+=($!)
echo "service on http://${BIND:-127.0.0.1:8000} (docs at /api/docs/); Ctrl-C stops it"
wait -n "${pids[@]}"
