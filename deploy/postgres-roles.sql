-- The jackpot database and its two roles. Run once, as a PostgreSQL superuser, with psql:
--
--   psql -h DB_HOST -U postgres -f deploy/postgres-roles.sql
--
-- jackpot_owner owns the database, the schema and (through `manage.py migrate`) every table: it
-- runs the migrations and `manage.py grant_app_role`, nothing else, and its password stays off the
-- machines that run the service (docs/operations.md, "PostgreSQL").
-- jackpot_app is the role of the web and the worker: it owns nothing, so it can neither disable
-- nor drop the journal's triggers, and `manage.py grant_app_role jackpot_app` (run as the owner
-- after every migrate) gives it exactly what jackpot/audit/grants.py declares: SELECT and INSERT on the
-- journal, no UPDATE, DELETE or TRUNCATE there.
--
-- No password is written here: psql asks for each one (\password sends only its SCRAM hash, so
-- the password is in no statement the server could log). Then put them in the addresses:
-- DATABASE_URL (jackpot_app, /etc/jackpot/env) and DATABASE_OWNER_URL (jackpot_owner,
-- /etc/jackpot/owner.env, readable by root only).
\set ON_ERROR_STOP on

CREATE ROLE jackpot_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
CREATE ROLE jackpot_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
    NOINHERIT;
\echo 'The password of jackpot_owner (runs the migrations):'
\password jackpot_owner
\echo 'The password of jackpot_app (the web and the worker):'
\password jackpot_app

CREATE DATABASE jackpot OWNER jackpot_owner;
REVOKE ALL ON DATABASE jackpot FROM PUBLIC;
GRANT CONNECT ON DATABASE jackpot TO jackpot_app;

\connect jackpot
-- Since PostgreSQL 15 the schema public belongs to the database's owner and PUBLIC may not
-- create in it; said here too for a cluster upgraded from an older release.
ALTER SCHEMA public OWNER TO jackpot_owner;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO jackpot_app;

-- Behind pgbouncer in transaction pooling (deploy/env.example, DATABASE_POOLER=transaction) the
-- limits cannot ride on the connection (pgbouncer refuses libpq's `options`): the role's own
-- defaults bound every statement of the service, on every server connection pgbouncer opens.
-- The same figures as DATABASE_STATEMENT_TIMEOUT_MS and DATABASE_LOCK_TIMEOUT_MS; UTC spares
-- Django a SET TIME ZONE (config/settings/databases.py).
ALTER ROLE jackpot_app IN DATABASE jackpot SET statement_timeout = '1500ms';
ALTER ROLE jackpot_app IN DATABASE jackpot SET lock_timeout = '1000ms';
ALTER ROLE jackpot_app IN DATABASE jackpot SET TimeZone = 'UTC';

-- Next, as the owner (deploy/systemd/jackpot-migrate.service does both):
--   DATABASE_URL=$DATABASE_OWNER_URL manage.py migrate
--   DATABASE_URL=$DATABASE_OWNER_URL manage.py grant_app_role jackpot_app
--
-- A database whose tables migrate made as jackpot_app (the deploy files before this one): as a
-- superuser, connected to the database,
--   REASSIGN OWNED BY jackpot_app TO jackpot_owner;
--   ALTER DATABASE jackpot OWNER TO jackpot_owner;
-- then run grant_app_role as the owner: it refuses while jackpot_app still owns anything.
