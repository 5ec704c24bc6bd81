"""The README stays true: its case-file reference is the schema's, and CI runs its test
command."""

from pathlib import Path

from solvers.case_doc import reference

ROOT = Path(__file__).parent.parent
TEST_COMMAND = ('pip install -e ".[test]" && '
                'SOLVERS_REQUIRE_NVRTC=1 python -m pytest -m "not gpu" -q')


def test_case_reference_matches_the_schema():
    assert reference() in (ROOT / "README.md").read_text()


def test_ci_runs_the_readme_test_command():
    assert TEST_COMMAND in (ROOT / "README.md").read_text()
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text().splitlines()


def test_python_examples_run(tmp_path, monkeypatch):
    """Every ```python block of the README, run in a folder that has the cases."""
    (tmp_path / "cases").symlink_to(ROOT / "cases")
    monkeypatch.chdir(tmp_path)
    blocks = (ROOT / "README.md").read_text().split("```python\n")[1:]
    assert len(blocks) == 4
    for block in blocks:
        exec(compile(block.split("```")[0], "README.md", "exec"), {})
    assert (tmp_path / "out" / "sod.h5").exists()
