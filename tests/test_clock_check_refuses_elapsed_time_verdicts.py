"""``scripts/check_test_clocks.py`` (run by ``make lint``, so by CI) refuses a test that asserts on
elapsed time or pauses as a verdict, accepts one that polls for the work's completion signal with
a ceiling, and passes on the repository's own tests."""

import importlib.util
import subprocess
import sys
import textwrap

from django.conf import settings

SCRIPT = settings.BASE_DIR / "scripts" / "check_test_clocks.py"
_spec = importlib.util.spec_from_file_location("check_test_clocks", SCRIPT)
check_test_clocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_test_clocks)


def findings(source: str) -> list[str]:
    return check_test_clocks.check_source(textwrap.dedent(source), "tests/test_snippet.py")


def test_an_assertion_on_elapsed_time_is_refused():
    found = findings("""
        import time

        def test_rescores_within_a_minute(stack):
            closed_at = time.monotonic()
            stack.close_round()
            stack.wait_until_scored()
            elapsed = time.monotonic() - closed_at
            assert elapsed <= 60
    """)
    assert len(found) == 1 and found[0].startswith("tests/test_snippet.py:9: asserts on elapsed time")


def test_a_clock_read_inside_the_assertion_and_a_unittest_assert_are_refused():
    found = findings("""
        from time import perf_counter

        def test_fast(self):
            start = perf_counter()
            run()
            assert perf_counter() - start < 2.0, "too slow"
            self.assertLess(round(perf_counter() - start, 1), 2.0)
    """)
    assert [f.split(": ")[0] for f in found] == ["tests/test_snippet.py:7", "tests/test_snippet.py:8"]


def test_a_pause_before_the_verdict_is_refused_unless_it_says_why():
    found = findings("""
        import time

        def test_the_job_ran(queue):
            queue.enqueue("job")
            time.sleep(2)
            assert queue.is_empty

        def test_the_page_updates(page):
            page.click("button")
            page.wait_for_timeout(300)
            assert page.locator("#outcome").count() == 1

        def slow_load(path):
            time.sleep(0.3)  # clock-ok: makes the other threads ask during the load; the verdict is the load count
            return path
    """)
    assert [f.split(": ")[0] for f in found] == ["tests/test_snippet.py:6", "tests/test_snippet.py:11"]
    assert all("pause used as a verdict" in f for f in found)


def test_polling_a_completion_signal_under_a_ceiling_is_accepted():
    assert findings("""
        import time
        from django.utils import timezone

        def test_the_run_finishes(stack):
            deadline = time.monotonic() + 900  # a ceiling that only catches a hang
            while time.monotonic() < deadline:
                if stack.query("SELECT status FROM run") == [("done",)]:
                    break
                time.sleep(0.5)
            else:
                raise AssertionError("hung: the run did not finish in 900 s")
            key = make_key(time.time())
            assert cache.ttl(key) > 0
            assert Run.objects.get().finished_at <= timezone.now()
    """) == []


def test_the_script_fails_on_a_bad_test_file_and_passes_on_the_repository(tmp_path):
    bad = tmp_path / "test_bad.py"
    bad.write_text("import time\n\ndef test_it():\n    t = time.time()\n    work()\n    assert time.time() - t < 1\n")
    refused = subprocess.run([sys.executable, str(SCRIPT), str(bad)], capture_output=True, text=True)
    assert refused.returncode == 1 and "test_bad.py:6: asserts on elapsed time" in refused.stdout
    clean = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=settings.BASE_DIR)
    assert clean.returncode == 0, clean.stdout
