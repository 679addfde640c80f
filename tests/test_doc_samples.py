"""scripts/doc_samples.py: every sample output in the docs is what its command prints now (after the
masking rule of the script's docstring), and the mechanism tells a stale sample."""

import re
import signal
from pathlib import Path

import pytest

from scripts.doc_samples import Sample, cut, execute, main, masked, pages, regenerate, samples
from tests.docs_pages import FENCE

ALL = [sample for page in pages() for sample in samples(page)]


def test_the_docs_have_samples_and_every_console_block_is_one():
    """A block of console output is a sample (a marker before it, its command on its first line), and
    every fenced block names its language, so that no unmarked output block hides as a plain block."""
    assert {sample.page.name for sample in ALL} >= {"README.md", "configs.md", "scale-out.md"}
    for page in pages():
        text = page.read_text()
        opening = [m.group().split("\n")[0] for m in FENCE.finditer(text)]
        assert [fence for fence in opening if fence == "```"] == [], page
        assert sum(fence == "```console" for fence in opening) == len(samples(page)), page


@pytest.mark.slow  # a run of sbpbench in a new process each: data loaded, 4 to 10 s of a core
@pytest.mark.parametrize("sample", ALL, ids=[sample.where() for sample in ALL])
def test_each_sample_is_what_its_command_prints(sample):
    assert masked(sample.output, sample) == masked(regenerate(sample), sample), \
        f"{sample.where()} is stale: run `make docs` (python scripts/doc_samples.py)"


def page(tmp_path: Path, marker: str, output: str) -> Path:
    """A page of one sample whose command prints a line with a run id and a time."""
    path = tmp_path / "page.md"
    command = "python -c \"print('results/x/20261129T033711Z 1.25 s'); print('a   b')\""
    path.write_text(f"# Page\n\n<!-- sample:{marker} -->\n```console\n$ {command}\n{output}\n```\nafter\n")
    return path


def test_a_stale_sample_fails_the_check_and_is_rewritten(tmp_path, capsys):
    path = page(tmp_path, "", "results/x/20250101T000000Z 1.25 s\na b\nold line")
    assert main(["--check", str(path)]) == 1
    assert "page.md:4" in capsys.readouterr().err
    assert main([str(path)]) == 0
    assert path.read_text().split("\n")[5:8] == ["results/x/20261129T033711Z 1.25 s", "a   b", "```"]
    assert path.read_text().endswith("```\nafter\n")
    assert main(["--check", str(path)]) == 0


def test_the_masking_rule_hides_run_ids_the_masks_and_column_widths(tmp_path):
    """Another run id, another width of spaces: the same; another time: the same only under its mask."""
    path = page(tmp_path, "", "results/x/20250101T000000Z 9.99 s\na b")
    assert main(["--check", str(path)]) == 1
    path = page(tmp_path, r" mask='[\d.]+(?= s$)'", "results/x/20250101T000000Z 9.99 s\na b")
    assert main(["--check", str(path)]) == 0
    (sample,) = samples(path)
    assert masked(sample.output, sample) == ["results/x/… … s", "a b"]


def test_from_and_until_cut_the_output():
    lines = ["one", "best: x", "table", "Test error", "more"]
    assert cut(lines, "^best", "^Test", "here") == ["best: x", "table", "..."]
    assert cut(lines, None, None, "here") == lines
    with pytest.raises(RuntimeError, match=re.escape("until='^Nothing'")):
        cut(lines, "^best", "^Nothing", "here")


@pytest.mark.parametrize("text, error", [
    ("<!-- sample: -->\n```\n$ ls\n```\n", "must be followed by ```console"),
    ("<!-- sample: -->\n```console\nls\n```\n", "must be followed by ```console"),
    ("<!-- sample: colour=red -->\n```console\n$ ls\n```\n", "unknown sample option 'colour=red'"),
    ("<!-- sample: -->\n```console\n$ ls\n", "not closed"),
])
def test_a_malformed_sample_is_refused(tmp_path, text, error):
    path = tmp_path / "page.md"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(error)):
        samples(path)


def test_a_sample_reads_its_command_and_options(tmp_path):
    path = tmp_path / "page.md"
    path.write_text("<!-- sample: stream=stderr mask=a mask='b c' -->\n```console\n$ sbpbench solvers\nout\n```\n")
    (sample,) = samples(path)
    assert isinstance(sample, Sample) and sample.command == "sbpbench solvers" and sample.output == ["out"]
    assert sample.options == {"stream": ["stderr"], "mask": ["a", "b c"]} and sample.option("from") is None


def test_interrupt_presses_ctrl_c_at_the_line_named(tmp_path):
    """The command would sleep a minute; SIGINT at its line ``go`` ends it at once, even where this
    process ignores SIGINT (as a job started in a shell's background does)."""
    command = "python -c \"import sys, time; print('go', file=sys.stderr, flush=True); time.sleep(60)\""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code, out, err = execute(command, tmp_path, interrupt="^go$")
    finally:
        signal.signal(signal.SIGINT, before)
    assert code != 0 and out == "" and err.startswith("go\n") and "KeyboardInterrupt" in err


def test_a_failed_setup_is_an_error(tmp_path):
    path = tmp_path / "page.md"
    path.write_text("<!-- sample: setup='python -c \"raise SystemExit(3)\"' -->\n```console\n$ python -V\n```\n")
    (sample,) = samples(path)
    with pytest.raises(RuntimeError, match="setup .* failed"):
        regenerate(sample)
