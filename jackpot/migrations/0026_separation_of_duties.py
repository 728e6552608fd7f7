"""Separation of duties held by the database (compliance 52, `jackpot.staff.duties`).

An account that configures (member of the `admin` group, `is_staff` or `is_superuser`) never
holds a money role (the `supervisor` or `manager` group): constraint triggers on
`auth_user_groups`, `auth_user` (its flags) and `auth_group` (a rename), DEFERRABLE INITIALLY
DEFERRED, check the accounts a change touched at commit, so one transaction may reshuffle
(take a role away, then give another) as long as it ends clean.

An award's actor columns (verified_by, approved_by, paid_by, voided_by, void_requested_by) and a
referral's decider refuse an account that configures at that moment (row triggers). The service
refuses first (403 `separation_of_duties`); these hold against SQL as the service's role.

PostgreSQL only: the demo's SQLite relies on the service's checks, as migration 0020 does for its
four eyes. The functions run as the caller (no SECURITY DEFINER): the application's role reads
the auth tables already (`jackpot.audit.grants`) and owns none of them.
"""

from django.conf import settings
from django.db import migrations

# "%%": the schema editor passes the SQL through the driver's parameter formatting.
POSTGRES = """
CREATE OR REPLACE FUNCTION jackpot_account_configures(account integer) RETURNS boolean AS $$
    SELECT EXISTS (SELECT 1 FROM auth_user u WHERE u.id = account
                   AND (u.is_staff OR u.is_superuser))
        OR EXISTS (SELECT 1 FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
                   WHERE ug.user_id = account AND g.name = 'admin');
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION jackpot_account_decides_money(account integer) RETURNS boolean AS $$
    SELECT EXISTS (SELECT 1 FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
                   WHERE ug.user_id = account AND g.name IN ('supervisor', 'manager'));
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION jackpot_refuse_mixed_duties(account integer) RETURNS void AS $$
BEGIN
    IF jackpot_account_configures(account) AND jackpot_account_decides_money(account) THEN
        RAISE EXCEPTION 'separation of duties: account %% configures (admin, is_staff or '
            'is_superuser) and holds a money role (supervisor or manager)', account
            USING ERRCODE = 'check_violation';
    END IF;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION jackpot_duties_changed() RETURNS trigger AS $$
DECLARE
    member integer;
BEGIN
    IF TG_TABLE_NAME = 'auth_user_groups' THEN
        PERFORM jackpot_refuse_mixed_duties(NEW.user_id);
    ELSIF TG_TABLE_NAME = 'auth_user' THEN
        PERFORM jackpot_refuse_mixed_duties(NEW.id);
    ELSE  -- auth_group: a renamed group changes what each of its members holds
        FOR member IN SELECT ug.user_id FROM auth_user_groups ug WHERE ug.group_id = NEW.id LOOP
            PERFORM jackpot_refuse_mixed_duties(member);
        END LOOP;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER jackpot_duties_groups AFTER INSERT OR UPDATE ON auth_user_groups
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION jackpot_duties_changed();
CREATE CONSTRAINT TRIGGER jackpot_duties_flags AFTER INSERT OR UPDATE OF is_staff, is_superuser
    ON auth_user DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION jackpot_duties_changed();
CREATE CONSTRAINT TRIGGER jackpot_duties_group_name AFTER UPDATE OF name ON auth_group
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION jackpot_duties_changed();

CREATE OR REPLACE FUNCTION jackpot_award_actor_duties() RETURNS trigger AS $$
DECLARE
    actor integer;
BEGIN
    FOREACH actor IN ARRAY ARRAY[
        CASE WHEN NEW.verified_by_id IS DISTINCT FROM OLD.verified_by_id
             THEN NEW.verified_by_id END,
        CASE WHEN NEW.approved_by_id IS DISTINCT FROM OLD.approved_by_id
             THEN NEW.approved_by_id END,
        CASE WHEN NEW.paid_by_id IS DISTINCT FROM OLD.paid_by_id THEN NEW.paid_by_id END,
        CASE WHEN NEW.voided_by_id IS DISTINCT FROM OLD.voided_by_id THEN NEW.voided_by_id END,
        CASE WHEN NEW.void_requested_by_id IS DISTINCT FROM OLD.void_requested_by_id
             THEN NEW.void_requested_by_id END
    ] LOOP
        IF actor IS NOT NULL AND jackpot_account_configures(actor) THEN
            RAISE EXCEPTION 'separation of duties: account %% configures (admin, is_staff or '
                'is_superuser) and cannot act on award %%', actor, NEW.id
                USING ERRCODE = 'check_violation';
        END IF;
    END LOOP;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER jackpot_award_actor_duties BEFORE UPDATE OF verified_by_id, approved_by_id,
    paid_by_id, voided_by_id, void_requested_by_id ON jackpot_award
    FOR EACH ROW EXECUTE FUNCTION jackpot_award_actor_duties();

CREATE OR REPLACE FUNCTION jackpot_referral_decider_duties() RETURNS trigger AS $$
BEGIN
    IF jackpot_account_configures(NEW.decided_by_id) THEN
        RAISE EXCEPTION 'separation of duties: account %% configures (admin, is_staff or '
            'is_superuser) and cannot decide the referral of review %%', NEW.decided_by_id,
            NEW.review_id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER jackpot_referraldecision_duties BEFORE INSERT ON jackpot_referraldecision
    FOR EACH ROW EXECUTE FUNCTION jackpot_referral_decider_duties();
"""

POSTGRES_REVERSE = """
DROP TRIGGER IF EXISTS jackpot_referraldecision_duties ON jackpot_referraldecision;
DROP FUNCTION IF EXISTS jackpot_referral_decider_duties();
DROP TRIGGER IF EXISTS jackpot_award_actor_duties ON jackpot_award;
DROP FUNCTION IF EXISTS jackpot_award_actor_duties();
DROP TRIGGER IF EXISTS jackpot_duties_group_name ON auth_group;
DROP TRIGGER IF EXISTS jackpot_duties_flags ON auth_user;
DROP TRIGGER IF EXISTS jackpot_duties_groups ON auth_user_groups;
DROP FUNCTION IF EXISTS jackpot_duties_changed();
DROP FUNCTION IF EXISTS jackpot_refuse_mixed_duties(integer);
DROP FUNCTION IF EXISTS jackpot_account_decides_money(integer);
DROP FUNCTION IF EXISTS jackpot_account_configures(integer);
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_REVERSE)


class Migration(migrations.Migration):
    dependencies = [
        ("jackpot", "0025_staff_token_expiry"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(install, uninstall)]
