#!/usr/bin/env bash
# Idempotent setup for a fresh Debian machine of this project's kind (run as
# root or with sudo): system packages, npm dependencies from the lockfile,
# the Python environment for models/, and the builds. Each step is skipped
# when its inputs have not changed, so a second run takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
stamps="$root/.stamps"
mkdir -p "$stamps"
log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# Digest of files: a step reruns when this changes.
digest() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }
fresh() { [ -f "$stamps/$1" ] && [ "$(cat "$stamps/$1")" = "$2" ]; }

# 1. System packages (Debian): Emscripten and the acorn its optimizer needs,
#    Chromium for browser tests, clang-format for the C++ lint; Thunderbird
#    (its omni.ja holds the API schemas the unit tests check the add-on
#    against, and the real-client tests run it), Firefox ESR, Xvfb, xauth and
#    ImageMagick for real-client tests and screenshots, Dovecot as their IMAP server;
#    PostgreSQL and HAProxy for the provider's shared-store and scale-out tests;
#    libsodium's headers and Rust for the provider's native binding;
#    Roundcube (PHP) as the real webmail of the end-to-end suite.
pkgs=()
command -v emcc >/dev/null || pkgs+=(emscripten)
[ -d /usr/share/nodejs/acorn ] || pkgs+=(node-acorn)
command -v chromium >/dev/null || pkgs+=(chromium)
command -v clang-format >/dev/null || pkgs+=(clang-format)
command -v g++ >/dev/null || pkgs+=(g++)
# Valgrind's memcheck checks the lattice code's constant-time discipline (wasm/test/he-ct.test.ts).
command -v valgrind >/dev/null || pkgs+=(valgrind)
# libsodium's headers for the provider's native ristretto255 (provider-server/native/),
# and Rust for its base OTs' group arithmetic (rustup's toolchain when there is one).
[ -f /usr/include/sodium.h ] || pkgs+=(libsodium-dev)
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo >/dev/null || pkgs+=(cargo)
command -v thunderbird >/dev/null || pkgs+=(thunderbird)
command -v firefox-esr >/dev/null || pkgs+=(firefox-esr)
command -v Xvfb >/dev/null || pkgs+=(xvfb xauth)
command -v import >/dev/null || pkgs+=(imagemagick)
# Info-ZIP's unzip and zipinfo read the release archives back in the tests.
command -v zipinfo >/dev/null || pkgs+=(unzip)
command -v dovecot >/dev/null || pkgs+=(dovecot-core dovecot-imapd dovecot-lmtpd)
[ -x /usr/lib/postgresql/15/bin/postgres ] || pkgs+=(postgresql)
command -v haproxy >/dev/null || pkgs+=(haproxy)
# ssh-agent holds the test witnesses' keys (litewitness signs through it).
command -v ssh-agent >/dev/null || pkgs+=(openssh-client)
# Roundcube under php -S (php8.2-cgi keeps php from pulling in Apache).
[ -d /usr/share/roundcube ] || pkgs+=(php-cli php8.2-cgi php-sqlite3 roundcube roundcube-core roundcube-sqlite3 roundcube-plugins)
if [ ${#pkgs[@]} -gt 0 ]; then
  log "installing Debian packages: ${pkgs[*]}"
  as_root apt-get update -qq
  echo "roundcube-core roundcube/dbconfig-install boolean false" | as_root debconf-set-selections
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi

# 2. npm dependencies, exactly as locked (better-sqlite3 compiles here).
npm_key=$(digest package-lock.json)
if ! fresh npm "$npm_key" || [ ! -d node_modules ]; then
  log "installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$npm_key" >"$stamps/npm"
fi

# 3. Python environment for models/ (training, evaluation, lint).
if [ -f models/requirements.txt ]; then
  py_key=$(digest models/requirements.txt)
  if ! fresh python "$py_key" || [ ! -x models/.venv/bin/python ]; then
    log "creating models/.venv from models/requirements.txt"
    python3 -m venv models/.venv
    models/.venv/bin/pip install -q --disable-pip-version-check -r models/requirements.txt
    echo "$py_key" >"$stamps/python"
  fi
fi

# 4. The package log's witness for the tests: litewitness (filippo.io/torchwood)
#    into the git-ignored .tools/bin, and the modules of the Go program that
#    computes the log's test vectors (protocol/test/tlog-vectors). torchwood
#    needs Go >= 1.24, newer than Debian 12's golang-go. (Its witnessctl needs
#    sigsum.org/sigsum-go, which the module proxy here refuses; the tests add
#    logs to a witness with witnessctl's two SQL rows, scripts/test/witnesses.ts.)
if ! command -v go >/dev/null; then
  echo "[setup] Go >= 1.24 is needed (https://go.dev/dl/): the package-log tests run litewitness" >&2
  exit 1
fi
if [ ! -x .tools/bin/litewitness ]; then
  log "installing litewitness (filippo.io/torchwood v0.6.1) into .tools/bin"
  GOBIN="$root/.tools/bin" GOFLAGS=-buildvcs=false go install filippo.io/torchwood/cmd/litewitness@v0.6.1
fi
(cd protocol/test/tlog-vectors && go mod download)

# 5. Builds (each is incremental on its own).
export NODE_PATH=/usr/share/nodejs
node scripts/build-wasm.mjs
node scripts/build-native.mjs
if [ -f webpack.config.js ]; then
  ext_key=$( (grep -v '^#' scripts/extension-inputs.txt | xargs -I{} find {} -type f -not -name '*.test.ts' 2>/dev/null | sort | xargs cat) | sha256sum | cut -c1-16)
  if ! fresh extension "$ext_key" || [ ! -d dist ]; then
    log "building the extension (webpack)"
    npx webpack --mode production >/dev/null
    echo "$ext_key" >"$stamps/extension"
  fi
fi
log "ready"
