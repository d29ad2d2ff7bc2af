#!/bin/sh
# Checks the Debian packages a build step needs and installs the missing ones.
# As root it runs apt-get; otherwise it prints the exact command and fails. With --check it
# never installs: it prints the exact command and fails (plain `make` checks this way; `make
# deps`, `make demo` and `make test` install).
# Usage: tools/ops/deps.sh [--check] [GROUP...]   (called by the Makefile; safe to run again)
#   engine  pkg-config, jansson        (libretry.a: libc, its config loader jansson)
#   kernel  GSL, nettle, libyaml       (sim/, models/, the retrysim program; nettle's SHA-256
#                                      and libyaml's parser (policy-formats.md) are the program's alone)
#   test    cmocka, python3            (the test suites; python3 reads JSON in the shell tests)
#   plot    gnuplot                    (retrysim --plot, make demo, make test's plot checks)
#   grpc    libgrpc-dev, python3-grpcio (make sim-to-real only; nothing else needs gRPC)
#   browser chromium, tidy             (make test-html: report.html rendered headless, validated)
#   peers   python3, python3-simpy3    (make bench-peers: the same M/M/1 in SimPy)
#   parallel GNU parallel              (make test: a sweep's shards run through parallel)
#   slurm   slurmctld, slurmd, slurm-client, munge
#                                      (make test-slurm: a one-node Slurm cluster on localhost)
#   ssh     openssh-server and -client, rsync
#                                      (make test-ssh: parallel --sshloginfile to an sshd on loopback)
# Without a group: engine, kernel, test and plot (grpc, browser, peers, slurm and ssh are for
# make sim-to-real, make test-html, make bench-peers, make test-slurm and make test-ssh only;
# parallel is asked for by tools/test/test-parallel.sh, one of make test's scripts).
set -eu

# make -j runs several deps steps at once; apt-get allows one at a time, so each step checks and
# installs under one lock (flock, from util-linux, is on every Debian machine).
if [ -z "${RETRYSIM_DEPS_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
  RETRYSIM_DEPS_LOCKED=1 exec flock "${TMPDIR:-/tmp}/retrysim-deps.lock" sh "$0" "$@"
fi

check_only=0
if [ "${1:-}" = --check ]; then check_only=1; shift; fi
[ $# -eq 0 ] && set -- engine kernel test plot
missing=""
has_pc=1
command -v pkg-config >/dev/null 2>&1 || { has_pc=0; missing="$missing pkg-config"; }
# module: pkg-config module -> Debian package (without pkg-config, assume missing)
need_pc() {
  if [ "$has_pc" = 1 ] && pkg-config --exists "$1"; then return 0; fi
  case " $missing " in *" $2 "*) ;; *) missing="$missing $2" ;; esac
}
for g in "$@"; do
  case "$g" in
    engine) need_pc jansson libjansson-dev ;;
    kernel) need_pc gsl libgsl-dev; need_pc jansson libjansson-dev; need_pc nettle nettle-dev
            need_pc yaml-0.1 libyaml-dev ;;
    test)   need_pc cmocka libcmocka-dev
            command -v python3 >/dev/null 2>&1 || missing="$missing python3" ;;
    plot)   command -v gnuplot >/dev/null 2>&1 || missing="$missing gnuplot-nox" ;;
    grpc)   need_pc grpc libgrpc-dev
            /usr/bin/python3 -c 'import grpc' >/dev/null 2>&1 || missing="$missing python3-grpcio" ;;
    browser) command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
             command -v tidy >/dev/null 2>&1 || missing="$missing tidy" ;;
    peers)  if [ -x /usr/bin/python3 ]; then
              /usr/bin/python3 -c 'import simpy' 2>/dev/null || missing="$missing python3-simpy3"
            else
              missing="$missing python3 python3-simpy3"
            fi ;;
    # moreutils' parallel is another program; Debian's parallel package diverts it
    parallel) parallel --version 2>/dev/null | grep -q 'GNU parallel' || missing="$missing parallel" ;;
    slurm)  for p in slurmctld slurmd; do
              command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || missing="$missing $p"
            done
            command -v sbatch >/dev/null 2>&1 || missing="$missing slurm-client"
            command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || missing="$missing munge" ;;
    ssh)    [ -x /usr/sbin/sshd ] || missing="$missing openssh-server"
            command -v ssh-keygen >/dev/null 2>&1 || missing="$missing openssh-client"
            command -v rsync >/dev/null 2>&1 || missing="$missing rsync"
            command -v python3 >/dev/null 2>&1 || missing="$missing python3" ;;
    *) echo "deps: unknown group '$g' (engine, kernel, test, plot, grpc, browser, peers, parallel, slurm, ssh)" >&2; exit 2 ;;
  esac
done

[ -z "$missing" ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends$missing"
if [ "$check_only" = 1 ]; then
  echo "deps: missing packages:$missing" >&2
  echo "deps: this step only checks; as root, install them with:  $cmd" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >&2
  exit 0
fi
echo "deps: missing packages:$missing" >&2
echo "deps: run as root:  $cmd" >&2
exit 1
