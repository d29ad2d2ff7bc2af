# retrysim: one non-recursive Makefile. Everything builds into $(BUILD)/.
#   make            build the library, the tools and the tests
#   make test       build and run every test, ending with one count line
#   make demo       the main job
#   make deps       check (and as root install) the Debian packages we need
# See `make help` for the rest.

# ======================== user settings ========================
CC       ?= cc
PREFIX   ?= /usr/local
OPT      ?= -O2 -g
CFLAGS   ?=
LDFLAGS  ?=
# SANITIZE=address,undefined builds everything with those sanitizers (into its own dir).
SANITIZE ?=
# WERROR=1 turns warnings into errors (CI sets it).
WERROR   ?=
# V=1 shows the commands.
V        ?= 0
# ===================== end of user settings =====================

ifeq ($(SANITIZE),)
BUILD    ?= build
SAN_FLAGS :=
else
BUILD    ?= build/san-$(subst $(comma),-,$(SANITIZE))
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
comma := ,

WARN := -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes -Wundef \
        -Wwrite-strings
ifneq ($(WERROR),)
WARN += -Werror
endif

# Flags of our dependencies, asked of pkg-config once, when first used (after the deps step
# of the piece being built ran): the engine needs jansson only, the kernel and above GSL too,
# and the program (expt/ and cli/) nettle as well (the SHA-256 of the files it reads) and
# libyaml (the foreign policy formats that expt/expt_import*.c read: Envoy, Istio, ...).
JANSSON_CFLAGS = $(eval JANSSON_CFLAGS := $(shell pkg-config --cflags jansson))$(JANSSON_CFLAGS)
JANSSON_LIBS = $(eval JANSSON_LIBS := $(shell pkg-config --libs jansson))$(JANSSON_LIBS)
DEPS_CFLAGS = $(eval DEPS_CFLAGS := $(shell pkg-config --cflags gsl jansson))$(DEPS_CFLAGS)
DEPS_LIBS = $(eval DEPS_LIBS := $(shell pkg-config --libs gsl jansson))$(DEPS_LIBS)
NETTLE_CFLAGS = $(eval NETTLE_CFLAGS := $(shell pkg-config --cflags nettle))$(NETTLE_CFLAGS)
NETTLE_LIBS = $(eval NETTLE_LIBS := $(shell pkg-config --libs nettle))$(NETTLE_LIBS)
YAML_CFLAGS = $(eval YAML_CFLAGS := $(shell pkg-config --cflags yaml-0.1))$(YAML_CFLAGS)
YAML_LIBS = $(eval YAML_LIBS := $(shell pkg-config --libs yaml-0.1))$(YAML_LIBS)
# Everything that links the library of experiments (libexpt.a): the program, the tests, the benches.
PROGRAM_LIBS = $(DEPS_LIBS) $(NETTLE_LIBS) $(YAML_LIBS) -lpthread
CMOCKA_CFLAGS = $(eval CMOCKA_CFLAGS := $(shell pkg-config --cflags cmocka))$(CMOCKA_CFLAGS)
CMOCKA_LIBS = $(eval CMOCKA_LIBS := $(shell pkg-config --libs cmocka))$(CMOCKA_LIBS)

# PKG_CFLAGS is set per piece below (target-specific), so that building the engine never asks
# pkg-config for GSL.
PKG_CFLAGS = $(DEPS_CFLAGS)
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(OPT) $(SAN_FLAGS) -MMD -MP -I. \
             $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# ---------------------------------------------------------------- sources
