"""The service's shared plumbing, below both apps: the one error shape and its codes, the wire
models and their OpenAPI rendering, the strict parser, throttles, Redis behind its circuit
breaker, the replica router, the metrics' declarations, the request id and the log lines, and
the staff pages' shared helpers.

It imports no module of `config`, `jackpot` or `tables` (docs/architecture.md, "The layers"):
the settings, the URL map and the processes' entry points live in `config`, which sits on top.
"""
