#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine (npm packages; Chromium for the browser tests; Redis for
# the render-farm tests; PostgreSQL for the state-store tests; HAProxy for the load-balancer tests; the patched x264 for
# the band-splice gate), runs the whole suite, prints where its time went (each project's wall time, the ten slowest
# files), and ends with one plain "N passed, N failed" line from the runner's own counts.
set -uo pipefail
cd "$(dirname "$0")/.."

# Decide first, then say everything that will be installed and why, and only then install it.
need_npm=0
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then need_npm=1; fi
need_chromium=0
if [ -d test/browser ] && ls test/browser/*.test.ts >/dev/null 2>&1 && [ -z "${WMARK_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  need_chromium=1
fi
# The render-farm tests start their own redis-server (harness/redis.ts): Debian's package, the one README.md's
# render-farm setup installs.
need_redis=0
if [ -z "${WMARK_REDIS_SERVER:-}" ] && ! command -v redis-server >/dev/null 2>&1; then need_redis=1; fi
# The PostgreSQL state-store tests start their own cluster (harness/postgres.ts): Debian's postgresql package, whose
# initdb lives in /usr/lib/postgresql/15/bin (or WMARK_PG_BIN).
need_postgres=0
if [ ! -x "${WMARK_PG_BIN:-/usr/lib/postgresql/15/bin}/initdb" ] && ! command -v initdb >/dev/null 2>&1; then need_postgres=1; fi
# The load-balancer tests put `wmark serve` instances behind their own HAProxy (harness/haproxy.ts): Debian's
# haproxy package, whose binary is /usr/sbin/haproxy (or WMARK_HAPROXY).
need_haproxy=0
if [ ! -x "${WMARK_HAPROXY:-/usr/sbin/haproxy}" ] && ! command -v haproxy >/dev/null 2>&1; then need_haproxy=1; fi
can_apt=0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then can_apt=1; fi
# The band-splice gate test (test/integration/band-gate.test.ts) needs x264 with native/x264/band-splice.patch, which
# scripts/build-x264.sh builds from Debian's source package with gcc, make, nasm and dpkg-dev (installed here when
# missing, as root); without it that test is skipped and says why.
need_x264=0
x264_packages=()
x264_cache="${WMARK_X264_CACHE:-${HOME:-/root}/.cache/wmark/x264}"
if [ -z "${WMARK_X264:-}" ] && [ "$(cat "$x264_cache/bin/x264.patch-sha256" 2>/dev/null)" != "$(sha256sum native/x264/band-splice.patch | cut -d' ' -f1)" ]; then
  for tool in gcc:gcc make:make nasm:nasm dpkg-source:dpkg-dev; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || x264_packages+=("${tool#*:}")
  done
  if [ $can_apt = 1 ] || { [ ${#x264_packages[@]} = 0 ] && ls -d "$x264_cache"/src/x264-*/ >/dev/null 2>&1; }; then need_x264=1; fi
fi

