"""Every shipped case states its expected run time on the host backend and on a GPU (a
comment line, `# Run time: ...`, above its [case] section)."""

from pathlib import Path

import pytest

CASES = sorted((Path(__file__).resolve().parents[1] / "cases").glob("*.toml"))


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_case_states_its_run_time(path):
    text = path.read_text()
    header = text[:text.index("\n[case]\n")]
    statement = header[header.index("# Run time: "):].replace("\n#  ", " ")
    assert "on the host backend (2 cores)" in statement
    assert any(f"GPU (NVIDIA {card}" in statement for card in ("H100", "H200"))
