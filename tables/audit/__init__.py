"""The checks and reads that need both the tables and the journal, in one place: the rounds'
rows held against the journal's events.

- verification: the journal's verification with the rounds (routine from the newest checkpoint,
  full from the first event), the checkpoints they keep, and the whole pool report;
- verification_jobs: a full verification asked for over the API, run by a worker;
- records: the rows the register prints (rounds, tables, terminals) re-derived from their events;
- reconciliation: every pool recomputed from the journal on a schedule, and its reports;
- integrity: the statistical flags on a pool's awards and voids;
- selfcheck: the start-up gate (configuration, migrations, the routine verification);
- history: the fold of the journal into a pool's days, for the auditors' charts;
- pool_history: a pool's history read for the auditors, from the folded days and the journal
  since.

`jackpot` knows the journal alone and never imports this package; these modules sit above it
and below the API (the `layers` contract in pyproject.toml).
"""
