#!/usr/bin/env bash
# Build DeepMind Lab (the `deepmind_lab` Python module) from source, offline, and install it
# into a virtualenv.
#
# Usage: scripts/install_dmlab.sh VENV_DIR
#
# DMLAB_SOURCE   where upstream's source comes from (google-deepmind/lab at $DMLAB_COMMIT):
#                  a git URL, optionally URL@COMMIT (default: upstream on GitHub at that commit),
#                  a .tar.xz / .tar.gz / .tar archive holding one folder of that tree, or
#                  a directory holding that tree.
# DMLAB_BUILD_DIR  where the source copy, Bazel's output, logs and the wheel go (build/dmlab).
# DMLAB_FORCE=1    build even when VENV_DIR already has this build.
# DMLAB_JOBS       Bazel's --jobs (default: the number of cores).
#
# Upstream's WORKSPACE downloads every dependency; third_party/dmlab/ replaces it with local
# repositories over Debian's packages (docs/dmlab.md, "The offline build"), and patches four
# upstream files. The source is checked against the hashes in third_party/dmlab/source.sha256
# (the files the overlay replaces or patches), so a tree of another commit is refused before
# anything is built.
#
# Idempotent: exits at once when VENV_DIR already has a deepmind_lab built by this overlay;
# reinstalls the cached wheel when only the venv is new. Each step's output goes to a log under
# $DMLAB_BUILD_DIR/logs; a failed step prints its name and that log's path.
set -euo pipefail

DMLAB_COMMIT=b1db91af5b4d2f3a24466f4632a3e5e1b0829cca
DMLAB_GIT_URL=https://github.com/google-deepmind/lab.git

die() { echo "error: $*" >&2; exit 1; }

