"""For the tests of upload size limits: a request body that counts what the server reads of it."""

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
