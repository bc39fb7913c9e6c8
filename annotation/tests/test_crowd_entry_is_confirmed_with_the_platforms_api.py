"""With the owner's API token on a study, each new entry is looked up on the platform and must
name the same worker and study: Prolific's ``GET /api/v1/submissions/{SESSION_ID}/`` and MTurk's
``GetAssignment``. A local stand-in server on a free port answers like the documented endpoints."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client

from annotation.models import CrowdSession, CrowdWorker
from annotation.tests.crowd_helpers import entry_throttles_off, HIT_ID, PROLIFIC_STUDY_ID, mturk_id, mturk_study, mturk_url, pid, prolific_study, prolific_url  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("entry_throttles_off")

PROLIFIC_TOKEN = "prolific-api-token-of-the-owner"


class StandIn(BaseHTTPRequestHandler):
    """Prolific: submissions by id (``Authorization: Token …`` required). MTurk: GetAssignment
    (a SigV4-signed JSON request naming the target)."""

    submissions: dict = {}
    assignments: dict = {}
    seen: list = []

    def log_message(self, *args):
        pass

    def _json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.1" if self.command == "POST" else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.seen.append(("GET", self.path, self.headers.get("Authorization")))
        if self.headers.get("Authorization") != f"Token {PROLIFIC_TOKEN}":
            return self._json(401, {"error": {"detail": "Invalid token."}})
        prefix = "/api/v1/submissions/"
        submission = self.submissions.get(self.path[len(prefix):].rstrip("/")) if self.path.startswith(prefix) else None
        if submission is None:
            return self._json(404, {"error": {"detail": "Not found."}})
        return self._json(200, submission)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(("POST", self.headers.get("X-Amz-Target"), self.headers.get("Authorization", "")))
        if "Credential=AKIDOWNER/" not in self.headers.get("Authorization", ""):
            return self._json(400, {"__type": "UnrecognizedClientException", "message": "bad key"})
        assignment = self.assignments.get(body.get("AssignmentId"))
        if self.headers.get("X-Amz-Target") != "MTurkRequesterServiceV20170117.GetAssignment" or assignment is None:
            return self._json(400, {"__type": "RequestError", "Message": "Assignment does not exist."})
        return self._json(200, {"Assignment": assignment, "HIT": {"HITId": assignment["HITId"]}})


@pytest.fixture
def stand_in(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    settings.PROLIFIC_API_URL = settings.MTURK_API_URL = settings.MTURK_SANDBOX_API_URL = url
    StandIn.submissions, StandIn.assignments, StandIn.seen = {}, {}, []
    yield StandIn
    server.shutdown()
    server.server_close()


def submission(session, participant, study=PROLIFIC_STUDY_ID):
    return {"id": session, "participant": participant, "study_id": study, "status": "ACTIVE",
            "started_at": "2026-11-25T10:00:00Z", "completed_at": None, "entered_code": None}


def test_a_prolific_entry_whose_submission_names_another_participant_is_refused(stand_in, sentiment_task):
    study = prolific_study(sentiment_task.current_round(), api_token=PROLIFIC_TOKEN)
    stand_in.submissions[pid("s-real")] = submission(pid("s-real"), pid("real"))
    stand_in.submissions[pid("s-other")] = submission(pid("s-other"), pid("real"), study="0123456789abcdef01234567")

    assert Client().get(prolific_url(study, pid("real"), pid("s-real"))).status_code == 302
    assert CrowdSession.objects.get().verified
    assert stand_in.seen[0] == ("GET", f"/api/v1/submissions/{pid('s-real')}/", f"Token {PROLIFIC_TOKEN}")

    forged = Client().get(prolific_url(study, pid("made-up"), pid("s-real")))
    other_study = Client().get(prolific_url(study, pid("real"), pid("s-other")))
    unknown = Client().get(prolific_url(study, pid("made-up-2"), pid("s-unknown")))
    assert forged.status_code == other_study.status_code == unknown.status_code == 403
    assert b"names another worker or study" in forged.content and b"no record of this session" in unknown.content
    assert CrowdWorker.objects.count() == 1


def test_a_confirmed_entry_lets_the_worker_in_from_a_new_browser(stand_in, sentiment_task, nli_task):
    first = prolific_study(sentiment_task.current_round())
    second = prolific_study(nli_task.current_round(), api_token=PROLIFIC_TOKEN)
    assert Client().get(prolific_url(first, pid("w"))).status_code == 302
    stand_in.submissions[pid("s-new")] = submission(pid("s-new"), pid("w"))

    assert Client().get(prolific_url(second, pid("w"), pid("s-new"))).status_code == 302
    assert CrowdWorker.objects.count() == 1 and CrowdSession.objects.filter(study=second, verified=True).count() == 1


def test_the_platform_not_answering_gives_a_retry_page_and_no_account(settings, sentiment_task):
    with socket.socket() as closed:  # a free port that nothing listens on once closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    settings.PROLIFIC_API_URL = f"http://127.0.0.1:{port}"
    study = prolific_study(sentiment_task.current_round(), api_token=PROLIFIC_TOKEN)
    answer = Client().get(prolific_url(study, pid("w")))
    assert answer.status_code == 503 and b"could not confirm your entry" in answer.content
    assert not CrowdWorker.objects.exists()


def test_an_mturk_entry_is_confirmed_with_get_assignment(stand_in, sentiment_task):
    study = mturk_study(sentiment_task.current_round(), api_token="AKIDOWNER:owner-secret-key")
    worker, assignment = mturk_id("w"), mturk_id("a", "3A")
    stand_in.assignments[assignment] = {"AssignmentId": assignment, "WorkerId": worker, "HITId": HIT_ID, "AssignmentStatus": "Submitted"}

    assert Client().get(mturk_url(study, worker, assignment)).status_code == 302
    assert stand_in.seen[0][1] == "MTurkRequesterServiceV20170117.GetAssignment"
    assert "AWS4-HMAC-SHA256" in stand_in.seen[0][2]

    stolen = Client().get(mturk_url(study, mturk_id("attacker"), assignment))
    unknown = Client().get(mturk_url(study, mturk_id("attacker2"), mturk_id("x", "3A")))
    assert stolen.status_code == unknown.status_code == 403
    assert CrowdWorker.objects.count() == 1
