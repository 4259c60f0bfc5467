"""Run a docs page's blocks in this interpreter: the child of
``tests/test_install.py``'s guard-only test, run by a venv that holds
prunecheck and nothing else, so it imports only the standard library.

``python docs_page_child.py SPEC.json``: the spec, written by the parent
from ``tests/test_docs_examples.py``'s parse of the page, names the folder
to run in and the blocks in order (``python`` executed, ``pycon`` run as a
doctest, ``console`` commands run with this interpreter, their shown output
compared with doctest's ELLIPSIS), as ``tests/test_docs_examples.py`` runs
them.  A mismatch is an AssertionError (exit 1); at the end it prints, as
JSON, how many blocks ran and which of the harness's packages were loaded
or are installed (both should be none).
"""

from __future__ import annotations

import doctest
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HEAVY = ("hypothesis", "simpy", "networkx", "matplotlib", "tqdm", "numpy")


def _console(command: dict[str, Any], where: str) -> None:
    words = list(command["words"])
    shown = f"{where}: $ {command['line']}"
    assert words[0] == "python", f"{shown}: the guard-only install runs only python here"
    done = subprocess.run(
        [sys.executable, *words[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **dict(command["env"]), "PYTHONUNBUFFERED": "1"},
        timeout=300,
        check=False,
    )
    got = done.stdout
    assert "Traceback" not in got, f"{shown}\n{got}"
    assert done.returncode == command["status"], f"{shown}\nexit {done.returncode}:\n{got}"
    if command["output"] is not None:
        want = "\n".join(line.rstrip() for line in command["output"].splitlines()) + "\n"
        have = "\n".join(line.rstrip() for line in got.splitlines()) + "\n"
        checker = doctest.OutputChecker()
        assert checker.check_output(want, have, doctest.ELLIPSIS), (
            f"{shown}\n"
            + checker.output_difference(doctest.Example("", want), have, doctest.ELLIPSIS)
        )


def _pycon(text: str, where: str, namespace: dict[str, Any]) -> None:
    test = doctest.DocTestParser().get_doctest(text, namespace, where, where, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.REPORT_ONLY_FIRST_FAILURE)
    report = io.StringIO()
    runner.run(test, out=report.write, clear_globs=False)
    namespace.update(test.globs)
    assert runner.failures == 0, report.getvalue()


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    os.chdir(spec["folder"])
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in spec["blocks"]:
        if block["lang"] == "python":
            exec(compile(block["text"], block["where"], "exec"), namespace)
        elif block["lang"] == "pycon":
            _pycon(block["text"], block["where"], namespace)
        else:
            for command in block["commands"]:
                _console(command, block["where"])
    print(
        json.dumps(
            {
                "ran": len(spec["blocks"]),
                "loaded": [m for m in HEAVY if m in sys.modules],
                "installed": [m for m in HEAVY if importlib.util.find_spec(m) is not None],
            }
        )
    )


if __name__ == "__main__":
    main()
