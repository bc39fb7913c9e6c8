"""The SQLite backend of the test suite: Django's own, except that a run migrates its test database
once, whatever the number of its pytest processes.

``tests/settings.py`` selects this backend when ``DATABASE_URL`` points at SQLite (the default) and
names ``DATABASES["default"]["TEST"]["MIGRATED_COPY"]``: a file in the folder that the processes of
one run share (the pytest-xdist controller's scratch folder, ``DYNABENCH_TEST_RUN_DIR``).

Each process's test database lives in memory. The first process of a run to need it migrates it
as Django does and writes a copy of it, as migrated and before any test has written to it, to
``MIGRATED_COPY``; every other process loads that copy into its own in-memory database with
SQLite's backup API (milliseconds) instead of applying the migrations again (about 3.6
CPU-seconds each, measured as the first setup of each of ``make test``'s three workers).
A lock file beside the copy makes the others wait while the first one migrates.

The tests that start real worker processes (``tests.worker_stack``, the ``stack_template``
fixture) copy the same file as their platform's database.
"""

import fcntl
import sqlite3
from contextlib import closing, contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.db.backends.sqlite3 import base
from django.db.backends.sqlite3.creation import DatabaseCreation as SQLiteCreation


@contextmanager
def _locked(path: Path):
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the ``with`` block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class DatabaseCreation(SQLiteCreation):
    def create_test_db(self, verbosity=1, autoclobber=False, serialize=True, keepdb=False):
        """Django's ``create_test_db`` (returns the test database's name) where ``TEST`` names no
        ``MIGRATED_COPY``. Otherwise, under the copy's lock: load the copy when a process of this run
        has written it, else migrate as Django does and write it (replaced whole: written beside it,
        then renamed)."""
        copy = self.connection.settings_dict["TEST"].get("MIGRATED_COPY")
        if not copy:
            return super().create_test_db(verbosity, autoclobber, serialize, keepdb)
        copy = Path(copy)
        with _locked(copy.with_name(copy.name + ".lock")):
            if copy.exists():
                return self._load_migrated_copy(copy, serialize)
            name = super().create_test_db(verbosity, autoclobber, serialize, keepdb)
            part = copy.with_name(copy.name + ".part")
            self.connection.ensure_connection()
            with closing(sqlite3.connect(part)) as target:
                self.connection.connection.backup(target)
            part.replace(copy)
            return name

    def _load_migrated_copy(self, copy: Path, serialize: bool) -> str:
        """What Django's ``create_test_db`` does, with the migrated ``copy`` loaded into the new
        in-memory database in place of ``migrate``. Returns the test database's name."""
        name = self._get_test_db_name()
        self.connection.close()
        settings.DATABASES[self.connection.alias]["NAME"] = name
        self.connection.settings_dict["NAME"] = name
        self.connection.ensure_connection()
        with closing(sqlite3.connect(copy)) as source:
            source.backup(self.connection.connection)
        if serialize:
            self.connection._test_serialized_contents = self.serialize_db_to_string()
        call_command("createcachetable", database=self.connection.alias)
        return name


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation
