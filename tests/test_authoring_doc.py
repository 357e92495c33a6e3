"""docs/authoring-passes.md is exercised: every `$ kltrans ...` command in it runs, in
order, in a scratch copy of the catalogue, and the output lines it shows are printed."""

import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "authoring-passes.md")


def console_blocks(text: str):
    """(command, shown output lines) for each `$ ` line in ```console blocks."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", text, re.DOTALL):
        cmd, shown = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if cmd:
                    out.append((cmd, shown))
                cmd, shown = line[2:], []
            elif line.strip():
                shown.append(line)
        if cmd:
            out.append((cmd, shown))
    return out


def test_walkthrough(tmp_path):
    shutil.copytree(os.path.join(ROOT, "passes"), tmp_path / "passes",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(ROOT, "tests", "passes"), tmp_path / "tests" / "passes")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), NO_COLOR="1")
    steps = console_blocks(open(DOC).read())
    assert len(steps) >= 4
    for cmd, shown in steps:
        argv = shlex.split(cmd)
        assert argv[0] == "kltrans"
        p = subprocess.run([sys.executable, "-m", "kltrans", *argv[1:]], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=120)
        assert p.returncode == 0, f"{cmd}\n{p.stdout}"
        got = p.stdout.splitlines()
        # the lines the doc shows appear, in order
        it = iter(got)
        for line in shown:
            assert any(g.rstrip() == line.rstrip() for g in it), \
                f"{cmd}: shown line not printed: {line!r}\n--- got ---\n" + "\n".join(got)
    # the scratch catalogue now registers the new pair; the real one is untouched
    assert '"demo-pass": "passes.demo_pass:DemoPass"' in (tmp_path / "passes" / "__init__.py").read_text()
    assert "demo-pass" not in open(os.path.join(ROOT, "passes", "__init__.py")).read()
