"""The README and docs/ stay true: the case-file reference is the schema's, CI runs the README's
test command, its Python examples run, it stays short and its links to docs/ lead somewhere."""

import contextlib
import io
import re
from pathlib import Path

from solvers.cases.reference import reference

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
TEST_COMMAND = ('pip install -e ".[test]" && '
                'SOLVERS_REQUIRE_NVRTC=1 python -m pytest -m "not gpu" -q')
NOT_YET_WRITTEN = {"docs/architecture.md"}  # being written; linked already


def test_case_reference_matches_the_schema():
    assert reference() in (ROOT / "docs" / "case-files.md").read_text()


def test_ci_runs_the_readme_test_command():
    assert TEST_COMMAND in README.read_text()
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text().splitlines()


def expected_outputs(block):
    """What a README block says it prints, in order: the comment after each `print(...)`
    line (where it has one), with `...` standing for anything."""
    said = re.findall(r"^print\(.*\)  # (.*)$", block, flags=re.MULTILINE)
    return [re.escape(text).replace(re.escape("..."), ".*") for text in said]


def test_python_examples_run(tmp_path, monkeypatch):
    """Every ```python block of the README, run in a folder that has the cases, prints what
    its comments say it prints."""
    (tmp_path / "cases").symlink_to(ROOT / "cases")
    monkeypatch.chdir(tmp_path)
    blocks = [block.split("```")[0] for block in README.read_text().split("```python\n")[1:]]
    assert len(blocks) == 4
    said = 0
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})
        # The said outputs, in order, among the printed lines.
        printed = iter(out.getvalue().splitlines())
        for pattern in expected_outputs(block):
            assert any(re.fullmatch(pattern, line) for line in printed), (pattern,
                                                                           out.getvalue())
        said += len(expected_outputs(block))
    assert said >= 3 and (tmp_path / "out" / "sod.h5").exists()


def test_readme_is_short():
    assert len(README.read_text().splitlines()) <= 300


def test_readme_links_to_docs_exist():
    links = set(re.findall(r"\]\((docs/[^)#\s]+\.md)", README.read_text()))
    assert {"docs/case-files.md", "docs/verification.md", "docs/performance.md"} <= links
    missing = [link for link in sorted(links - NOT_YET_WRITTEN) if not (ROOT / link).is_file()]
    assert not missing
