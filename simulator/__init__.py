"""A floor of Ultimate Texas Hold'em tables, simulated as their terminals would post it, over HTTP.

`python manage.py simulate_floor` is the thin shell around this package (arguments, progress bar,
printing); here are the deal, the players' decisions, the terminals' HTTP client and the summary:

- `floor`: the floor file's tables and tokens, the plan of a run, rounds shared out, money printed.
- `strategy`: the players' decisions, by a plausible basic strategy.
- `deals`: each round's bets and cards, as a terminal posts them.
- `terminal`: how a terminal talks HTTP, its resends and giving up; the pools read before a run.
- `tally`: what the floor did: the running totals, the tables' errors and the summary.
- `run`: the run: one thread per table, paced, stopped between rounds.

What the simulation guarantees:

- **HTTP only.** It reaches the service exactly as terminals do (docs/api.md sections 1 to 3) and
  never touches a database, so it works against any server it is given tokens for.
- **Fair deals.** Every round is dealt from a full 52-card deck shuffled by `random.SystemRandom`
  (or by `random.Random` seeded per table with `--seed`, for a reproducible run: the same seed
  gives the same bets, cards and decisions at each table whatever the timing). The one exception
  is the demonstration royal (`force_royal`), dealt from a stacked deck, and only its royal cards
  are chosen: the rest of that deck is shuffled as usual.
- **Terminal behaviour on errors** (docs/api.md 1.4). A timeout, a connection error or a 5xx
  resends the same request with the same bytes, which the service's idempotency makes safe; a
  429 waits `Retry-After`. Every resend is counted. Any other 4xx is a bug: that table stops and
  the service's error body is reported. When requests keep failing for `give_up_s` seconds the
  service is taken as gone and every table stops.
- **Unique round ids.** `sim-<8 hex of a uuid4>-<n>`, new for each run, so runs against the same
  database never collide, and within the 64 characters the API accepts.
- **Clean stops.** A table stops between rounds, never between an open and its result while the
  service answers, so an interrupted run leaves no round open; a round whose state is in doubt
  (the service went away during it, or its result was refused) is listed in the summary.
- **Money is integer cents**, summed as integers and printed with `divmod`; rates and times are
  the only floats.
"""
