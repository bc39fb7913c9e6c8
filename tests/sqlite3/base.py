"""The SQLite backend of the test suite: Django's own, except that a pytest process's test database,
once migrated, is also copied to a file, which ``WorkerStack``'s scratch platforms then copy.

``tests/settings.py`` selects this backend when ``DATABASE_URL`` points at SQLite (the default) and
names the copy in ``DATABASES["default"]["TEST"]["MIGRATED_COPY"]``: a file in the process's own
scratch folder. The test database lives in memory, and the tests that start real worker processes
(``tests.worker_stack``, the ``stack_template`` fixture) need a migrated database file: each
pytest worker made its own by running ``manage.py migrate`` once more in a child process (about
6 CPU-seconds), where SQLite's backup API copies the in-memory one in milliseconds. The copy is
taken right after the migration, before any test has written to the database.
"""

import sqlite3
from contextlib import closing
from pathlib import Path

from django.db.backends.sqlite3 import base
from django.db.backends.sqlite3.creation import DatabaseCreation as SQLiteCreation


class DatabaseCreation(SQLiteCreation):
    def create_test_db(self, verbosity=1, autoclobber=False, serialize=True, keepdb=False):
        """Django's ``create_test_db`` (returns the test database's name), then, when ``TEST`` names a
        ``MIGRATED_COPY``, a copy of the migrated database written there (the file is replaced whole:
        written beside it, then renamed)."""
        name = super().create_test_db(verbosity, autoclobber, serialize, keepdb)
        copy = self.connection.settings_dict["TEST"].get("MIGRATED_COPY")
        if copy:
            copy = Path(copy)
            copy.parent.mkdir(parents=True, exist_ok=True)
            part = copy.with_name(copy.name + ".part")
            self.connection.ensure_connection()
            with closing(sqlite3.connect(part)) as target:
                self.connection.connection.backup(target)
            part.replace(copy)
        return name


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation
