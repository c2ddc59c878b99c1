# The verbs people use. `make run` and `make test` are the README's two commands.
.PHONY: run test lint demo bench bench-history bench-dispatch bench-commits scale manage faults screenshots openapi

run:
	scripts/run.sh

test:
	scripts/test.sh

lint:
	scripts/bootstrap.sh dev
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/lint-imports
	.venv/bin/python manage.py makemigrations --check --dry-run

demo:
	scripts/bootstrap.sh runtime
	.venv/bin/python scripts/ensure_database.py
	.venv/bin/python manage.py migrate --noinput
	.venv/bin/python manage.py demo

manage:
	.venv/bin/python manage.py $(ARGS)

# Publishes the OpenAPI document (docs/openapi.yaml) from the code and lists what it narrows;
# `make test` fails while it is stale or a narrowing is not in docs/changelog.md.
openapi:
	scripts/bootstrap.sh dev
	.venv/bin/python scripts/openapi_compat.py --write

# Rewrites docs/tracking.png, docs/courier.png, docs/admin.png, docs/admin-slot-templates.png and
# docs/swagger-ui.png (the README shows them) from the real-browser tests; a normal test run never
# writes to docs/.
screenshots:
	scripts/bootstrap.sh dev
	UPDATE_SCREENSHOTS=1 .venv/bin/pytest tests/tracking/test_tracking_browser.py tests/tenants/test_admin_browser.py \
		tests/dispatch/test_admin_browser.py \
		tests/couriers/test_app_browser.py::test_events_taken_offline_arrive_once_in_order \
		tests/core/test_api_docs.py::test_swagger_ui_shows_an_operation_expanded_in_a_real_browser -q $(ARGS)

# Fault-injection tests (docs/faults.md): real gunicorn, Celery worker and beat against their own
# throwaway PostgreSQL and Redis; the shared ones on 5432/6379 are never touched.
faults:
	scripts/bootstrap.sh dev
	timeout 600 .venv/bin/pytest tests/faults -m faults -v $(ARGS)
	.venv/bin/python bench/faults_results.py

# The whole benchmark (docs/performance.md, ~15 min): `make bench`, or `make bench ARGS=--quick` to smoke it.
bench:
	scripts/bootstrap.sh dev
	@command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk"; exit 1; }
	.venv/bin/python bench/run.py $(ARGS)

# A year of history (docs/performance.md "History", ~1.5 h at full scale): the bench scenarios on an
# empty and on a loaded database, in a PostgreSQL cluster and a Redis of its own (bench/history.py).
# `make bench-history ARGS="--scale 0.01 --quick"` for a quick look. CI never runs it.
bench-history:
	scripts/bootstrap.sh dev
	@command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk"; exit 1; }
	@command -v redis-server >/dev/null || { echo "redis-server is missing: apt-get install -y redis-server"; exit 1; }
	.venv/bin/python bench/history.py $(ARGS)

# The dispatch solver on public VRPTW instances (bench/results/dispatch.md, at most 30 min):
# `make bench-dispatch`, or `make bench-dispatch ARGS=--quick` to smoke it.
bench-dispatch:
	scripts/bootstrap.sh dev
	.venv/bin/python bench/dispatch.py $(ARGS)

# The write paths' CPU at several commits, each with its own code, on this machine in one sitting
# (bench/results/commits.md, ~4 min per commit): `make bench-commits REVS="e0f7b87 HEAD"`.
bench-commits:
	scripts/bootstrap.sh dev
	@command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk"; exit 1; }
	.venv/bin/python bench/commits.py $(REVS)

# Scale-out (docs/performance.md, ~2-3 min): two instances and two Celery workers behind HAProxy,
# the create and booking load through it, then the invariants and the cross-instance checks.
scale:
	scripts/bootstrap.sh dev
	@command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk"; exit 1; }
	@command -v haproxy >/dev/null || test -x /usr/sbin/haproxy || { echo "haproxy is missing: apt-get install -y haproxy"; exit 1; }
	.venv/bin/python bench/scale.py $(ARGS)
