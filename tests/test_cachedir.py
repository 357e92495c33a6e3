"""kltrans's on-disk cache: where it is, kltrans cache info|clean, and its size bound."""

import json
import os
import subprocess
import sys

from kltrans import cachedir


def _entry(root, area, key, size, mtime, exts=(".json", ".cubin")):
    d = root / area / key[:2]
    d.mkdir(parents=True, exist_ok=True)
    for ext in exts:
        p = d / (key + ext)
        p.write_bytes(b"x" * size)
        os.utime(p, (mtime, mtime))


def test_prune_deletes_whole_entries_oldest_first_down_to_nine_tenths(tmp_path):
    for k in range(10):  # ten entries of 2 x 100 bytes, entry k written at time 1000 + k
        _entry(tmp_path, "nvrtc", f"{k:02d}aa", 100, 1000 + k)
    _entry(tmp_path, "cpu/rt", "ffrt", 500, 0, exts=(".so",))  # a build: never pruned
    n, gone = cachedir.prune(str(tmp_path), limit=1500)
    # 2000 bytes of entries over a 1500 bound: down to at most 1350, the oldest first
    assert (n, gone) == (8, 800)
    left = sorted(p.name for p in (tmp_path / "nvrtc").rglob("*.*"))
    assert left == sorted(f"{k:02d}aa{e}" for k in range(4, 10) for e in (".json", ".cubin"))
    assert (tmp_path / "cpu" / "rt" / "ff" / "ffrt.so").exists()
    # ok: under the bound, or with no bound, nothing is deleted
    assert cachedir.prune(str(tmp_path), limit=1500) == (0, 0)
    assert cachedir.prune(str(tmp_path), limit=0) == (0, 0)


def test_maybe_prune_runs_once_a_minute_across_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("KLTRANS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("KLTRANS_CACHE_MAX_MB", "0.001")  # 1,048 bytes
    for k in range(3):
        _entry(tmp_path, "nvrtc", f"{k:02d}bb", 400, 1000 + k)
    cachedir.maybe_prune()
    assert len(list((tmp_path / "nvrtc").rglob("*.json"))) == 1
    for k in range(3, 6):
        _entry(tmp_path, "nvrtc", f"{k:02d}bb", 400, 2000 + k)
    cachedir.maybe_prune()  # within the minute: the mark says it was just done
    assert len(list((tmp_path / "nvrtc").rglob("*.json"))) == 4
    os.utime(tmp_path / ".pruned", (0, 0))
    cachedir.maybe_prune()
    assert len(list((tmp_path / "nvrtc").rglob("*.json"))) == 1


def test_a_compile_keeps_the_cache_under_its_bound(tmp_path, monkeypatch):
    """A real NVRTC compile stores its entry and prunes the old ones past the bound."""
    from kltrans.gate.compile import compile_unit
    from kltrans.syntax import parse

    monkeypatch.setenv("KLTRANS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("KLTRANS_CACHE_MAX_MB", "0.01")  # 10 KiB
    for k in range(40):
        _entry(tmp_path, "nvrtc", f"{k:02d}cc", 1000, 1000 + k)
    compile_unit(parse(b"extern \"C\" __global__ void k(float* y) { y[0] = 1.0f; }\n", "k.cu"),
                 arch="sm_80")
    use = cachedir.usage(str(tmp_path))
    assert use["nvrtc"]["bytes"] <= 10 * 1024
    assert not (tmp_path / "nvrtc" / "00" / "00cc.json").exists()  # the oldest went first


def test_cache_info_and_clean_from_the_command_line(tmp_path):
    env = dict(os.environ, KLTRANS_CACHE_DIR=str(tmp_path))
    _entry(tmp_path, "nvrtc", "00dd", 300, 1000)
    _entry(tmp_path, "cpu/mod", "01dd", 200, 1000, exts=(".json", ".so"))
    _entry(tmp_path, "cpu/pch", "02dd", 100, 1000, exts=(".gch",))

    def kl(*argv):
        r = subprocess.run([sys.executable, "-m", "kltrans", "cache", *argv], env=env,
                           capture_output=True, text=True, timeout=60)
        assert "Traceback" not in r.stderr
        return r

    r = kl("info", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["root"] == str(tmp_path) and doc["bytes"] == 1100
    assert doc["areas"]["nvrtc"] == {"files": 2, "bytes": 600}
    assert doc["areas"]["cpu/mod"] == {"files": 2, "bytes": 400}
    assert "MiB" in kl("info").stdout
    r = kl("clean")
    assert r.returncode == 0 and "removed 4 file(s)" in r.stdout
    assert json.loads(kl("info", "--json").stdout)["bytes"] == 100  # the build stays
    r = kl("clean", "--all")
    assert r.returncode == 0 and json.loads(kl("info", "--json").stdout)["bytes"] == 0
    r = kl("purge")
    assert r.returncode == 2 and "invalid choice" in r.stderr
