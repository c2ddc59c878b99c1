"""Creates the PostgreSQL database named in DATABASE_URL if it does not exist yet."""

import os

import environ
import psycopg
from psycopg import sql

config = environ.Env.db_url_config(
    os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/delivery")
)
connect_args = {
    "host": config["HOST"] or None,
    "port": config["PORT"] or None,
    "user": config["USER"] or None,
    "password": config["PASSWORD"] or None,
    "dbname": "postgres",
    "autocommit": True,
}
with psycopg.connect(**connect_args) as connection:
    exists = connection.execute(
        "SELECT 1 FROM pg_database WHERE datname = %s", (config["NAME"],)
    ).fetchone()
    if not exists:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(config["NAME"])))
        print(f"created database {config['NAME']}")
