#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for cubescale: system packages, Python packages, and
# cubescale itself (pip install .). Safe to run again. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential pkg-config cmake ninja-build
  libhwloc-dev hwloc libopen-trace-format2-dev otf2-tools
  libopenmpi-dev openmpi-bin zlib1g-dev libgtest-dev
  clang-14 libclang-rt-14-dev
  python3-dev python3-pip
  chromium
)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
PIP=("$PY" -m pip install -q)
# Debian's own Python marks itself externally managed (PEP 668); this script is the
# machine's setup, so it installs there on purpose. Other Pythons (pyenv, venv) need nothing.
if "$PY" -c 'import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
  PIP+=(--break-system-packages)
fi
# mpi4py is built against the system Open MPI (not a wheel with its own MPI).
if ! "$PY" -c "import mpi4py" 2>/dev/null; then
  echo "setup: building mpi4py against the system Open MPI" >&2
  "${PIP[@]}" --no-binary mpi4py "mpi4py>=3.1"
fi
echo "setup: pip install .[test]" >&2
# cubescale itself builds in this environment, not in an isolated one: a later build of the
# same checkout with the same tools (`pip wheel --no-build-isolation`,
# tests/test_wheel_fresh_venv.py) then finds the scikit-build directory up to date instead of
# configuring and compiling it all again (five minutes of CI on 2 cores). So its build
# requirements (pyproject.toml's [build-system]) and its dependencies with the test extra are
# installed first, the way pip installs any package (isolated builds where one is needed),
# then cubescale alone. Without tomllib (Python < 3.11) pip does it all in the usual way.
if REQUIRES=$("$PY" -c '
import tomllib
with open("pyproject.toml", "rb") as f:
    toml = tomllib.load(f)
project = toml["project"]
print("\n".join(toml["build-system"]["requires"] + project["dependencies"] + project["optional-dependencies"]["test"]))' 2>/dev/null); then
  mapfile -t requires <<<"$REQUIRES"
  "${PIP[@]}" "${requires[@]}"
  "${PIP[@]}" --no-build-isolation --no-deps .
else
  "${PIP[@]}" ".[test]"
fi
