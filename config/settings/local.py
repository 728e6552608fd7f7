"""`make run`: DEBUG on by default; SQLite and eager tasks unless DATABASE_URL / REDIS_URL say."""

from config.settings.base import *  # noqa: F403
from config.settings.env import env_bool

DEBUG = env_bool("DEBUG", default=True)
