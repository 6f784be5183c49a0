# Sourced by scripts/dev, scripts/test and scripts/api-conformance: installs what the build
# and the embedded PostgreSQL need when it is missing (non-interactive, so CI can run it),
# and makes it findable. Linux: the Debian packages. macOS: Homebrew's postgresql@16, which
# is keg-only (not on PATH, libpq.pc not where pkg-config looks), so its folders are
# exported here.
# The test path's tools (NEEDS_TEST_TOOLS=1; scripts/dev needs none): Python's venv for the
# PyPI tools (scripts/python-tools.sh), curl for scripts/api-conformance (and the storage
# tests' signed requests) and openssl for the mail tests' certificates; macOS has all three.
# NEEDS_FAULT_TOOLS=1 (scripts/faults): wrk, slowhttptest, curl, psql and python3.
# NEEDS_COMPOSE=1 (scripts/check-compose): Debian's docker-compose, to validate the file.
if [ "$(uname -s)" = Darwin ]; then
    command -v brew >/dev/null 2>&1 || {
        echo "need Homebrew (https://brew.sh) to install postgresql@16 and pkg-config" >&2
        exit 1
    }
    postgres_prefix="$(brew --prefix postgresql@16)"
    if [ ! -x "$postgres_prefix/bin/initdb" ]; then
        echo "installing postgresql@16 with Homebrew" >&2
        brew install postgresql@16
    fi
    command -v pkg-config >/dev/null 2>&1 || brew install pkgconf
    pkg-config --exists vips 2>/dev/null || brew install vips
    if [ -n "${NEEDS_TEST_TOOLS:-}" ]; then
        command -v exiftool >/dev/null 2>&1 || brew install exiftool
        command -v pgbouncer >/dev/null 2>&1 || brew install pgbouncer
    fi
    # macOS ships libcurl (with its .pc in the SDK); Homebrew's curl only if pkg-config misses it.
    pkg-config --exists libcurl 2>/dev/null || brew install curl
    if [ -f "$(brew --prefix curl)/lib/pkgconfig/libcurl.pc" ]; then
        export PKG_CONFIG_PATH="$(brew --prefix curl)/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    fi
    for folder in "$postgres_prefix/lib/pkgconfig" "$postgres_prefix/lib/postgresql/pkgconfig"; do
        if [ -f "$folder/libpq.pc" ]; then
            export PKG_CONFIG_PATH="$folder${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
        fi
    done
    # initdb and pg_ctl for the local cluster (LocalCluster looks here too, for `swift run`).
    export PATH="$postgres_prefix/bin:$PATH"
    pkg-config --exists libpq || {
        echo "pkg-config cannot find libpq under $postgres_prefix; try: brew reinstall postgresql@16" >&2
        exit 1
    }
else
    missing=()
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    pkg-config --exists libpq 2>/dev/null || missing+=(libpq-dev)
    # The mailer's SMTP client (the CLibCurl target).
    pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
    # gzip of JSON answers (the CZlib target).
    pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
    # The image pipeline (the CLibVips and CVips targets; libwebp's mux comes with it).
    pkg-config --exists vips 2>/dev/null || missing+=(libvips-dev)
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
    if [ -n "${NEEDS_TEST_TOOLS:-}" ]; then
        /usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
        command -v curl >/dev/null 2>&1 || missing+=(curl)
        # The mail tests make the STARTTLS relay's certificate with it.
        command -v openssl >/dev/null 2>&1 || missing+=(openssl)
        # The image tests read what metadata a stored image still carries with it.
        command -v exiftool >/dev/null 2>&1 || missing+=(libimage-exiftool-perl)
        # The console's browser tests: headless Chromium and its WebDriver, and psql (they
        # read a sign-in code from the outbox).
        command -v chromium >/dev/null 2>&1 || missing+=(chromium)
        command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
        command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
        # The end-to-end suites' pass through a transaction-mode pooler (scripts/test).
        [ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || missing+=(pgbouncer)
    fi
    if [ -n "${NEEDS_FAULT_TOOLS:-}" ]; then
        command -v wrk >/dev/null 2>&1 || missing+=(wrk)
        command -v slowhttptest >/dev/null 2>&1 || missing+=(slowhttptest)
        command -v curl >/dev/null 2>&1 || missing+=(curl)
        command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
        command -v python3 >/dev/null 2>&1 || missing+=(python3)
    fi
    if [ -n "${NEEDS_COMPOSE:-}" ]; then
        command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
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
fi
