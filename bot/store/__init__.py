"""Persistence for games: SQLModel tables, engine helpers and migrations.

Import the table models from `bot.store.models` and schema management from `bot.store.migrate`
(kept out of this module so importing the engine helpers does not pull in Alembic).
"""

from bot.store.db import default_database_url, make_engine, normalize_url, session_scope

__all__ = ["default_database_url", "make_engine", "normalize_url", "session_scope"]
