#!/bin/sh
# Which goals install packages (README, "Set up"): `make` (all) and every piece of it only
# check, failing with the exact apt-get command, and never install; `make deps`, `make demo`
# and `make test` install what they need (as root), and so do the targets with packages of
# their own (test-html, sim-to-real, bench-peers). Checked on make's dry runs of a fresh build
# folder, so nothing is built or installed here.
set -u
. "$(dirname "$0")/lib.sh"
t_tmp

# plan GOAL...: the deps.sh lines of `make -n -B GOAL...` into $tmp/plan.
plan() {
  make -n -B BUILD="$tmp/b" "$@" 2>&1 | grep 'tools/ops/deps\.sh' >"$tmp/plan"
}
# only_checks GOAL...: each deps step of the goals checks (--check), and there is one at least.
only_checks() {
  plan "$@"; ok
  [ -s "$tmp/plan" ] || fail "make $*: no deps step at all"
  if grep -v -- '--check' "$tmp/plan" | grep -q .; then
    fail "make $* may install:"; show "$tmp/plan"
  fi
}
# installs GOAL WANT: a deps step of the goal runs deps.sh WANT (its groups), without --check.
installs() {
  goal=$1; want=$2
  plan "$goal"; ok
  grep -qx "sh tools/ops/deps.sh${want:+ $want}" "$tmp/plan" || { fail "make $goal does not install '$want':"; show "$tmp/plan"; }
  if grep -q -- '--check' "$tmp/plan"; then fail "make $goal only checks some packages:"; show "$tmp/plan"; fi
}

only_checks all
only_checks
only_checks "$tmp/b/retrysim"
only_checks "$tmp/b/tests/test_call"
only_checks experiments
installs deps ""
installs demo "engine kernel test"
installs demo plot
installs test "engine kernel test"
installs test plot
installs check plot
installs test-html browser
installs sim-to-real "engine grpc"
installs bench-peers peers
# The check says what to run, and fails, without installing: a group of packages this machine
# lacks is made up by pointing deps.sh at a PATH without the commands it looks for.
ok
PATH=/nonexistent /bin/sh "$ops/deps.sh" --check plot >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "deps.sh --check with gnuplot missing exits $rc, want 1"
has "$tmp/out" "install them with:  apt-get update && apt-get install -y --no-install-recommends"
has_re "$tmp/out" "--no-install-recommends.* gnuplot-nox"
t_done
