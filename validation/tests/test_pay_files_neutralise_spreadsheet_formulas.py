"""OWASP CSV injection: a worker id, username or bonus reason that starts with ``= + - @``, a tab
or a carriage return reaches the pay files as text (a leading single quote), never as a
formula; the files stay well-formed CSV."""

import csv
import io
from decimal import Decimal

import pytest

from validation import pay
from validation.pay import PayRow, safe_cell


@pytest.mark.parametrize("value", ["=1+1", "+SUM(A1)", "-2-3", "@cmd", "\tx", "\rx", "=HYPERLINK(\"http://x\")"])
def test_a_cell_that_a_spreadsheet_would_run_is_quoted(value):
    assert safe_cell(value) == "'" + value


def test_ordinary_cells_are_unchanged():
    assert [safe_cell(v) for v in ["5f1a2b3c", "1.05", "crowd-abc", "0.00", ""]] == ["5f1a2b3c", "1.05", "crowd-abc", "0.00", ""]


def test_every_pay_file_neutralises_its_cells():
    rows = [PayRow(worker_id="=1+1", assignment_id="-2-3", username="@user", examples=1, validations=0, fooling=0,
                   base=Decimal("1.00"), bonus=Decimal("0.00"))]
    files = [pay.prolific_bonus_csv(rows), pay.mturk_bonus_csv(rows, reason="+bonus"), pay.summary_csv(rows, currency="GBP")]
    for text in files:
        for row in csv.reader(io.StringIO(text)):
            assert not any(cell.startswith(pay.FORMULA_STARTS) for cell in row), row
    assert next(csv.reader(io.StringIO(files[0]))) == ["'=1+1", "1.00"]
    assert list(csv.reader(io.StringIO(files[1])))[1] == ["'=1+1", "'-2-3", "1.00", "'+bonus"]
