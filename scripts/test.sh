#!/usr/bin/env bash
# The README's test command: every set-up the tests need, then the build and the tests.
#
#   ./scripts/test.sh            set up (Debian packages, npm ci), build, type-check, run every test
#   ./scripts/test.sh --check    set up nothing and run nothing: print each step and whether it can
#                                run here (npm ci as a dry run against the lock file; the fresh-clone
#                                test uses it); exit 1 if one cannot
#   ./scripts/test.sh -- ARGS    pass ARGS to jest (a test file, -t NAME)
#
# Debian packages come from scripts/test-debian-packages.txt (one name a line; # comments): etcd-server
# and tmux for the tests, build-essential and python3 for npm ci (node-gyp builds better-sqlite3). Missing
# ones are installed with apt-get as root, or through sudo when that is there. When they cannot be,
# this goes on and the tests that need them fail with a message naming the package to install.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
jest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) mode=check ;;
    --) shift; jest_args=("$@"); break ;;
    *) echo "test.sh: unknown argument $1 (accepted: --check, -- JEST_ARGS)" >&2; exit 2 ;;
  esac
  shift
done

# node-gyp builds better-sqlite3 against the system's Node headers (it cannot download them here).
export npm_config_nodedir=/usr

step() { printf '==> %s\n' "$*"; }
problems=0
problem() { printf 'test.sh: %s\n' "$*" >&2; problems=$((problems + 1)); }

step "tools: node $(node --version 2>/dev/null || echo missing), npm $(npm --version 2>/dev/null || echo missing)"
command -v node >/dev/null || problem "node is missing: install Node.js 20 (apt-get install nodejs)"
command -v npm >/dev/null || problem "npm is missing: install npm (apt-get install npm)"
if command -v kubectl >/dev/null; then kubectl version --client 2>/dev/null | sed -n 1p; else echo 'kubectl: not found (the kubectl tests will fail)'; fi

# --- Debian packages -------------------------------------------------------------------------
packages=()
while IFS= read -r line || [ -n "$line" ]; do
  line="${line%%#*}"; line="${line//[[:space:]]/}"
  [ -n "$line" ] && packages+=("$line")
done < scripts/test-debian-packages.txt

installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = 'install ok installed' ]; }
missing=()
if command -v dpkg-query >/dev/null; then
  for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
else
  missing=("${packages[@]}")
fi

SUDO=()
can_install=yes
if ! command -v apt-get >/dev/null; then
  can_install="no: apt-get is not available"
elif [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else can_install="no: not root and no password-less sudo"; fi
fi

step "Debian packages (scripts/test-debian-packages.txt): ${packages[*]}; missing: ${missing[*]:-none}"
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$can_install" = yes ]; then
    step "install: ${SUDO[*]} apt-get update && apt-get install -y ${missing[*]}"
    if [ "$mode" = run ]; then
      "${SUDO[@]}" apt-get update -qq
      DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
  else
    # Go on: the tests that need these fail and say what to install.
    echo "test.sh: cannot install ${missing[*]} ($can_install); the tests that need them will fail. Install them with: apt-get install ${missing[*]}" >&2
  fi
fi

# --- npm, build, tests -------------------------------------------------------------------------
[ -f package-lock.json ] || problem "package-lock.json is missing: npm ci needs it"
step "npm ci"
if [ "$mode" = run ]; then
  npm ci --no-audit --no-fund
elif ! npm ci --dry-run --ignore-scripts --no-audit --no-fund >/dev/null 2>&1; then
  # The dry run reads package.json against the lock file: out of sync, npm ci would refuse.
  problem "npm ci would fail: package.json and package-lock.json are not in sync (run npm install and commit both)"
fi
step "build: npm run build"
node -e 'const s=require("./package.json").scripts; process.exit(s.build && s.typecheck ? 0 : 1)' || problem "package.json lacks the build or typecheck script"
[ "$mode" = run ] && npm run build
step "type-check: npm run typecheck"
[ "$mode" = run ] && npm run typecheck
step "tests: jest ${jest_args[*]:-(all)}"
[ -x node_modules/.bin/jest ] || [ "$mode" = check ] || problem "jest is not installed (npm ci failed?)"
if [ "$mode" = run ]; then
  NODE_OPTIONS=--experimental-vm-modules node_modules/.bin/jest "${jest_args[@]}"
  exit $?
fi

[ "$problems" -eq 0 ] || { echo "test.sh --check: $problems step(s) cannot run here" >&2; exit 1; }
echo "test.sh --check: every step can run"
