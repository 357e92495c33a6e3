#!/usr/bin/env bash
# The GPU recipe (the device machine has no network).
#
#   here:   bash tools/gpu-run.sh fetch     # download the wheels the GPU box lacks into .whl/
#   there:  bash tools/gpu-run.sh setup     # install them into /tmp/site (first thing in a run)
#   here:   bash tools/gpu-run.sh size [CARRY...]  # the call's upload against the 64 MiB limit
#   here:   bash tools/gpu-run.sh lean      # leave the Dask wheels out of the upload (unlean: back)
#
# A device run then looks like (carry: [".whl"]):
#   bash tools/gpu-run.sh setup && export PYTHONPATH=/tmp/site:$PWD && python3 bench/gate_gpu.py --out $OUT
#
# The GPU image has python3 3.12 with cuda-bindings, cuda-core, nvidia-cuda-nvrtc, numpy,
# pyyaml, jinja2, rich and pytest; kltrans adds tree-sitter, tree-sitter-cuda, libcst,
# greenlet (the kernel model's block machine), pyseccomp (the CPU backend's sandbox), jsonschema and dask/distributed (setup installs
# them without touching what is there).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  fetch)
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
    mkdir -p .whl
    for spec in tree-sitter==0.26.1 tree-sitter-cuda==0.21.2 libcst==1.9.0 pyseccomp==0.1.2 greenlet==3.5.6; do
      python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$spec"
    done
    # jsonschema (skill cards) and dask/distributed (the executor) with their dependencies
    python3 -m pip download -q --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
      'jsonschema>=4.18,<5' 'distributed>=2024.8' 'dask>=2024.8'
    # what the GPU image already has stays its own (no shadowing from /tmp/site)
    rm -f .whl/jinja2-* .whl/markupsafe-* .whl/pyyaml-* .whl/packaging-* \
      .whl/typing_extensions-* .whl/importlib_metadata-* .whl/zipp-*
    ls -la .whl ;;
  setup)
    # once per machine: several scripts of one call may each ask for it
    if [ -f /tmp/site/.kltrans-setup ]; then echo "already installed in /tmp/site"; exit 0; fi
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl
    touch /tmp/site/.kltrans-setup
    echo "installed into /tmp/site: $(ls /tmp/site | tr '\n' ' ')" ;;
  size)
    # what a device call uploads: tracked files, untracked ones git does not ignore, and the
    # carried paths (here: .whl and any paths given); the device refuses more than 64 MiB
    shift
    total=$( { git ls-files -z --cached --others --exclude-standard; \
               find .whl "$@" -type f -print0 2>/dev/null; } | xargs -0 du -cb 2>/dev/null \
             | awk '$2 == "total" {s += $1} END {print s + 0}')
    echo "upload: $(( total / 1048576 )) MiB of 64 MiB (tree and .whl${*:+ and $*})"
    [ "$total" -le $(( 64 * 1048576 )) ] ;;
  lean)
    # the repository's results have grown near the upload limit: move the Dask wheels (only
    # `--cluster` runs need them) out of .whl into .whl-dask (ignored, not uploaded);
    # `tools/gpu-run.sh unlean` puts them back
    grep -qx '/.whl-dask/' .git/info/exclude 2>/dev/null || echo '/.whl-dask/' >> .git/info/exclude
    mkdir -p .whl-dask
    for w in dask distributed click cloudpickle fsspec locket msgpack partd psutil \
             sortedcontainers tblib toolz tornado zict; do
      mv .whl/"$w"-*.whl .whl-dask/ 2>/dev/null || true
    done
    ls .whl ;;
  unlean)
    mv .whl-dask/*.whl .whl/ 2>/dev/null || true; ls .whl ;;
  *)
    echo "usage: tools/gpu-run.sh fetch|setup|size [CARRY...]|lean|unlean" >&2; exit 2 ;;
esac
