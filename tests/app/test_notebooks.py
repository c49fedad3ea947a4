"""app/grading/notebooks.py: a learner's .ipynb read as data, one rule a test."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.grading.notebooks import MAX_CELLS, MAX_NOTEBOOK_BYTES, NotebookError, extract


def notebook(*sources: str | list[str], markdown_first: bool = False, **fields: Any) -> str:
    cells: list[dict[str, Any]] = [{"cell_type": "markdown", "source": "# Title"}] * (
        1 if markdown_first else 0
    )
    cells += [{"cell_type": "code", "source": s, "outputs": []} for s in sources]
    document: dict[str, Any] = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    document.update(fields)
    return json.dumps(document)


def body(code: str) -> str:
    """The extracted code less its comments (the notes quote what was dropped)."""
    return "\n".join(line for line in code.splitlines() if not line.startswith("#"))


def compiles_and_defines(code: str, name: str) -> dict[str, Any]:
    space: dict[str, Any] = {}
    exec(compile(code, "<extracted>", "exec"), space)
    assert callable(space[name])
    return space


def test_cells_are_read_in_order_and_the_entry_point_works_as_typed() -> None:
    found = extract(
        notebook("import math", "def area(r):\n    return math.pi * r * r", markdown_first=True),
        ["area"],
    )
    assert found.cells == [2, 3]  # numbered as the notebook lists them, markdown counted
    assert found.defined == ["area"] and found.missing == []
    assert compiles_and_defines(found.code, "area")["area"](1.0) == pytest.approx(3.14159, 1e-4)
    assert found.code.startswith("# Extracted by jaxjudge from a notebook's code cells 2, 3")


def test_source_as_a_list_of_lines_is_joined() -> None:
    found = extract(notebook(["def f(x):\n", "    return x + 1\n"]), ["f"])
    assert compiles_and_defines(found.code, "f")["f"](1) == 2


def test_a_cell_magic_drops_the_whole_cell() -> None:
    found = extract(notebook("%%time\ndef f():\n    return 1", "def f():\n    return 2"), ["f"])
    assert compiles_and_defines(found.code, "f")["f"]() == 2
    assert "cell 1: cell magic '%%time' dropped the cell" in found.notes


def test_line_magics_and_shell_escapes_drop_their_line_only() -> None:
    cell = "!pip install jax\n%matplotlib inline\nfiles = !ls\nimport os\ndef f():\n    %time x = 1\n    return os.sep"
    found = extract(notebook(cell), ["f"])
    assert "!" not in body(found.code) and "%" not in body(found.code)
    assert compiles_and_defines(found.code, "f")["f"]() == "/"  # the indented magic became pass
    assert "cell 1, line 1: shell escape '!pip install jax' dropped" in found.notes
    assert "cell 1, line 2: magic '%matplotlib inline' dropped" in found.notes
    assert "cell 1, line 3: shell escape 'files = !ls' dropped" in found.notes
    assert "cell 1, line 6: magic '%time x = 1' dropped" in found.notes


def test_a_percent_continuing_an_expression_is_python_not_a_magic() -> None:
    cell = 'def f(x):\n    return ("%d"\n        % x)\n\nS = """\n%not a magic\n"""'
    found = extract(notebook(cell), ["f"])
    assert compiles_and_defines(found.code, "f")["f"](3) == "3"
    assert found.notes == ['cell 1: \'S = """\' left out (not used by the entry points)']


def test_a_cell_that_does_not_parse_is_skipped() -> None:
    found = extract(notebook("def f(:\n", "def f():\n    return 1"), ["f"])
    assert "cell 1: does not parse as Python (line 1: invalid syntax), skipped" in found.notes
    assert compiles_and_defines(found.code, "f")["f"]() == 1


def test_top_level_calls_loops_and_prints_are_dropped() -> None:
    cell = "def f():\n    return 1\nprint(f())\nfor i in range(3):\n    f()\nf.cache = 1\ntrain()"
    found = extract(notebook(cell), ["f"])
    compiles_and_defines(found.code, "f")  # train() would raise NameError if it were kept
    dropped = [n for n in found.notes if "top-level statement" in n]
    assert [n.split(":")[0] for n in dropped] == [
        "cell 1, line 3", "cell 1, line 4", "cell 1, line 6", "cell 1, line 7",
    ]  # fmt: skip


def test_the_last_definition_wins() -> None:
    found = extract(
        notebook(
            "def f():\n    return 1",
            "def f():\n    return 2",
            "K = 1\nK = 5\ndef g():\n    return K",
        ),
        ["f", "g"],
    )
    space = compiles_and_defines(found.code, "f")
    assert (space["f"](), space["g"]()) == (2, 5)
    assert "cell 1: 'def f():' left out (defined again later)" in found.notes
    assert "cell 3: 'K = 1' left out (defined again later)" in found.notes


