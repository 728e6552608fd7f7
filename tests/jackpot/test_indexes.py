"""The indexes the migrations leave: every foreign key is looked up by an index that leads with
it, and the tables written on every round carry no index another one already leads with.

A foreign key without such an index makes every look-up by it, and a delete of its parent, read
the whole child table (the journal's, for a transfer). An index on one column that another index
of its table already leads with serves nothing the other does not, and costs an entry on every
row written, for as long as the journal lives (jackpot.0022, tables.0012).
"""

from __future__ import annotations

import pytest
from django.db import connection

#: The tables a round writes rows to, its awards' included.
PER_ROUND = (
    "tables_round",
    "tables_roundseat",
    "tables_idempotencyrecord",
    "jackpot_auditevent",
    "jackpot_transfer",
    "jackpot_award",
)

_UNINDEXED_FOREIGN_KEYS = """
SELECT c.conrelid::regclass::text, a.attname
FROM pg_constraint c
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
WHERE c.contype = 'f' AND cardinality(c.conkey) = 1
  AND c.connamespace = 'public'::regnamespace
  AND (c.conrelid::regclass::text LIKE 'jackpot\\_%'
       OR c.conrelid::regclass::text LIKE 'tables\\_%')
  AND NOT EXISTS (
      SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1]
  )
ORDER BY 1, 2
"""

# A plain one-column index (not unique, not partial, not on an expression, the column's default
# operator class) whose column another index of the table leads with, over all its rows.
_REDUNDANT = """
SELECT i.indexrelid::regclass::text
FROM pg_index i
WHERE i.indrelid::regclass::text = ANY(%s)
  AND i.indnatts = 1 AND NOT i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
  AND EXISTS (
      SELECT 1 FROM pg_index o
      WHERE o.indrelid = i.indrelid AND o.indexrelid <> i.indexrelid
        AND o.indkey[0] = i.indkey[0] AND o.indpred IS NULL AND o.indexprs IS NULL
        AND o.indclass[0] = i.indclass[0]
  )
ORDER BY 1
"""


@pytest.mark.django_db
def test_every_foreign_key_has_an_index_that_leads_with_it():
    with connection.cursor() as cursor:
        cursor.execute(_UNINDEXED_FOREIGN_KEYS)
        assert cursor.fetchall() == []


@pytest.mark.django_db
def test_no_table_a_round_writes_has_an_index_another_one_already_leads_with():
    with connection.cursor() as cursor:
        cursor.execute(_REDUNDANT, [list(PER_ROUND)])
        assert cursor.fetchall() == []


@pytest.mark.django_db
def test_the_open_round_per_table_and_the_award_look_up_survive_the_drops():
    """The indexes jackpot.0022 and tables.0012 had to leave or make: Django's own AlterField
    would have dropped the first with the table's foreign-key index."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index"
            " WHERE indexrelid::regclass::text IN ('round_one_open_per_table', 'transfer_award')"
            " ORDER BY 1"
        )
        found = dict(cursor.fetchall())
    assert "UNIQUE" in found["round_one_open_per_table"]
    assert "WHERE ((state)::text = 'open'::text)" in found["round_one_open_per_table"]
    assert "WHERE (award_id IS NOT NULL)" in found["transfer_award"]
