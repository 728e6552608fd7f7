"""The tables' reads, one module per concern: each takes typed filters (the wire's queries) and
answers a wire model, writes nothing and locks nothing a round waits for.

- rounds: a table's rounds listed for a terminal's recovery, a pool's open and stale rounds;
- integrity: the integrity flags, the void watch;
- reconciliation: the reconciliation reports, and the latest one's status.

A pool's history for auditors is read with the fold it reads (`tables.audit.pool_history`).

Nothing is re-exported here: import a read from its module.
"""
