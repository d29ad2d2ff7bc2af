#!/bin/sh
# Building the engine needs nothing but a C compiler and jansson: `make build/libretry.a`
# must ask tools/ops/deps.sh to check the "engine" group only, never GSL, cmocka or gnuplot
# (checked on make's dry run, so nothing is built or installed here).
set -eu
. "$(dirname "$0")/lib.sh"
t_tmp
make -n -B BUILD="$tmp/b" "$tmp/b/libretry.a" >"$tmp/plan" 2>&1
calls=$(grep 'tools/ops/deps.sh' "$tmp/plan" || true)
[ "$calls" = "sh tools/ops/deps.sh --check engine" ] || {
  echo "test-engine-alone: building libretry.a runs other deps steps:"; echo "$calls"; exit 1; }
if grep -E 'gsl|cmocka|nettle|yaml' "$tmp/plan" | grep -q .; then
  echo "test-engine-alone: building libretry.a mentions GSL, cmocka, nettle or libyaml:"; grep -E 'gsl|cmocka|nettle|yaml' "$tmp/plan"; exit 1
fi
# The program, on the contrary, needs the kernel's packages.
make -n -B BUILD="$tmp/b" "$tmp/b/retrysim" >"$tmp/plan2" 2>&1
grep -q 'tools/ops/deps.sh --check engine kernel' "$tmp/plan2" || {
  echo "test-engine-alone: building retrysim does not check GSL"; exit 1; }
echo "test-engine-alone: libretry.a asks for jansson only; retrysim for GSL too"
