"""For the tests of uploads: a request body that counts what the server reads of it (size limits), and
running a submitted archive's unpacking job as a worker would."""

from django.test.client import FakePayload


class CountingPayload(FakePayload):
    """The request body as the server reads it (``wsgi.input``), counting the bytes read in ``bytes_read``."""

    def __init__(self, content: bytes):
        super().__init__(content)
        self.bytes_read = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk

    def readline(self, size=-1):
        line = super().readline(size)
        self.bytes_read += len(line)
        return line


def unpack_now(model):
    """Run the model's unpacking job here, as a worker would (``leaderboard.jobs.unpack_model``, for real);
    return the model reloaded (status ``queued``, or ``failed`` with the reason)."""
    from leaderboard.jobs import unpack_model

    unpack_model(model.pk)
    model.refresh_from_db()
    return model


def submit_unpacked(**kwargs):
    """``leaderboard.services.submit_model_archive(**kwargs)`` then its unpacking job (``unpack_now``):
    the model as it is once a worker has unpacked it."""
    from leaderboard.services import submit_model_archive

    return unpack_now(submit_model_archive(**kwargs))
