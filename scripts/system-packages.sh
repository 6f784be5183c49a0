# Sourced by scripts/dev, scripts/test and scripts/api-conformance: installs the Debian
# packages the build and the embedded PostgreSQL need, when they are missing.
# Non-interactive, so CI can run it.
missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
pkg-config --exists libpq 2>/dev/null || missing+=(libpq-dev)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
# The test path's tools (NEEDS_TEST_TOOLS=1; scripts/dev needs none): Python's venv for the
# PyPI tools (scripts/python-tools.sh) and curl for scripts/api-conformance.
if [ -n "${NEEDS_TEST_TOOLS:-}" ]; then
    /usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing missing system packages: ${missing[*]}" >&2
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
