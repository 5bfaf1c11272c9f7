"""A real PostgreSQL server for tests, from pgserver's wheel: no system package, no root needed.

pgserver runs `initdb` and starts a server on a Unix socket with trust authentication (as root it
creates a `pgserver` system user and runs the server as that user, because PostgreSQL refuses to
run as root). A shared Dagster deployment connects over TCP with a password instead, so once the
role and database exist the server is restarted, by pgserver's own `pg_ctl`, listening on a free
localhost port and asking every client for its password (scram-sha-256).
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg2


@dataclass(frozen=True)
class Postgres:
    """Where a running server is and the role that owns the test database."""

    host: str
    port: int
    user: str
    password: str
    db: str

    def env(self) -> dict[str, str]:
        """The environment deploy/dagster-postgres.yaml reads (DAGSTER_PG_*)."""
        return {"DAGSTER_PG_HOST": self.host, "DAGSTER_PG_PORT": str(self.port), "DAGSTER_PG_USER": self.user,
                "DAGSTER_PG_PASSWORD": self.password, "DAGSTER_PG_DB": self.db}

    def connect(self) -> psycopg2.extensions.connection:
        """A direct connection, as the deployment's role, bypassing Dagster."""
        return psycopg2.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                                dbname=self.db)


@contextmanager
def running_postgres(user: str = "dagster", db: str = "dagster") -> Iterator[Postgres]:
    """Start a server with its data in a new temporary folder; stop it and delete the folder on leaving.

    The folder is not under pytest's tmp_path: as root, the server runs as the `pgserver` user, who must be
    able to enter every parent folder, and each pytest session of the same user (another one on this
    machine, say) sets its base folder /tmp/pytest-of-USER back to mode 0700.
    """
    import pgserver
    from pgserver.utils import find_suitable_port

    password = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="veernet-postgres-") as folder:
        # cleanup_mode=None: this function stops the server itself, not pgserver's atexit hook.
        server = pgserver.get_server(Path(folder) / "pgdata", cleanup_mode=None)
        server.psql(f"CREATE ROLE {user} LOGIN PASSWORD '{password}'; CREATE DATABASE {db} OWNER {user};")
        pgdata, system_user = server.pgdata, server.system_user
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=system_user, timeout=60)
        (pgdata / "pg_hba.conf").write_text("host all all 127.0.0.1/32 scram-sha-256\n")
        port = find_suitable_port("127.0.0.1")
        # -k '': no Unix socket, so every connection goes through the password check above.
        pgserver.pg_ctl(["-w", "-l", str(pgdata / "log"), "-o", f"-h 127.0.0.1 -p {port} -k ''", "start"],
                        pgdata=pgdata, user=system_user, timeout=60)
        postmaster = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
        try:
            yield Postgres(host="127.0.0.1", port=port, user=user, password=password, db=db)
        finally:
            pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=system_user, timeout=60)
            # Exited, even if its new parent (init) has not reaped it yet.
            if postmaster.is_running() and postmaster.status() != psutil.STATUS_ZOMBIE:
                raise RuntimeError(f"PostgreSQL (pid {postmaster.pid}, data {pgdata}) still runs after pg_ctl stop")
