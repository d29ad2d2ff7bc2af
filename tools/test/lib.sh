# The shell library of the scripts in tools/test/: what every one of them used to write again
# (a temporary folder removed at exit, the count of checks and failures, a FAIL line naming the
# script, running retrysim and checking its exit status, looking into files and JSON). POSIX sh;
# a script sources it first:   . "$(dirname "$0")/lib.sh"
# It defines t_name (the script's name, the prefix of every line it prints), ops (the folder
# tools/ops/), bin (the retrysim of $BUILD), fails and checks (0), test_name (empty; a script that sets it gets it in each FAIL
# line), and the functions below. It runs nothing and leaves `set` options to the script.

t_name=$(basename "$0" .sh)
# The operations beside the tests (tools/ops/: deps.sh, the Slurm cluster).
ops=$(cd "$(dirname "$0")/../ops" && pwd)
bin="${BUILD:-build}/retrysim"
fails=0
checks=0
test_name=""

# ---------------------------------------------------------------- set-up
# t_tmp [TEMPLATE]: makes the temporary folder $tmp (mktemp -d TEMPLATE) and removes it at exit.
# A script with more to clean up sets its own EXIT trap after this, removing $tmp itself.
t_tmp() {
  tmp=$(mktemp -d ${1:+"$1"}) || { echo "$t_name: mktemp failed"; exit 1; }
  trap 'rm -rf "$tmp"' EXIT
}
# need_bin: stops the script (status 1) when retrysim is not built.
need_bin() {
  [ -x "$bin" ] || { echo "$t_name: $bin not built"; exit 1; }
}
# need_root WHAT: skips the script (status 77, which make reads as "skipped") when not root.
need_root() {
  [ "$(id -u)" = 0 ] || { echo "$t_name: skipped: not root ($1)"; exit 77; }
}
# t_bindir: bindir is the absolute folder of $bin (for PATH, where a recipe names `retrysim`).
t_bindir() {
  bindir=$(cd "$(dirname "$bin")" && pwd)
}
# need_cmd COMMAND WHY: stops the script (status 1), saying WHY, when COMMAND is not installed.
need_cmd() {
  command -v "$1" >/dev/null 2>&1 || { echo "$t_name: $2"; exit 1; }
}

# ---------------------------------------------------------------- counting
# ok: one more check made. fail TEXT: one more failure, said on one line.
ok() { checks=$((checks + 1)); }
fail() {
  fails=$((fails + 1))
  echo "$t_name: FAIL: ${test_name:+$test_name: }$*"
}
# t_done: the closing line; the script's exit status is 1 when a check failed.
t_done() {
  if [ "$fails" -ne 0 ]; then
    echo "$t_name: $fails of $checks checks failed"
    exit 1
  fi
  echo "$t_name: all $checks checks passed"
}

# ---------------------------------------------------------------- running retrysim
# run_rc WANT ARGS...: runs retrysim ARGS (at most $T_TIMEOUT seconds when that is set), keeps
# stdout and stderr in $tmp/out and $tmp/err, and checks that it exits with status WANT.
run_rc() {
  want=$1; shift
  ok
  if [ -n "${T_TIMEOUT:-}" ]; then
    timeout "$T_TIMEOUT" "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  else
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  fi
  got=$?
  if [ "$got" -ne "$want" ]; then
    fail "retrysim $* -> exit $got, want $want"
    sed 's/^/    stderr: /' "$tmp/err" | head -n 5
  fi
}
# run ARGS...: runs retrysim ARGS, as run_rc 0 does, saying "failed" when it does not exit 0.
run() {
  ok
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err" || { fail "retrysim $* failed"; sed 's/^/    /' "$tmp/err" | head -n 5; }
}

# ---------------------------------------------------------------- files
# show FILE: its first lines, indented, below a FAIL line.
show() { sed 's/^/    /' "$1" | head -n 12; }
# has FILE TEXT [RULE] / lacks FILE TEXT [RULE]: FILE contains (does not contain) the fixed
# string TEXT. RULE, when given, starts the FAIL line.
has() {
  ok
  grep -qF -- "$2" "$1" || { fail "${3:+$3: }$(basename "$1") lacks: $2"; show "$1"; }
}
lacks() {
  ok
  if grep -qF -- "$2" "$1"; then fail "${3:+$3: }$(basename "$1") should not hold: $2"; fi
}
# has_re FILE ERE [RULE]: a line of FILE matches the extended regular expression ERE.
has_re() {
  ok
  grep -qE -- "$2" "$1" || { fail "${3:+$3: }$(basename "$1") has no line matching: $2"; show "$1"; }
}
# line FILE TEXT: FILE has a line that is exactly TEXT.
line() {
  ok
  grep -qxF -- "$2" "$1" || { fail "$(basename "$1") lacks the line: $2"; show "$1"; }
}
# lines FILE N: FILE has N lines.
lines() {
  ok
  n=$(wc -l <"$1" | tr -d ' ')
  [ "$n" -eq "$2" ] || { fail "$(basename "$1") has $n lines, want $2"; show "$1"; }
}
# empty FILE: FILE is empty. exists FILE: FILE is there and not empty.
empty() {
  ok
  [ ! -s "$1" ] || { fail "$(basename "$1") should be empty"; show "$1"; }
}
exists() {
  ok
  [ -s "$1" ] || fail "$1 missing or empty"
}
# no_temp_files DIR [WHAT]: nothing under DIR is a NAME.tmp.PID file (what a write that did not
# finish leaves).
no_temp_files() {
  ok
  left=$(find "$1" -name '*.tmp.*' 2>/dev/null)
  [ -z "$left" ] || fail "${2:+$2: }temporary files left in $1: $left"
}

# ---------------------------------------------------------------- JSON (python3, no jq)
# jget FILE EXPR: prints the Python expression EXPR over the JSON document d of FILE (strings
# as they are, everything else as JSON: 15, null, true). $JGET_DEFS, when set, is Python run
# first, for helper functions EXPR may call.
jget() {
  python3 -c 'import json, os, sys
env = {}
exec(os.environ.get("JGET_DEFS", ""), env)
env["d"] = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], env)
print(v if isinstance(v, str) else json.dumps(v))' "$1" "$2" 2>&1
}
# jv FILE EXPR WANT RULE: EXPR's value on FILE is WANT.
jv() {
  ok
  got=$(jget "$1" "$2")
  [ "$got" = "$3" ] || fail "$4: $2 gives '$got', want '$3'"
}
# is_json FILE [WHAT]: FILE parses as JSON.
is_json() {
  ok
  python3 -m json.tool "$1" >/dev/null 2>&1 || fail "${2:+$2: }$(basename "$1") is not JSON"
}
