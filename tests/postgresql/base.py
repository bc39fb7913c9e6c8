"""The PostgreSQL backend of the test suite: Django's own, except how a transactional test empties
the database between tests.

Django's ``flush`` (run after every ``transactional_db`` / ``live_server`` test, by
``TransactionTestCase._fixture_teardown``) sends one ``TRUNCATE`` of every table. On PostgreSQL a
``TRUNCATE`` gives each table, index and TOAST table a new file and takes an exclusive lock on each:
about 1.3 s for this project's tables, whether they hold a row or not (measured on the 2-core
machine). A test leaves a few hundred rows at most, and ``DELETE FROM`` each table empties them in
milliseconds. The foreign keys Django creates on PostgreSQL are ``DEFERRABLE INITIALLY DEFERRED``
and the flush runs in one transaction, so the tables can be emptied in any order and the keys are
checked at its commit, when every table is empty.

``tests/settings.py`` selects this backend when ``DATABASE_URL`` points at PostgreSQL; a flush that
must also reset sequences (``reset_sequences=True``) keeps Django's ``TRUNCATE ... RESTART IDENTITY``.
"""

from django.db.backends.postgresql import base
from django.db.backends.postgresql.operations import DatabaseOperations as PostgreSQLOperations


class DatabaseOperations(PostgreSQLOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        """SQL statements that empty ``tables`` (a list of table names): ``DELETE FROM`` each one, with
        every deferrable constraint deferred to the commit. With ``reset_sequences`` (or ``allow_cascade``,
        which can reach tables outside ``tables``), Django's ``TRUNCATE``."""
        if not tables or reset_sequences or allow_cascade:
            return super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return ["SET CONSTRAINTS ALL DEFERRED;", *(
            f"{style.SQL_KEYWORD('DELETE')} {style.SQL_KEYWORD('FROM')} {style.SQL_FIELD(self.quote_name(table))};" for table in tables
        )]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
