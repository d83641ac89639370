"""JupyterLab checks Node at every start by running its own ``node-version-check.js``, a
CommonJS script, from the virtualenv. Node takes a ``.js`` file's module type from the
nearest package.json above it, which for the clone's virtualenv was the repository's
(``"type": "module"``): ``./dev lab`` printed "require is not defined" and JupyterLab took
Node for missing. ``./dev``'s setup gives the virtualenv a CommonJS package.json of its own."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import jupyterlab


def test_jupyterlabs_node_check_runs_in_the_virtualenv() -> None:
    node = shutil.which("node")
    assert node is not None, "Node 20 is needed (./dev installs the JS tooling with it)"
    here = Path(jupyterlab.__file__).parent
    done = subprocess.run(  # the command jupyterlab.commands runs, in the folder it runs it in
        [node, "node-version-check.js"], cwd=here, capture_output=True, text=True, timeout=60
    )
    assert "require is not defined" not in done.stderr, done.stderr
    assert done.returncode == 0 and done.stdout.startswith("Node v"), (done.stdout, done.stderr)
