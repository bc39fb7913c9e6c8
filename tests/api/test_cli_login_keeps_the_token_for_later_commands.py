"""``dynabench login`` trades a username and password for an API token and keeps it, with the server's
address, in a login file only its owner can read; later commands use it without flags."""

import stat

from tests.cli_support import dynabench


def test_login_then_list_tasks(live_server, researcher, default_tasks, tmp_path):
    config = tmp_path / "dynabench" / "config.json"

    login = dynabench("--url", live_server.url, "login", "--username", "rita", "--password-stdin", url=None, config=config,
                      stdin="pw-rita\n")
    tasks = dynabench("tasks", url=None, config=config)
    wrong = dynabench("--url", live_server.url, "login", "-u", "rita", "--password-stdin", url=None,
                      config=tmp_path / "other.json", stdin="nope\n")

    assert login.returncode == 0, login.stderr
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert tasks.returncode == 0, tasks.stderr
    assert {line.split()[0] for line in tasks.stdout.splitlines()[1:]} == set(default_tasks)
    assert wrong.returncode in (3, 4) and not (tmp_path / "other.json").exists()
