#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for cubescale: system packages, Python packages, and
# cubescale itself (pip install .). Safe to run again. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential pkg-config cmake ninja-build
  libhwloc-dev hwloc libopen-trace-format2-dev
  libopenmpi-dev openmpi-bin zlib1g-dev libgtest-dev
  clang-14 libclang-rt-14-dev
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
# mpi4py is built against the system Open MPI (not a wheel with its own MPI).
if ! "$PY" -c "import mpi4py" 2>/dev/null; then
  echo "setup: building mpi4py against the system Open MPI" >&2
  "$PY" -m pip install -q --no-binary mpi4py "mpi4py>=3.1"
fi
echo "setup: pip install .[test]" >&2
"$PY" -m pip install -q ".[test]"