if [ $# -ne 1 ]; then
  echo "usage: $0 VENV_DIR" >&2
  exit 2
fi
[ -x "$1/bin/python" ] || { echo "error: $1/bin/python not found; create the venv first" >&2; exit 2; }
VENV_DIR=$(cd "$1" && pwd)
PY="$VENV_DIR/bin/python"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OVERLAY="$ROOT/third_party/dmlab"
SOURCE=${DMLAB_SOURCE:-$DMLAB_GIT_URL@$DMLAB_COMMIT}
BUILD_DIR=${DMLAB_BUILD_DIR:-$ROOT/build/dmlab}
mkdir -p "$BUILD_DIR/logs"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
LOGS="$BUILD_DIR/logs"

# The build's identity: the overlay, this script and the Python it builds against. A change to
# any of them rebuilds; the same identity reuses the installed module or the cached wheel.
overlay_hash=$(cd "$ROOT" && { find third_party/dmlab -type f | LC_ALL=C sort | xargs sha256sum;
                                sha256sum scripts/install_dmlab.sh;
                                "$PY" -c 'import sys, numpy; print(sys.version, numpy.__version__)'; } |
               sha256sum | cut -c1-16)

installed_hash=$("$PY" - <<'EOF' 2>/dev/null || true
import json, os
import deepmind_lab
with open(os.path.join(os.path.dirname(deepmind_lab.__file__), "seed_build.json")) as f:
    print(json.load(f)["overlay_hash"])
EOF
)
if [ "${DMLAB_FORCE:-0}" != 1 ] && [ "$installed_hash" = "$overlay_hash" ]; then
  echo "deepmind_lab already built by this overlay in $VENV_DIR"
  exit 0
fi

step_no=0
# run_step NAME LOGFILE COMMAND...: runs COMMAND with its output in LOGS/LOGFILE; on failure, one
# line naming the step and the log, plus the log's first error line, not the whole log.
run_step() {
  local name=$1 log="$LOGS/$2"; shift 2
  step_no=$((step_no + 1))
  echo "[$step_no] $name (log: $log)"
  if ! "$@" >"$log" 2>&1; then
    local first
    first=$(grep -m1 -E '^(ERROR|E:|error|fatal)|: error:|[Ee]rror:' "$log" || tail -n 1 "$log")
    echo "error: step '$name' failed; see $log" >&2
    [ -n "$first" ] && echo "  $first" >&2
    exit 1
  fi
}

# --- 1. Debian packages: Bazel 4.2.3 and the libraries the overlay builds against -------------
APT_PACKAGES=(
  build-essential patch zip unzip
  bazel-bootstrap bazel-platforms bazel-rules-java
  libabsl-dev libeigen3-dev libglib2.0-dev libjpeg-dev libxml2-dev libpng-dev zlib1g-dev
  liblua5.1-0-dev libsdl2-dev libosmesa6-dev
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  install_apt() {
    $SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y \
      --no-install-recommends "${missing[@]}"
  }
  run_step "apt-get install ${missing[*]}" apt.log install_apt
fi

# --- 2. The source ------------------------------------------------------------------------------
SRC="$BUILD_DIR/src"
rm -rf "$SRC" "$BUILD_DIR/src.tmp"
mkdir -p "$BUILD_DIR/src.tmp"
case "$SOURCE" in
  *.tar.xz | *.tar.gz | *.tgz | *.tar)
    [ -f "$SOURCE" ] || die "DMLAB_SOURCE archive $SOURCE not found (expected google-deepmind/lab at $DMLAB_COMMIT)"
    source_desc="archive $SOURCE"
    tar -xf "$SOURCE" -C "$BUILD_DIR/src.tmp" 2>"$LOGS/source.log" ||
      die "DMLAB_SOURCE archive $SOURCE is corrupt or not a tar archive ($(tail -n 1 "$LOGS/source.log")); expected google-deepmind/lab at $DMLAB_COMMIT"
    tops=("$BUILD_DIR"/src.tmp/*)
    [ ${#tops[@]} -eq 1 ] && [ -d "${tops[0]}" ] ||
      die "DMLAB_SOURCE archive $SOURCE must hold one folder (google-deepmind/lab at $DMLAB_COMMIT); it holds ${#tops[@]} entries"
    mv "${tops[0]}" "$SRC"
    ;;
  *://* | git@*)
    url=$SOURCE commit=$DMLAB_COMMIT
    if [[ "$SOURCE" =~ ^(.+)@([0-9a-f]{7,40})$ ]]; then
      url=${BASH_REMATCH[1]} commit=${BASH_REMATCH[2]}
    fi
    source_desc="git $url at $commit"
    fetch_git() {
      git init -q "$SRC" && git -C "$SRC" fetch --depth 1 "$url" "$commit" &&
        git -C "$SRC" checkout -q FETCH_HEAD
    }
    if ! fetch_git >"$LOGS/source.log" 2>&1; then
      die "cannot fetch $url at $commit ($(tail -n 1 "$LOGS/source.log")); offline, set DMLAB_SOURCE to an archive or a directory of that commit"
    fi
    ;;
  *)
    [ -d "$SOURCE" ] || die "DMLAB_SOURCE $SOURCE is neither an archive, a directory nor a git URL (expected google-deepmind/lab at $DMLAB_COMMIT)"
    source_desc="directory $SOURCE"
    cp -a "$SOURCE/." "$SRC"
    ;;
esac
rm -rf "$BUILD_DIR/src.tmp"
if ! (cd "$SRC" && sha256sum --check --quiet "$OVERLAY/source.sha256") >"$LOGS/source-check.log" 2>&1; then
  differs=$(grep -m1 -oE '^[^:]+: FAILED' "$LOGS/source-check.log" | cut -d: -f1 || true)
  die "DMLAB_SOURCE ($source_desc) is not google-deepmind/lab at $DMLAB_COMMIT: ${differs:-its files} differ from that commit's (third_party/dmlab/source.sha256)"
fi

# What the source lacks. A partial copy lists its absent files in MISSING_FROM_THIS_COPY.txt;
# each listed file must really be absent, or the list is stale.
absent_list="$BUILD_DIR/absent.txt"
: >"$absent_list"
if [ -f "$SRC/MISSING_FROM_THIS_COPY.txt" ]; then
  grep -vE '^\s*(#|$)' "$SRC/MISSING_FROM_THIS_COPY.txt" | while read -r path; do
    [ -e "$SRC/$path" ] || echo "$path"
  done >"$absent_list"
fi
n_absent=$(wc -l <"$absent_list")
if [ "$n_absent" -gt 0 ]; then
  echo "DeepMind Lab source: $source_desc (google-deepmind/lab $DMLAB_COMMIT, partial: $n_absent files absent)"
else
  echo "DeepMind Lab source: $source_desc (google-deepmind/lab $DMLAB_COMMIT, complete)"
fi

# --- 3. The overlay: offline WORKSPACE, Debian-backed repositories, patches ---------------------
multiarch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH)
ov="$BUILD_DIR/overlay"
rm -rf "$ov"
cp -a "$OVERLAY" "$ov"
find "$ov" -type f \( -name '*.BUILD' -o -name WORKSPACE \) -exec \
  sed -i -e "s|@@MULTIARCH@@|$multiarch|g" -e "s|@@OVERLAY@@|$ov|g" {} +
cp "$ov/WORKSPACE" "$SRC/WORKSPACE"
apply_patches() {
  for p in "$OVERLAY"/patches/*.patch; do
    echo "== $p"
    patch -d "$SRC" -p1 --forward --no-backup-if-mismatch <"$p" || return 1
  done
}
run_step "apply third_party/dmlab/patches" patch.log apply_patches

# --- 4. Bazel -------------------------------------------------------------------------------
# The venv's python3 first on PATH: python_system.bzl builds against its headers and NumPy, and
# build_pip_package runs its setup.py (which needs setuptools and wheel).
export PATH="$VENV_DIR/bin:$PATH"
run_step "pip install setuptools wheel into $VENV_DIR" pip-build-deps.log \
  "$PY" -m pip install -q setuptools wheel
bazel_build() {
  cd "$SRC" && bazel --batch --output_user_root="$BUILD_DIR/bazel" build -c opt \
    --cxxopt=-std=c++17 --define graphics=osmesa_or_egl --jobs="${DMLAB_JOBS:-$(nproc)}" \
    --nostamp --show_progress_rate_limit=30 //python/pip_package:build_pip_package
}
run_step "bazel build //python/pip_package:build_pip_package" bazel-build.log bazel_build

dist="$BUILD_DIR/dist"
rm -rf "$dist"
build_wheel() { cd "$SRC" && ./bazel-bin/python/pip_package/build_pip_package "$dist"; }
run_step "build the deepmind_lab wheel" wheel.log build_wheel
wheel=$(ls "$dist"/deepmind_lab-*.whl)

# --- 5. Install, and record what was built ----------------------------------------------------
run_step "pip install $(basename "$wheel") into $VENV_DIR" pip-install.log \
  "$PY" -m pip install --no-deps --force-reinstall "$wheel"
"$PY" - "$overlay_hash" "$source_desc" "$DMLAB_COMMIT" "$absent_list" <<'EOF'
import json, os, sys
import deepmind_lab
overlay_hash, source, commit, absent_list = sys.argv[1:]
with open(absent_list) as f:
    absent = [line.strip() for line in f if line.strip()]
info = {"overlay_hash": overlay_hash, "source": source, "commit": commit,
        "complete": not absent, "absent": absent}
with open(os.path.join(os.path.dirname(deepmind_lab.__file__), "seed_build.json"), "w") as f:
    json.dump(info, f, indent=1)
EOF
"$PY" -m envs.dmlab --check
