"""What decides money in this build's code and settings, and its checksum (compliance 27).

`money_configuration()` is that configuration as plain JSON values:
- every published paytable, box and progressive (`rules.paytables`), whole: each box's
  odds by hand category, each progressive award in cents and the jackpot's share of the meter;
  and the versions in force;
- the units and rounding rules: the meter's and reserve's units per cent, the basis points of a
  whole stake, and how each amount is rounded (each rule's text is part of the checksum, so a
  change of rule must change its text);
- the journal's routes: which two accounts each transfer code moves money between
  (`jackpot.money.accounting.ROUTES`), and the pairs a correction may move between
  (`CORRECTION_ROUTES`);
- a new pool's default money parameters (the model's and `jackpot.pools.creation.pool_create`'s);
- the settings named in `settings.MONEY_SETTINGS`, by name and value (none decides money today:
  a pool's own parameters live in its row and change only by audited events, which the journal
  check covers).

`config_checksum()` is the SHA-256 of its canonical JSON (`jackpot.money.canonical`). The operator
approves a build by pinning that value in the environment (`JACKPOT_CONFIG_SHA256`); the
start-up self-check (`tables.audit.selfcheck`) refuses to serve when they differ. The checksum never
covers a secret, a host name or anything else that differs between two installations of one
build.
"""

from __future__ import annotations

import inspect
from typing import Any

from django.conf import settings
from django.db.models import Field

from jackpot.models import UNITS_PER_CENT, Pool
from jackpot.money.accounting import CORRECTION_ROUTES, ROUTES
from jackpot.money.canonical import canonical_json, fingerprint
from jackpot.pools.creation import pool_create
from jackpot.pools.parameters import POOL_FIELDS
from rules.paytables import CURRENT, PAYTABLES, PROGRESSIVE_PAYTABLES

#: Bumped when the shape below changes, so that two shapes never share a checksum.
FORMAT = 1

#: How each amount is rounded, as the code does it (docs/accounting.md).
ROUNDING = {
    "box_win": "stake_cents * numerator // denominator: down to the cent",
    "contribution": "meter and reserve gain stake_cents * share_bp units each; each journal "
    "account takes the whole cents its counter crossed, the house the rest",
    "jackpot": "the whole meter in whole cents (meter_units // units_per_cent); the sub-cent "
    "remainder stays on the meter",
    "reset": "the meter resets to the seed, from the reserve's whole cents, the house funding "
    "the shortfall",
}


def _paytables() -> dict[str, Any]:
    return {
        version: {
            "name": table.name,
            "odds": {category.name.lower(): str(odds) for category, odds in table.odds.items()},
        }
        for version, table in PAYTABLES.items()
    }


def _progressive_paytables() -> dict[str, Any]:
    return {
        version: {
            "jackpot_percent_bp": table.jackpot_percent_bp,
            "community_royal_cents": table.community_royal_cents,
            "straight_flush_cents": table.straight_flush_cents,
            "four_of_a_kind_cents": table.four_of_a_kind_cents,
            "full_house_cents": table.full_house_cents,
            "envy_cents": table.envy_cents,
        }
        for version, table in PROGRESSIVE_PAYTABLES.items()
    }


def _field_default(name: str) -> Any:
    field = Pool._meta.get_field(name)
    assert isinstance(field, Field)  # a concrete column of the pool row
    return field.get_default()


def _pool_defaults() -> dict[str, Any]:
    fields = (*(name for name in POOL_FIELDS if name != "name"), "currency")
    model = {name: _field_default(name) for name in fields}
    service = {
        name: parameter.default
        for name, parameter in inspect.signature(pool_create).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    return {"model": model, "pool_create": service}


def money_configuration() -> dict[str, Any]:
    """What decides money in this build (see the module's docstring), as JSON values."""
    return {
        "format": FORMAT,
        "paytables": _paytables(),
        "progressive_paytables": _progressive_paytables(),
        "current": CURRENT.versions(),
        "units": {"units_per_cent": UNITS_PER_CENT, "basis_points_whole": 10_000},
        "rounding": ROUNDING,
        "routes": {
            code.value: {
                "debit": route.debit.value,
                "credit": route.credit.value,
                "pending_credit": route.pending_credit and route.pending_credit.value,
            }
            for code, route in ROUTES.items()
        },
        "correction_routes": sorted(
            [debit.value, credit.value] for debit, credit in CORRECTION_ROUTES
        ),
        "pool_defaults": _pool_defaults(),
        "settings": {name: getattr(settings, name) for name in settings.MONEY_SETTINGS},
    }


def configuration_json() -> bytes:
    """The canonical JSON the checksum is taken over: what an approver reviews."""
    return canonical_json(money_configuration())


def config_checksum() -> str:
    """SHA-256 (hex) of the canonical JSON of `money_configuration()`."""
    return fingerprint(money_configuration())
