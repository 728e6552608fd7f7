"""Pure rules engine for the club's table games: cards, hand values, paytables, settlement.

Invariant: nothing under ``rules`` imports Django or performs I/O (no files, network,
environment, logging or printing). Every function is a deterministic function of its arguments,
so the engine can be tested exhaustively without a database and reused by any caller.
Import the submodules directly (``from rules.hands import evaluate``); this package
module stays empty so importing it costs nothing.
"""
