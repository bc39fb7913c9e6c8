"""What the PostgreSQL benchmarks share: creating their scratch database on the first run."""

from urllib.parse import urlparse


def create_database(url: str) -> None:
    """Create the database named by the PostgreSQL ``url`` when it does not exist yet (connecting to
    the server's ``postgres`` database); other URLs are left alone."""
    if not url.startswith(("postgres://", "postgresql://")):
        return
    import psycopg

    name = urlparse(url).path.lstrip("/")
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