def test_only_what_the_entry_points_reach_is_kept() -> None:
    cells = (
        "import numpy as np\nimport matplotlib.pyplot as plt",
        "DATA = np.load('train.npy')\nSCALE = 2",
        "def helper(x):\n    return x * SCALE\n\ndef f(data):\n    return helper(np.sum(data))",
        "class Model:\n    pass\n\ndef unrelated():\n    return DATA",
        "from __future__ import annotations",
    )
    found = extract(notebook(*cells), ["f"])
    kept = body(found.code)
    assert "matplotlib" not in kept and "DATA =" not in kept  # no I/O kept
    assert "class Model" not in kept and "unrelated" not in kept
    assert kept.lstrip().startswith("from __future__ import annotations")  # always kept, first
    assert "SCALE = 2" in kept and "def helper" in kept
    compile(found.code, "<extracted>", "exec")
    assert found.cells == [1, 2, 3, 5]
    # `data` is f's argument, not the module's DATA: a local name pulls nothing in.


def test_a_decorator_and_a_class_are_followed() -> None:
    cells = "import functools\nclass Box:\n    size = 3\n\n@functools.cache\ndef f():\n    return Box.size"
    found = extract(notebook(cells), ["f"])
    assert compiles_and_defines(found.code, "f")["f"]() == 3


def test_several_entry_points_report_which_are_missing() -> None:
    found = extract(notebook("def init():\n    return 0"), ["init", "apply"])
    assert found.defined == ["init"] and found.missing == ["apply"]


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("not json", "not JSON"),
        (b"\xff\xfe{", "not JSON"),
        ("[1, 2]", "not an object"),
        (json.dumps({"nbformat": 3, "cells": []}), "only nbformat 4"),
        (json.dumps({"nbformat": 4, "cells": "x"}), "no list of cells"),
        (json.dumps({"nbformat": 4, "cells": [7]}), "Cell 1 is not a notebook cell"),
        (notebook(["def f():", 3]), "neither a string nor a list of strings"),  # type: ignore[list-item]
        (notebook('"\ud800"'), "not valid Unicode"),
        (json.dumps({"nbformat": 4, "cells": [{"cell_type": "markdown", "source": ""}]}), "no code cells"),
        (notebook("def g():\n    return 1"), "defines none of f"),
        ("[" * 100_000, "not JSON"),
    ],
)  # fmt: skip
def test_a_malformed_notebook_is_one_clear_error(raw: str | bytes, words: str) -> None:
    with pytest.raises(NotebookError, match=words):
        extract(raw, ["f"])


def test_the_caps_are_enforced() -> None:
    with pytest.raises(NotebookError, match="the limit is 500"):
        extract(notebook(*(["x = 1"] * (MAX_CELLS + 1))), ["f"])
    with pytest.raises(NotebookError, match="the limit is 4096 KiB"):
        extract(notebook("x = '" + "a" * MAX_NOTEBOOK_BYTES + "'"), ["f"])
    with pytest.raises(NotebookError, match="more than 1000 lines that start with % or !"):
        extract(notebook("\n".join(["!ls"] * 1001)), ["f"])


def test_magics_inside_a_long_open_string_cannot_make_the_server_reread_it_for_minutes() -> None:
    # Each line that starts with % inside an open string rereads the string to tell it
    # from a magic: 999 of them after 3 MiB cost the server half a minute a request.
    opened = 'x = """\n' + ("a" * 60 + "\n") * 3_400  # 200 KiB, still open
    with pytest.raises(NotebookError, match="inside long open strings or brackets"):
        extract(notebook(opened + "%not_a_magic\n" * 100 + '"""\ndef f():\n    return x'), ["f"])
    # a few of them in a short string are still read as the string's text
    found = extract(notebook('x = """\n%kept\n"""\ndef f():\n    return x'), ["f"])
    assert compiles_and_defines(found.code, "f")["f"]() == "\n%kept\n"


def test_the_code_the_server_parses_is_capped_far_below_the_file() -> None:
    # Parsing is the server's: 4 MiB of `[1,1,...]` cost 10 s and 2 GB, and 20,000
    # one-line statements took minutes (each re-split the cell's source).
    with pytest.raises(NotebookError, match="Cell 1 holds 300 KiB of code; a cell may hold at"):
        extract(notebook("x = [" + "1," * 150 * 1024 + "]"), ["f"])
    cell = "x = [" + "1," * 120 * 1024 + "]"
    with pytest.raises(NotebookError, match="the limit is 1024 KiB"):
        extract(notebook(*[cell] * 5), ["f"])
    with pytest.raises(NotebookError, match="more than 5000 top-level statements"):
        extract(notebook("a = 1\n" * 5001 + "def f():\n    return a"), ["f"])
    found = extract(notebook("a = 1\n" * 4000 + "b = 2\n" * 900 + "def f():\n    return a"), ["f"])
    assert compiles_and_defines(found.code, "f")["f"]() == 1
    assert len(found.notes) == 201 and found.notes[-1] == "... and 4699 more left out"


def test_a_nul_character_skips_its_cell_instead_of_crashing_the_reader() -> None:
    # Python 3.12's tokenize raised SystemError on it while telling a magic from a
    # continued line: an upload that answered 500.
    found = extract(notebook("x = (\n\x00\n%time\n)", "def f():\n    return 1"), ["f"])
    assert "cell 1: holds a NUL character, so is not Python, skipped" in found.notes
    assert compiles_and_defines(found.code, "f")["f"]() == 1
