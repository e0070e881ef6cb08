# The bfcl-eval release the tests check against (sourced by the BFCL set-up steps).
BFCL_VERSION="2026.3.23"
