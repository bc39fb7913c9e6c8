"""``python -m dynabench_client``: the ``dynabench`` command line (``dynabench_client/cli.py``)."""

from dynabench_client.cli import run

run()
