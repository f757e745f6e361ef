#!/usr/bin/env bash
# Install Google Research Football (gfootball) into a virtualenv.
#
# Usage: scripts/install_football.sh VENV_DIR
#
# Idempotent: exits 0 at once when gfootball is already importable in VENV_DIR.
# Otherwise installs the Debian build dependencies that are missing (needs
# root, as on CI), then builds gfootball's C++ engine from the PyPI sdist into
# the venv. pip's wheel cache is reused, so a second build on the same machine
# is a fast wheel install.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 VENV_DIR" >&2
  exit 2
fi
if [ ! -d "$1" ]; then
  echo "error: $1 is not a directory; create the venv first (python3 -m venv $1)" >&2
  exit 2
fi
VENV_DIR=$(cd "$1" && pwd)
PY="$VENV_DIR/bin/python"
if [ ! -x "$PY" ]; then
  echo "error: $PY not found; create the venv first" >&2
  exit 2
fi

GFOOTBALL_VERSION=2.10.2
# gfootball uses the pre-0.26 Gym API (reset returns obs only); 0.26 breaks it.
GYM_VERSION=0.25.2

if "$PY" -c "import gfootball.env" >/dev/null 2>&1; then
  echo "gfootball already importable in $VENV_DIR"
  exit 0
fi

APT_PACKAGES=(
  build-essential cmake pkg-config libgl1-mesa-dev
  libsdl2-dev libsdl2-image-dev libsdl2-ttf-dev libsdl2-gfx-dev
  libboost-python-dev libboost-thread-dev libboost-system-dev
  libboost-filesystem-dev
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing apt packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The engine's build script runs a bare `python3` that imports psutil, so the
# venv's interpreter must come first on PATH and the build must not be isolated.
export PATH="$VENV_DIR/bin:$PATH"
"$PY" -m pip install psutil setuptools wheel six "gym==$GYM_VERSION"
"$PY" -m pip install --no-build-isolation "gfootball==$GFOOTBALL_VERSION"

"$PY" -c "import gfootball.env; print('gfootball', '$GFOOTBALL_VERSION', 'installed in $VENV_DIR')"
