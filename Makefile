# The verbs people use. `make run` and `make test` are the README's two commands.
.PHONY: run test lint demo bench manage

run:
	scripts/run.sh

test:
	scripts/test.sh

lint:
	scripts/bootstrap.sh dev
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/python manage.py makemigrations --check --dry-run

demo:
	scripts/bootstrap.sh runtime
	.venv/bin/python scripts/ensure_database.py
	.venv/bin/python manage.py migrate --noinput
	.venv/bin/python manage.py demo

manage:
	.venv/bin/python manage.py $(ARGS)