if [ $need_npm = 1 ] || [ $need_x264 = 1 ] || { [ $can_apt = 1 ] && { [ $need_chromium = 1 ] || [ $need_redis = 1 ] || [ $need_postgres = 1 ] || [ $need_haproxy = 1 ]; }; }; then
  echo "scripts/test.sh will install what the test suite needs:"
  [ $need_npm = 1 ] && echo "  - npm packages (npm ci, from package-lock.json into ./node_modules): wmark's dependencies and the test tools; better-sqlite3 may build from source (about 1.5 min)"
  [ $need_chromium = 1 ] && [ $can_apt = 1 ] && echo "  - the system package chromium (apt-get install chromium): a real browser for the player tests in test/browser"
  [ $need_redis = 1 ] && [ $can_apt = 1 ] && echo "  - the system package redis-server (apt-get install redis-server): a real Redis for the render-farm queue tests (each test starts its own on a loopback port)"
  [ $need_postgres = 1 ] && [ $can_apt = 1 ] && echo "  - the system package postgresql (apt-get install postgresql): a real PostgreSQL 15 for the state-store tests (each test file starts its own cluster in a temp folder)"
  [ $need_x264 = 1 ] && [ ${#x264_packages[@]} -gt 0 ] && echo "  - the system packages ${x264_packages[*]} (apt-get install ${x264_packages[*]}): the tools that build the patched x264"
  [ $need_x264 = 1 ] && echo "  - the patched x264 CLI (scripts/build-x264.sh: Debian's x264 source package with native/x264/band-splice.patch, built into $x264_cache, about 1-4 min): the encoder of the band-splice gate test"
  [ $need_haproxy = 1 ] && [ $can_apt = 1 ] && echo "  - the system package haproxy (apt-get install haproxy): a real HAProxy in front of several wmark serve instances for the load-balancer tests (each test file starts its own on a loopback port)"
fi

if [ $need_npm = 1 ]; then
  echo "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund || exit 1
fi

if [ $need_chromium = 1 ]; then
  if [ $can_apt = 1 ]; then
    echo "installing Chromium for the browser tests (apt-get update; apt-get install -y chromium)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || { echo "could not install chromium"; exit 1; }
    apt_updated=1
  else
    echo "the browser tests need Chromium: install it (e.g. 'sudo apt-get install -y chromium') or set WMARK_CHROMIUM" >&2
  fi
fi

if [ $need_redis = 1 ]; then
  if [ $can_apt = 1 ]; then
    echo "installing redis-server for the render-farm tests (apt-get install -y redis-server)"
    { [ "${apt_updated:-0}" = 1 ] || apt-get update -qq; } && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null || { echo "could not install redis-server"; exit 1; }
    apt_updated=1
  else
    echo "the render-farm tests need Redis: install it (e.g. 'sudo apt-get install -y redis-server') or set WMARK_REDIS_SERVER" >&2
  fi
fi

if [ $need_postgres = 1 ]; then
  if [ $can_apt = 1 ]; then
    echo "installing postgresql for the state-store tests (apt-get install -y postgresql)"
    { [ "${apt_updated:-0}" = 1 ] || apt-get update -qq; } && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || { echo "could not install postgresql"; exit 1; }
    apt_updated=1
  else
    echo "the PostgreSQL state-store tests need PostgreSQL 15: install it (e.g. 'sudo apt-get install -y postgresql') or set WMARK_PG_BIN; they are skipped without it" >&2
  fi
fi

if [ $need_haproxy = 1 ]; then
  if [ $can_apt = 1 ]; then
    echo "installing haproxy for the load-balancer tests (apt-get install -y haproxy)"
    { [ "${apt_updated:-0}" = 1 ] || apt-get update -qq; } && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null || { echo "could not install haproxy"; exit 1; }
    apt_updated=1
  else
    echo "the load-balancer tests need HAProxy: install it (e.g. 'sudo apt-get install -y haproxy') or set WMARK_HAPROXY" >&2
  fi
fi

if [ $need_x264 = 1 ]; then
  if [ ${#x264_packages[@]} -gt 0 ]; then
    echo "installing ${x264_packages[*]} to build the patched x264 (apt-get install -y ${x264_packages[*]})"
    { [ "${apt_updated:-0}" = 1 ] || apt-get update -qq; } && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${x264_packages[@]}" >/dev/null ||
      echo "could not install ${x264_packages[*]}: the band-splice gate test is skipped" >&2
  fi
  echo "building the patched x264 for the band-splice gate test (scripts/build-x264.sh)"
  bash scripts/build-x264.sh || echo "could not build the patched x264: the band-splice gate test is skipped" >&2
fi

mkdir -p test-artifacts
report=test-artifacts/vitest-report.json
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
status=$?

if [ -f "$report" ]; then
  node scripts/test-times.mjs "$report" .
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = (r.numPendingTests || 0) + (r.numTodoTests || 0);
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
  ' "$report"
else
  echo "0 passed, 1 failed"
  [ $status -eq 0 ] && status=1
fi
exit $status
