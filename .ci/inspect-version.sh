# The inspect_ai release the tests check against (sourced by .ci/background.d/45-inspect-venv.sh; read by
# tests/interop/conftest.py). pyproject.toml's `inspect` extra pins the same release for users.
INSPECT_VERSION="0.3.285"
