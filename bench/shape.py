"""A round's shape, as bench/trivial.py's `RoundShapeView` replays it without its work.

No Django here: bench/ingest.py imports it before any settings exist.
"""

#: The statements a round's open and its result send (7 UTH seats, every one with the
#: progressive, no award): the terminal's look-up (`LOOKUPS`), then the step's own, in its one
#: transaction. bench/round_cpu.py counts them on a real round and stops when they are not these,
#: so the floor keeps the round's shape.
ROUND_STATEMENTS = {"open": 10, "result": 6}

#: Of each count, the statements the terminal's authentication sends before the step (its
#: token's look-up): `RoundShapeView` authenticates as a step does, so it replays only the rest.
LOOKUPS = 1
