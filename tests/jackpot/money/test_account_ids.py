"""The accounts a transfer names are this database's (issue 11, item 11).

`jackpot.money.ledger` keeps the account ids it has read. A long-running process whose database is
dropped and made anew (or restored) must not go on writing transfers with the ids of the
database it had before: in the new one the same pool id can have other account ids, and the
old ids can be another pool's accounts, which the foreign keys would not catch.
"""

from __future__ import annotations

import pytest
from django.core.management.color import no_style
from django.db import connection

from jackpot.models import Account, Pool, Transfer
from tests.conftest import assert_journal_ok, make_floor, uth_seat

pytestmark = pytest.mark.django_db(transaction=True)


def _make_the_database_anew(pool_id: int, account_ids: list[int]) -> None:
    """Empty every table with its sequences restarted, then close the connection, as dropping
    the database and making it again does to every process that had one open."""
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        for sql in connection.ops.sql_flush(no_style(), tables, reset_sequences=True):
            cursor.execute(sql)
        # The new life numbers its rows otherwise (another order of creation, a transaction
        # rolled back): here, another pool is made first and gets the old pool's account ids.
        cursor.execute("SELECT setval('jackpot_pool_id_seq', %s, false)", [pool_id + 1])
        cursor.execute("SELECT setval('jackpot_account_id_seq', %s, false)", [min(account_ids)])
    connection.close()


def test_a_database_made_anew_gets_transfers_on_its_own_accounts(client):
    # Given a process that wrote a round on pool P, so it has read P's account ids
    floor = make_floor(1)
    opened = floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    assert opened.status_code == 201, opened.content
    old_ids = sorted(Account.objects.filter(pool_id=floor.pool_id).values_list("pk", flat=True))

    # When its database is made anew, where pool P exists again with other account ids and
    # P's old account ids belong to another pool
    _make_the_database_anew(floor.pool_id, old_ids)
    other = make_floor(1)
    with connection.cursor() as cursor:
        cursor.execute("SELECT setval('jackpot_pool_id_seq', %s, false)", [floor.pool_id])
    again = make_floor(1)
    assert again.pool_id == floor.pool_id
    assert sorted(Account.objects.filter(pool_id=other.pool_id).values_list("pk", flat=True)) == (
        old_ids
    )

    # and the same process writes a round on P
    opened = again.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    assert opened.status_code == 201, opened.content

    # Then every transfer moves money between accounts of its own pool, and the books verify
    for transfer in Transfer.objects.select_related("debit", "credit"):
        assert transfer.debit.pool_id == transfer.pool_id, transfer
        assert transfer.credit.pool_id == transfer.pool_id, transfer
    assert Pool.objects.count() == 2
    assert_journal_ok()
