"""The transport tests drive ``tasks/loop/endpoints`` directly (a call, a stream, a probe), as a caller
inside the gate would: each call a test makes outside an admission is admitted for ``evaluation``
(the gate itself, and that nothing bypasses it, is tested in ``tests/security``)."""

import pytest


@pytest.fixture(autouse=True)
def _admitted_as_the_transport_tests_caller(monkeypatch):
    from tasks.loop import gate
    from tasks.models import Purpose

    real = gate.admission_for

    def admission_for(model):
        try:
            return real(model)
        except gate.GateBypassed:
            return gate.Admission(model, Purpose.EVALUATION)

    monkeypatch.setattr(gate, "admission_for", admission_for)
