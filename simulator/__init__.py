"""A floor of Ultimate Texas Hold'em tables, simulated as their terminals would post it, over HTTP.
`python manage.py simulate_floor` is its thin shell; here: `floor` (the floor file, the plan),
`strategy`, `deals`, `terminal` (HTTP, resends), `tally` (totals, summary), `run` (the threads).

Invariants:
- HTTP only, as terminals do (docs/api.md 1 to 3): never a database;
- fair deals from a full shuffled deck (seeded per table with `--seed`), but for the stacked
  demonstration royal;
- a timeout or 5xx resends the same bytes; any other 4xx stops the table;
- round ids unique per run; a table stops between rounds, never between an open and its result;
- money is integer cents.

Each guarantee in full: docs/architecture.md, "The modules, in detail".
"""