# One folder, one floor, one piece (docs/architecture.md): each folder includes only the
# folders below it, which `make check-deps` checks.
#   retry/   the engine             -> libretry.a   (libc; its config loader jansson)
#   sim/     the simulation kernel  -> libsim.a     (+ GSL)
#   models/  the simulated world    -> libmodels.a
#   expt/    the library of experiments -> libexpt.a (scenarios, runs, studies, outputs, pages)
#   cli/     the retrysim command    -> retrysim (cli/retrysim.c holds main)
RETRY_SRCS := $(sort $(wildcard retry/*.c))
RETRY_OBJS := $(RETRY_SRCS:%.c=$(BUILD)/%.o)
LIBRETRY   := $(BUILD)/libretry.a

KERNEL_SRCS := $(sort $(wildcard sim/*.c))
KERNEL_OBJS := $(KERNEL_SRCS:%.c=$(BUILD)/%.o)
LIBKERNEL   := $(BUILD)/libsim.a

WORLD_SRCS := $(sort $(wildcard models/*.c))
WORLD_OBJS := $(WORLD_SRCS:%.c=$(BUILD)/%.o)
LIBWORLD   := $(BUILD)/libmodels.a

EXPT_SRCS  := $(sort $(wildcard expt/*.c))
EXPT_OBJS  := $(EXPT_SRCS:%.c=$(BUILD)/%.o)
LIBEXPT    := $(BUILD)/libexpt.a
CLI_SRCS   := $(sort $(wildcard cli/*.c))
CLI_OBJS   := $(CLI_SRCS:%.c=$(BUILD)/%.o)
RETRYSIM   := $(BUILD)/retrysim

# Everything the program links, top floor first.
SIM_LIBS   := $(LIBEXPT) $(LIBWORLD) $(LIBKERNEL) $(LIBRETRY)

TEST_SRCS  := $(sort $(wildcard tests/test_*.c))
TEST_BINS  := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT_SRCS := $(sort $(wildcard tests/support/*.c))
TEST_SUPPORT_OBJS := $(TEST_SUPPORT_SRCS:%.c=$(BUILD)/%.o)

EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)

BENCH_SRCS := $(sort $(wildcard bench/*.c))

UPPER_OBJS := $(KERNEL_OBJS) $(WORLD_OBJS) $(EXPT_OBJS) $(CLI_OBJS) \
              $(BENCH_SRCS:%.c=$(BUILD)/%.o)
TESTING_OBJS := $(TEST_SUPPORT_OBJS) $(TEST_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS := $(RETRY_OBJS) $(UPPER_OBJS) $(TESTING_OBJS) $(EXAMPLE_SRCS:%.c=$(BUILD)/%.o)

.PHONY: all deps deps-engine deps-kernel deps-test deps-plot deps-browser test test-html check test-slurm test-ssh \
        demo gallery experiments plots golden-update clean install uninstall valgrind check-deps echo help fmt lint fuzz bench \
        bench-peers
.DEFAULT_GOAL := all

all: $(LIBRETRY) $(RETRYSIM) $(TEST_BINS) $(EXAMPLE_BINS)

# The Debian packages (tools/ops/deps.sh). Each piece asks only for what it needs: libretry.a
# builds with jansson alone. `make deps` installs (as root; otherwise it prints the command),
# and so do the goals that promise to set up what they run: make demo, make test and the
# targets with packages of their own. Every other goal, plain `make` first, only checks: a
# missing package stops it with the exact apt-get command, and nothing is installed.
INSTALL_GOALS := deps demo test check test-slurm test-ssh test-html sim-to-real bench-peers
ifneq ($(filter $(INSTALL_GOALS),$(MAKECMDGOALS)),)
DEPS := sh tools/ops/deps.sh
else
DEPS := sh tools/ops/deps.sh --check
endif
deps:
	$(Q)sh tools/ops/deps.sh
deps-engine:
	$(Q)$(DEPS) engine
deps-kernel:
	$(Q)$(DEPS) engine kernel
deps-test:
	$(Q)$(DEPS) engine kernel test
deps-plot:
	$(Q)$(DEPS) plot
deps-browser:
	$(Q)$(DEPS) browser

$(RETRY_OBJS) $(EXAMPLE_SRCS:%.c=$(BUILD)/%.o): | deps-engine
$(RETRY_OBJS) $(EXAMPLE_SRCS:%.c=$(BUILD)/%.o): PKG_CFLAGS = $(JANSSON_CFLAGS)
$(UPPER_OBJS): | deps-kernel
$(TESTING_OBJS): | deps-test
$(EXPT_OBJS) $(CLI_OBJS): PKG_CFLAGS = $(DEPS_CFLAGS) $(NETTLE_CFLAGS) $(YAML_CFLAGS)
# The tests' support (tests/support/) fails the calling test through cmocka.
$(TEST_SUPPORT_OBJS): PKG_CFLAGS = $(DEPS_CFLAGS) $(NETTLE_CFLAGS) $(YAML_CFLAGS) $(CMOCKA_CFLAGS)

# retrysim --plot finds the gnuplot scripts of this tree (expt/expt_plot.c; RETRYSIM_PLOTS
# overrides it at run time).
$(BUILD)/expt/expt_plot.o: ALL_CFLAGS += -DRETRYSIM_PLOTS_DIR='"$(CURDIR)/plots"'

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBRETRY): $(RETRY_OBJS)
	@[ "$(V)" = 1 ] || echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBKERNEL): $(KERNEL_OBJS)
	@[ "$(V)" = 1 ] || echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBWORLD): $(WORLD_OBJS)
	@[ "$(V)" = 1 ] || echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBEXPT): $(EXPT_OBJS)
	@[ "$(V)" = 1 ] || echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(RETRYSIM): $(CLI_OBJS) $(SIM_LIBS)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(SIM_LIBS) $(PROGRAM_LIBS) -lm

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJS) $(SIM_LIBS)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(SIM_LIBS) $(PROGRAM_LIBS) \
	    $(CMOCKA_LIBS) -lm

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(CMOCKA_CFLAGS) -c $< -o $@

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIBRETRY)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBRETRY) $(JANSSON_LIBS) -lm -lpthread

# ---------------------------------------------------------------- tests
# Every cmocka suite, then the script checks; tools/test/run-tests.sh prints one count line.
TEST_SCRIPTS := tools/test/check-floors.sh tools/test/test-check-floors.sh \
                tools/test/check-deps.sh tools/test/test-engine-alone.sh \
                tools/test/test-deps-goals.sh tools/test/test-install.sh \
                tools/test/test-realtime-demo.sh tools/test/test-cli.sh \
                tools/test/test-golden.sh tools/test/test-golden-both-ways.sh \
                tools/test/test-experiments.sh tools/test/test-signals.sh \
                tools/test/test-explain.sh tools/test/test-config-warnings.sh tools/test/test-import.sh \
                tools/test/test-report.sh tools/test/test-fleet.sh tools/test/test-study.sh \
                tools/test/test-sweep.sh tools/test/test-parallel.sh tools/test/test-merge-tamper.sh \
                tools/test/test-study-report.sh tools/test/test-fastpath.sh

test: all | deps-plot
	$(Q)BUILD=$(BUILD) CC="$(CC)" sh tools/test/run-tests.sh $(TEST_BINS) -- $(TEST_SCRIPTS)

# A study through a one-node Slurm cluster started on this machine (tools/ops/slurm-up.sh), its
# shards a job array, the merge a dependent job; as root it installs Slurm and munge. Not part
# of `make test` (it needs root); `.ci/run` runs it. Exit 77 from the test means skipped.
test-slurm: all
	$(Q)BUILD=$(BUILD) sh tools/test/test-slurm.sh; rc=$$?; [ $$rc -eq 77 ] || exit $$rc
# docs/scaling-out.md's GNU parallel --sshloginfile recipe against an sshd on loopback (root).
test-ssh: all
	$(Q)BUILD=$(BUILD) sh tools/test/test-ssh.sh; rc=$$?; [ $$rc -eq 77 ] || exit $$rc

check: test

# report.html validated by tidy and opened in headless Chromium: it renders, every picture
# loads, the console stays silent; the screenshot is kept as $(BUILD)/artifacts/report.png. Not
# part of `make test`: Chromium is a large package only this needs.
test-html: all | deps-plot deps-browser
	$(Q)BUILD=$(BUILD) sh tools/test/test-report-html.sh

VALGRIND := valgrind --quiet --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
            --error-exitcode=99
valgrind: all
	$(Q)BUILD=$(BUILD) RUNNER="$(VALGRIND)" sh tools/test/run-tests.sh $(TEST_BINS)
	$(Q)rm -rf $(BUILD)/valgrind-out && $(VALGRIND) $(RETRYSIM) run experiments/quickstart.json \
	    --duration 3s --quiet --out $(BUILD)/valgrind-out && echo "ok      retrysim run (valgrind)"
	$(Q)rm -rf $(BUILD)/valgrind-plot && $(VALGRIND) $(RETRYSIM) run experiments/seed000-charges.json \
	    --check --quiet --plot --out $(BUILD)/valgrind-plot && echo "ok      retrysim run --check --plot (valgrind)"
	$(Q)$(VALGRIND) $(RETRYSIM) explain experiments/nested-layers.json --after 1s --format json \
	    >/dev/null && echo "ok      retrysim explain (valgrind)"

# Every floor includes only those below it; libretry.a needs libc only, jansson only in its
# config loader.
check-deps: $(LIBRETRY)
	$(Q)sh tools/test/check-floors.sh
	$(Q)sh tools/test/check-deps.sh $(LIBRETRY)

# Benchmarks: CPU cost of the engine's decisions (docs/performance.md records the figures).
BENCH_CALLS ?= 2000000
BENCH_DURATION ?= 600s
BENCH_BINS := $(BUILD)/bench/bench_engine $(BUILD)/bench/bench_kernel $(BUILD)/bench/bench_sim \
              $(BUILD)/bench/bench_mm1_bare
bench: $(BENCH_BINS) $(RETRYSIM)
	$(Q)$(BUILD)/bench/bench_engine $(BENCH_CALLS)
	$(Q)$(BUILD)/bench/bench_kernel
	$(Q)$(BUILD)/bench/bench_sim bench/reference.json 60s
	$(Q)$(BUILD)/bench/bench_sim bench/reference.json $(BENCH_DURATION)
	$(Q)BUILD=$(BUILD) sh bench/bench.sh
	$(Q)BUILD=$(BUILD) sh bench/bench-study.sh
	$(Q)BUILD=$(BUILD) sh bench/bench-sweep.sh
# The same M/M/1 in SimPy beside the bare C loop and retrysim (installs python3-simpy3).
bench-peers: $(BENCH_BINS)
	$(Q)sh tools/ops/deps.sh peers
	$(Q)BUILD=$(BUILD) PEERS=1 sh bench/bench.sh

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(SIM_LIBS)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(SIM_LIBS) $(PROGRAM_LIBS) -lm

# libFuzzer (needs clang) on the config loader and header parsers, then on the scenario
# loader, FUZZ_SECONDS each: make fuzz FUZZ_SECONDS=60
FUZZ_SECONDS ?= 30
FUZZ_CC := clang -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fsanitize=fuzzer,address,undefined -I.
fuzz: | deps-kernel
	@mkdir -p build/fuzz/corpus build/fuzz/corpus-scenario
	$(Q)$(FUZZ_CC) $(shell pkg-config --cflags jansson) tests/fuzz/fuzz_config.c $(RETRY_SRCS) \
	    $(shell pkg-config --libs jansson) -lm -o build/fuzz/fuzz_config
	$(Q)build/fuzz/fuzz_config -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	    build/fuzz/corpus tests/data/valid tests/data/invalid 2>&1 | tail -n 5
	$(Q)$(FUZZ_CC) $(shell pkg-config --cflags gsl jansson nettle yaml-0.1) tests/fuzz/fuzz_scenario.c \
	    $(filter expt/expt_scenario%.c expt/expt_import%.c,$(EXPT_SRCS)) models/model_config.c \
	    models/model_estimate.c $(RETRY_SRCS) $(shell pkg-config --libs gsl jansson nettle yaml-0.1) \
	    -lm -o build/fuzz/fuzz_scenario
	$(Q)build/fuzz/fuzz_scenario -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	    build/fuzz/corpus-scenario tests/data/scenarios 2>&1 | tail -n 5

# ---------------------------------------------------------------- the main job
# The flagship experiment (a metastable retry storm and the protections that end it), with its
# pictures and out/demo/report.md, a page that tells the story with the table and the plots.
demo: all | deps-plot
	$(Q)$(RETRYSIM) run experiments/metastable-storm.json --check --plot --out out/demo
	@echo "report: out/demo/report.md, out/demo/report.html (pictures: out/demo/*.svg)"
	@echo "next: the gallery of real outages (DynamoDB 2015, Facebook 2010, Slack 2022, GCP and AWS 2025,"
	@echo "      duplicate payouts, the OSDI'22 reproduction): docs/experiments/README.md; make gallery draws them"

# The gallery of real outages (docs/experiments/README.md): each incident's experiment as one
# plain run (replication 1 of its study) with pictures, in out/gallery/NAME/.
GALLERY := $(sort $(wildcard experiments/incident-*.json) experiments/osdi22-retry-repro.json)
gallery: all | deps-plot
	$(Q)for f in $(filter-out %-tipping.json,$(GALLERY)); do n=$$(basename $$f .json); \
	  $(RETRYSIM) run $$f --set replications=1 --quiet --plot --out out/gallery/$$n || exit 1; \
	  echo "ok      $$n -> out/gallery/$$n/compare.svg"; done

# ---------------------------------------------------------------- experiments and plots
# Every experiment with its expectations checked (make test does the same, without files kept);
# the files of each land in out/experiments/NAME/. `make plots` adds pictures and report.md.
EXPERIMENTS := $(sort $(wildcard experiments/*.json))
experiments: all | deps-plot
	$(Q)for f in $(EXPERIMENTS); do n=$$(basename $$f .json); \
	  $(RETRYSIM) run $$f --check --quiet --out out/experiments/$$n || exit 1; \
	  echo "ok      $$n -> out/experiments/$$n/"; done

plots: all | deps-plot
	$(Q)for f in $(EXPERIMENTS); do n=$$(basename $$f .json); \
	  $(RETRYSIM) run $$f --check --quiet --plot --out out/experiments/$$n || exit 1; \
	  echo "ok      $$n -> out/experiments/$$n/report.md"; done

# Golden files: deterministic scenarios whose outputs are compared byte for byte.
golden-update: all
	$(Q)BUILD=$(BUILD) GOLDEN_UPDATE=1 sh tools/test/test-golden.sh

# ---------------------------------------------------------------- sim-to-real
# The engine in a real gRPC client (examples/grpc/grpc_client.c, against the gRPC C core of
# Debian's libgrpc-dev), and retrysim checked against real gRPC on loopback
# (docs/sim-to-real.md). Optional: nothing else builds or needs gRPC.
GRPC_CLIENT := $(BUILD)/examples/grpc/grpc_client
GRPC_CFLAGS = $(eval GRPC_CFLAGS := $(shell pkg-config --cflags grpc))$(GRPC_CFLAGS)
GRPC_LIBS = $(eval GRPC_LIBS := $(shell pkg-config --libs grpc))$(GRPC_LIBS)
.PHONY: deps-grpc sim-to-real grpc-client
deps-grpc:
	$(Q)$(DEPS) engine grpc

$(BUILD)/examples/grpc/grpc_client.o: examples/grpc/grpc_client.c | deps-grpc
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@
$(BUILD)/examples/grpc/grpc_client.o: PKG_CFLAGS = $(JANSSON_CFLAGS) $(GRPC_CFLAGS)

$(GRPC_CLIENT): $(BUILD)/examples/grpc/grpc_client.o $(LIBRETRY)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBRETRY) $(JANSSON_LIBS) $(GRPC_LIBS) -lm -lpthread

grpc-client: $(GRPC_CLIENT)

# Every case three ways (the libretry client, gRPC's own retries, retrysim), one table.
sim-to-real: $(GRPC_CLIENT) $(RETRYSIM) | deps-grpc
	$(Q)/usr/bin/python3 tools/ops/sim-to-real.py --client $(GRPC_CLIENT) --retrysim $(RETRYSIM) \
	    --work $(BUILD)/sim-to-real

-include $(BUILD)/examples/grpc/grpc_client.d

# ---------------------------------------------------------------- install
install: $(LIBRETRY)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(LIBRETRY) $(DESTDIR)$(PREFIX)/lib/libretry.a
	install -m 644 retry/retry.h retry/retry_parts.h retry/retry_realtime.h \
	    retry/retry_aws_adaptive.h retry/retry_brooker.h retry/retry_limit.h \
	    $(wildcard retry/retry_json.h) $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|'"$$(sed -n 's/^#define RETRY_VERSION "\(.*\)"/\1/p' retry/retry.h)"'|g' \
	    retry/retry.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/retry.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libretry.a $(DESTDIR)$(PREFIX)/include/retry.h \
	    $(DESTDIR)$(PREFIX)/include/retry_parts.h $(DESTDIR)$(PREFIX)/include/retry_realtime.h \
	    $(DESTDIR)$(PREFIX)/include/retry_json.h $(DESTDIR)$(PREFIX)/include/retry_aws_adaptive.h \
	    $(DESTDIR)$(PREFIX)/include/retry_brooker.h $(DESTDIR)$(PREFIX)/include/retry_limit.h \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/retry.pc

# ---------------------------------------------------------------- upkeep
clean:
	rm -rf build out

fmt:
	clang-format -i retry/*.c retry/*.h sim/*.c sim/*.h models/*.c models/*.h expt/*.c expt/*.h cli/*.c cli/*.h tests/*.c tests/support/*.c tests/support/*.h tests/fuzz/*.c examples/*.c

lint:
	cppcheck --quiet --enable=warning,portability --error-exitcode=1 --std=c11 \
	    --suppress=missingIncludeSystem -I. retry/ sim/ models/ expt/ cli/ examples/

echo:
	@echo "CC          = $(CC)"
	@echo "BUILD       = $(BUILD)"
	@echo "ALL_CFLAGS  = $(ALL_CFLAGS)"
	@echo "ALL_LDFLAGS = $(ALL_LDFLAGS)"
	@echo "DEPS_LIBS   = $(DEPS_LIBS)"
	@echo "NETTLE_LIBS = $(NETTLE_LIBS)"

help:
	@echo "targets: all test test-slurm test-ssh check demo gallery experiments plots deps install uninstall valgrind check-deps"
	@echo "         bench bench-peers fuzz golden-update clean fmt lint echo"
	@echo "settings: PREFIX=$(PREFIX) OPT='$(OPT)' SANITIZE=$(SANITIZE) WERROR=$(WERROR) V=$(V)"

-include $(ALL_OBJS:.o=.d)
