-- The application's PostgreSQL role: it may append to the journal, never rewrite it.
-- Run as the database owner after `manage.py migrate` (which runs as the owner).
CREATE ROLE jackpot_app LOGIN PASSWORD 'change-me';
GRANT CONNECT ON DATABASE jackpot TO jackpot_app;
GRANT USAGE ON SCHEMA public TO jackpot_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO jackpot_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO jackpot_app;
-- The journal: read and append only. The triggers refuse UPDATE and DELETE for everyone;
-- without the privileges, and without TRUNCATE (which fires no row trigger), the app role
-- cannot even try.
REVOKE UPDATE, DELETE, TRUNCATE ON jackpot_transfer, jackpot_auditevent FROM jackpot_app;
