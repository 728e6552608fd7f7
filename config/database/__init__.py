"""The service's PostgreSQL backend: Django's, with a deadline on opening a connection (`base`).

Settings name it `ENGINE = "config.database"` whenever `DATABASE_URL` is PostgreSQL.
"""
