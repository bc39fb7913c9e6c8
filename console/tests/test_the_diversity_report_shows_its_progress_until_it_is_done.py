"""While a round's diversity report is queued or running, the console's diversity page shows a progress
bar that polls its own fragment; once the job is done (or failed) the fragment tells HTMX to reload the
page, which then shows the figures. Only the task's owners may poll it."""

import re

from annotation.diversity_models import RoundDiversity


def test_the_progress_bar_polls_until_the_report_is_done(client, owner, annotator, sentiment_task):
    round1 = sentiment_task.current_round()
    report = RoundDiversity.objects.create(round=round1, status="running", progress=0.42)
    url = f"/tasks/{sentiment_task.code}/console/rounds/{round1.number}/diversity/"
    client.force_login(owner)

    page = client.get(url).content.decode()
    running = client.get(url + "progress")
    RoundDiversity.objects.filter(pk=report.pk).update(status="done", progress=1.0, figures={"examples": 0, "clusters": []})
    done = client.get(url + "progress")
    client.force_login(annotator)
    refused = client.get(url + "progress")

    assert re.search(r'<progress max="1" value="0\.42"', page) and 'hx-get="' + url + 'progress"' in page
    assert "42%" in running.content.decode() and "HX-Refresh" not in running
    assert done.status_code == 200 and done["HX-Refresh"] == "true" and "<progress" not in done.content.decode()
    assert refused.status_code == 403
