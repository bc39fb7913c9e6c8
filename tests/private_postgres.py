"""A PostgreSQL cluster of the test's own, for the tests and drills that dump, restore or restart it.

``PrivatePostgres()`` makes a new cluster (``initdb``) in a temporary folder of its own and runs it
on a free local port, listening on 127.0.0.1 only, every local user trusted (user ``postgres``):
the machine's shared server is never touched. ``start()``, ``stop()`` and ``restart()`` drive it
with ``pg_ctl`` (``mode``: ``fast``, ``smart`` or ``immediate``, the last as a crash would);
``create_database``, ``dump`` (``pg_dump -Fc``) and ``restore`` (``pg_restore`` into a new database)
are the steps of a backup and its restore; ``url(name)`` is the ``DATABASE_URL`` of one of its
databases. ``close()`` stops it and removes its folder. Use it as a context manager, or through the
``private_postgres`` fixture (``conftest.py``).

The binaries come from ``PG_BINDIR`` if set, else the newest ``/usr/lib/postgresql/<n>/bin`` (where
Debian keeps ``initdb`` and ``pg_ctl``), else ``PATH``; ``available()`` says whether they are there.
PostgreSQL refuses to run as root: run as root, the server runs as the ``postgres`` user
(``runuser``) and its folder belongs to it. ``fsync`` is off (the cluster lives no longer than a test
and no machine crashes under it); ``synchronous_commit`` stays on, so a commit acknowledged is on
the server's disk files before the client hears of it, and a restart, even an immediate one, keeps it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

USER = "postgres"


def bindir() -> Path | None:
    """The folder of ``initdb``, ``pg_ctl``, ``pg_dump`` and ``pg_restore`` of one PostgreSQL version, or None."""
    if os.environ.get("PG_BINDIR"):
        return Path(os.environ["PG_BINDIR"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def available() -> bool:
    """Whether the PostgreSQL server binaries are installed here (``initdb``, ``pg_ctl``)."""
    folder = bindir()
    return bool(folder and (folder / "initdb").exists() and (folder / "pg_ctl").exists())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivatePostgres:
    """A PostgreSQL cluster on ``127.0.0.1:<free port>`` that the test may dump, restore, stop and restart."""

    def __init__(self, *, max_connections: int = 100, **server_settings: str):
        self.bin = bindir()
        if not available():
            raise RuntimeError("the PostgreSQL server binaries (initdb, pg_ctl) are not installed; set PG_BINDIR")
        self.as_root = os.geteuid() == 0
        # Its own folder under the system's temporary folder: the server's user must be able to reach
        # it, which a test's tmp_path (private to the test's user) does not allow.
        self.folder = Path(tempfile.mkdtemp(prefix="private-postgres-"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = _free_port()
        self.settings = {"max_connections": str(max_connections), "fsync": "off", "full_page_writes": "off",
                         "listen_addresses": "127.0.0.1", "unix_socket_directories": str(self.folder), **server_settings}
        if self.as_root:
            shutil.chown(self.folder, USER, USER)
        self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")

    def _run(self, program: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        command = [str(self.bin / program), *args]
        if self.as_root:
            command = ["runuser", "-u", USER, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=self.folder)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr[-2000:]}{self.server_log()}")
        return done

    def server_log(self, chars: int = 2000) -> str:
        """The end of the server's log (empty before its first start)."""
        return "\n--- server log\n" + self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def url(self, name: str = "postgres") -> str:
        """``postgres://postgres@127.0.0.1:<port>/<name>``: a ``DATABASE_URL``."""
        return f"postgres://{USER}@127.0.0.1:{self.port}/{name}"

    def connect(self, name: str = "postgres") -> psycopg.Connection:
        """A new autocommit connection to the database ``name`` (the caller closes it)."""
        return psycopg.connect(self.url(name), autocommit=True, connect_timeout=5)

    def answers(self) -> bool:
        """Whether the server accepts a connection now."""
        try:
            with self.connect() as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def start(self, *, timeout: float = 120) -> PrivatePostgres:
        """Start the server and wait until it accepts connections; ``timeout`` (s) only catches a hang."""
        options = " ".join(f"-c {key}={value}" for key, value in self.settings.items())
        self._run("pg_ctl", "start", "-D", str(self.data), "-l", str(self.log), "-w", "-t", str(int(timeout)),
                  "-o", f"-p {self.port} {options}", timeout=timeout + 30)
        return self

    def stop(self, *, mode: str = "fast", timeout: float = 120) -> None:
        """Stop the server: ``fast`` ends every session and shuts down cleanly, ``immediate`` stops at
        once as a crash would (the next start recovers from the write-ahead log). No-op when stopped."""
        if not (self.data / "postmaster.pid").exists():
            return
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", mode, "-w", "-t", str(int(timeout)), timeout=timeout + 30)

    def restart(self, *, mode: str = "fast") -> None:
        """Stop the server (``mode`` as in ``stop``) and start it again on the same port."""
        self.stop(mode=mode)
        self.start()

    def create_database(self, name: str) -> str:
        """Create the database ``name`` (empty) and return its URL."""
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def dump(self, name: str, path: Path | str) -> Path:
        """``pg_dump -Fc`` of the database ``name`` into ``path`` (one consistent snapshot, taken while
        others write: pg_dump reads everything in one repeatable-read transaction); returns ``path``."""
        path = Path(path)
        done = subprocess.run([str(self.bin / "pg_dump"), "-Fc", "-f", str(path), "-d", self.url(name)],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"pg_dump failed ({done.returncode}): {done.stderr[-2000:]}")
        return path

    def restore(self, path: Path | str, name: str) -> str:
        """Create the database ``name`` and ``pg_restore`` the dump ``path`` into it (stopping at the
        first error); returns its URL."""
        self.create_database(name)
        done = subprocess.run([str(self.bin / "pg_restore"), "--exit-on-error", "--no-owner", "-d", self.url(name), str(path)],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"pg_restore failed ({done.returncode}): {done.stderr[-2000:]}")
        return self.url(name)

    def close(self) -> None:
        """Stop the server (at once) and remove its folder."""
        try:
            self.stop(mode="immediate")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PrivatePostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

