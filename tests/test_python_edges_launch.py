"""Launch failures that name their real cause (issue 16)."""

from __future__ import annotations

import pytest

from jupyter_debug_relay import RelayError


@pytest.mark.parametrize("target", [{"program": "app.py"}, {"module": "json.tool"}])
def test_a_missing_working_directory_is_named_as_the_cause(relay, write, tmp_path, target):
    write("app.py", "print('hi')\n")
    missing = str(tmp_path / "no" / "such")
    with pytest.raises(RelayError) as failed:
        relay.launch(cwd=missing, **target)
    assert failed.value.code == "file_not_found"
    assert "cwd" in failed.value.message and missing in failed.value.message
    assert failed.value.details["path"] == missing
