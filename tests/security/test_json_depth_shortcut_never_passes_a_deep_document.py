"""``loads_bounded`` skips the depth walk when the text holds no more ``[``/``{`` than the limit (a bound
on the depth); documents deeper than the limit are still refused, in every encoding ``json`` reads,
and brackets inside strings only make it walk."""

import json

import pytest

from dynabench.jsonbounds import JSONTooDeep, loads_bounded


@pytest.mark.parametrize("encode", [str, lambda t: t.encode("utf-8"), lambda t: t.encode("utf-16"), lambda t: t.encode("utf-32")])
def test_deep_documents_are_refused_and_shallow_ones_read(encode):
    deep = "[" * 5 + "{\"a\": " * 4 + "1" + "}" * 4 + "]" * 5
    shallow_with_brackets = json.dumps({"uid": "x", "label": "[[[[{{{{" * 20})

    with pytest.raises(JSONTooDeep):
        loads_bounded(encode(deep), max_depth=8)
    assert loads_bounded(encode(deep), max_depth=9)[0][0][0][0][0]["a"]["a"]["a"]["a"] == 1
    assert loads_bounded(encode(shallow_with_brackets), max_depth=8)["label"].startswith("[[[[")
