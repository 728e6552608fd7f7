"""Settings shared by every environment, composed of one module per concern.

Where things run is read from the environment: DATABASE_URL (PostgreSQL; unset, an SQLite file:
`config.settings.databases`) and REDIS_URL (the cache and Celery's broker; unset, local memory and
eager tasks: `config.settings.cache_and_celery`). Each module's docstring lists the variables it
reads and what it guarantees:

- application: the apps, middleware, templates, languages, static files, BASE_DIR and VAR_DIR;
- security: the secret key, the allowed hosts, the terminals' client certificates;
- databases: PostgreSQL and the bounds that make the service fail closed;
- cache_and_celery: Redis as the cache and the broker, how tasks are delivered;
- api: DRF (its throttle rates), the request size limit, the OpenAPI schema;
- staff: password rules, the sign-in throttle and login URL, the club's name, the second factor;
- winners: the identification threshold, the identities' keys and retention;
- money: the approved checksum of what decides money, and the settings that do;
- club: the club day's end and whether it closes the open session;
- progressive: the notices' deadline "without delay", the club's season (orphans);
- code: the approved digest of the installed code;
- journal: the chain's key, full verifications, the history's fold, reconciliation, anchors;
- integrity: award counts, voids, silent terminals, stale rounds;
- exports: the auditors' background exports;
- notifications: the outbox and the big-win webhooks;
- schedule: what beat runs and how often (it imports the periods of the modules above);
- observability: the security log, who reads /metrics, the log format and LOGGING.

Invariant: no two modules define the same name, and a module that reads another's value imports
it from that module by name (never through this one), so the order of the imports below is free.
local, test and production start from `from config.settings.base import *` and override.
"""

from config.settings.api import *  # noqa: F403
from config.settings.application import *  # noqa: F403
from config.settings.cache_and_celery import *  # noqa: F403
from config.settings.club import *  # noqa: F403
from config.settings.code import *  # noqa: F403
from config.settings.databases import *  # noqa: F403
from config.settings.exports import *  # noqa: F403
from config.settings.integrity import *  # noqa: F403
from config.settings.journal import *  # noqa: F403
from config.settings.money import *  # noqa: F403
from config.settings.notifications import *  # noqa: F403
from config.settings.observability import *  # noqa: F403
from config.settings.progressive import *  # noqa: F403
from config.settings.schedule import *  # noqa: F403
from config.settings.security import *  # noqa: F403
from config.settings.staff import *  # noqa: F403
from config.settings.winners import *  # noqa: F403
