# anvil — build, test, demo.  Plain make + pkg-config.
#   make              build/anvil and its three libraries (optimized, with debug info)
#   make test         install deps, check the layering, build with ASan+UBSan, run every test
#   make test-mpi     the MPI build in build/mpi/ and its tests (needs scripts/install-mpi)
#   make check-layers check every #include against docs/ARCHITECTURE.md (no build needed)
#   make demo         install deps, build, benchmark the built-in simulator
#   make bench        benchmarks of anvil itself (slow; not part of test)
#   make fuzz         libFuzzer runs of every fuzz target (fuzz/ci, FUZZ_SECONDS each)
# Optional components, one switch each (docs/ARCHITECTURE.md, "Optional components"):
#   MPI=0|1   (default 0) 1: compile with mpicc, define ANVIL_WITH_MPI, build src/mpi/;
#             needs Open MPI, which only scripts/install-mpi installs
#   NVML=0|1  (default 1) 0: leave out the NVML module (files named *nvml*.c); it loads
#             libnvidia-ml with dlopen at run time, so building it needs no package

CC      ?= cc
PKGS    := libcurl libevent libcjson libcrypto gsl yaml-0.1 libpng libjpeg
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
# pkg-config runs once deps are installed; a missing .pc file stops the build with its name
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) || echo PKG_CONFIG_FAILED)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) || echo PKG_CONFIG_FAILED)
LIBS    = $(PKG_LIBS) -lhttp_parser -lm   # http_parser has no .pc file
OPT     := -O2 -g
SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

# The targets that install and then build (test, test-mpi, demo, bench)
# compile on every core, unless make was given its own -j (its jobserver
# then reaches the sub-make; MAKEFLAGS is read when the recipe runs).
JOBS     = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))
NPROC   := $(shell nproc 2>/dev/null || echo 1)

# --- optional components ---------------------------------------------------
MPI     ?= 0
NVML    ?= 1
MPICC   ?= mpicc
$(foreach s,MPI NVML,$(if $(filter-out 0 1,$($(s))),$(error $(s) must be 0 or 1, not '$($(s))')))
MPI_SRC  := $(shell find src/mpi -name '*.c' 2>/dev/null)
NVML_SRC := $(shell find src -name '*nvml*.c')
ifeq ($(MPI),1)
  ifeq ($(shell command -v $(MPICC) 2>/dev/null),)
    $(error MPI=1 needs $(MPICC) from Open MPI: run scripts/install-mpi)
  endif
  override CC := $(MPICC)
endif
# A component is built, and its macro defined, when its switch is on and its
# sources exist: `anvil --version` then names only what is really inside.
MPI_ON  := $(if $(filter 1,$(MPI)),$(MPI_SRC))
NVML_ON := $(if $(filter 1,$(NVML)),$(NVML_SRC))
FEATURES := $(if $(MPI_ON),-DANVIL_WITH_MPI=1) $(if $(NVML_ON),-DANVIL_WITH_NVML=1)
# Left out with its component: the module's sources and its tests (test_mpi*.c, *nvml*.c).
LEFT_OUT := $(if $(MPI_ON),,$(MPI_SRC) $(wildcard tests/*/test_mpi*.c)) \
            $(if $(NVML_ON),,$(NVML_SRC) $(wildcard tests/*/*nvml*.c))
ifeq ($(MPI)$(MPI_SRC),1)
  $(info MPI=1: src/mpi/ holds no sources yet, so nothing MPI is built)
endif

CFLAGS_BASE = -std=c17 -D_GNU_SOURCE $(WARN) -Isrc $(FEATURES) $(PKG_CFLAGS)

# --- sources: three libraries (docs/ARCHITECTURE.md, "Libraries") ----------
# libanvil-core.a  src/core           used by both sides
# libanvil.a       the client folders  (everything else but main.c)
# libanvil-sim.a   src/sim            the simulator; the client never links it
ALL_SRC    := $(filter-out $(LEFT_OUT),$(shell find src -name '*.c' ! -path src/main.c))
CORE_SRC   := $(sort $(filter src/core/%,$(ALL_SRC)))
SIM_SRC    := $(sort $(filter src/sim/%,$(ALL_SRC)))
CLIENT_SRC := $(sort $(filter-out src/core/% src/sim/%,$(ALL_SRC)))
TEST_SRC   := $(sort $(filter-out $(LEFT_OUT),$(wildcard tests/unit/*.c tests/e2e/*.c)))
HDRS       := $(shell find src tests -name '*.h')
ARCHIVES   := libanvil.a libanvil-sim.a libanvil-core.a   # link order: users before core

# The version comes from git describe (or the VERSION file of a release
# tarball) when make starts; only core/version.o is compiled with it.
ANVIL_VERSION := $(shell scripts/version)

B       := build
A       := build/asan

.PHONY: all test test-mpi check-layers check-libs demo bench fuzz deps clean FORCE
all: $(B)/anvil

# Everything a documented command needs: the packages to build, and the
# chart bundle `anvil report` embeds (a no-op once installed).
deps:
	@scripts/install-deps
	@scripts/install-report-deps

# Stamps rewritten only when their text changes: objects rebuild when the
# compiler or a switch changes, version.o when the version does.
$(B)/config.stamp: FORCE
	@mkdir -p $(@D); echo '$(CC) $(FEATURES)' | cmp -s - $@ || echo '$(CC) $(FEATURES)' >$@
$(B)/version.stamp: FORCE
	@mkdir -p $(@D); echo '$(ANVIL_VERSION)' | cmp -s - $@ || echo '$(ANVIL_VERSION)' >$@

# The report's embedded assets (src/report/assets.h): uPlot from node_modules
# when scripts/install-report-deps has put it there (plain make never runs npm:
# without it the build has no chart bundle and `anvil report` says so).
GEN_ASSETS := $(B)/gen/report_assets.c
$(GEN_ASSETS): FORCE
	@scripts/embed-report-assets $@

$(B)/obj/src/core/version.o $(A)/obj/src/core/version.o: $(B)/version.stamp
$(B)/obj/src/core/version.o $(A)/obj/src/core/version.o: VERSION_DEF = -DANVIL_VERSION='"$(ANVIL_VERSION)"'

$(B)/obj/%.o: %.c $(HDRS) Makefile $(B)/config.stamp
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS_BASE) $(OPT) $(CFLAGS) $(VERSION_DEF) -c $< -o $@

$(A)/obj/%.o: %.c $(HDRS) Makefile $(B)/config.stamp
	@mkdir -p $(dir $@)
	@echo "CC [asan] $<"
	@$(CC) $(CFLAGS_BASE) $(SAN) $(CFLAGS) $(VERSION_DEF) -c $< -o $@

%.a:
	@rm -f $@; ar rcs $@ $^

$(B)/libanvil-core.a: $(CORE_SRC:%.c=$(B)/obj/%.o)
$(B)/libanvil.a:      $(CLIENT_SRC:%.c=$(B)/obj/%.o) $(B)/obj/$(GEN_ASSETS:.c=.o)
$(B)/libanvil-sim.a:  $(SIM_SRC:%.c=$(B)/obj/%.o)
$(A)/libanvil-core.a: $(CORE_SRC:%.c=$(A)/obj/%.o)
$(A)/libanvil.a:      $(CLIENT_SRC:%.c=$(A)/obj/%.o) $(A)/obj/$(GEN_ASSETS:.c=.o)
$(A)/libanvil-sim.a:  $(SIM_SRC:%.c=$(A)/obj/%.o)

$(B)/anvil: $(B)/obj/src/main.o $(ARCHIVES:%=$(B)/%)
	$(CC) $(OPT) -o $@ $^ $(LIBS)

$(A)/anvil: $(A)/obj/src/main.o $(ARCHIVES:%=$(A)/%)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

# The tests' stand-in for libnvidia-ml.so.1 (tests/fake/nvml_fake.c), built
# without sanitizers so both builds of anvil can load it; left out with NVML=0.
FAKE_NVML := $(if $(NVML_ON),$(A)/fake/libnvidia-ml.so.1)

$(A)/fake/libnvidia-ml.so.1: tests/fake/nvml_fake.c Makefile
	@mkdir -p $(@D)
	@echo "CC [fake] $<"
	@$(CC) -std=c17 -D_GNU_SOURCE $(WARN) -O1 -g -fPIC -shared -o $@ $<

$(A)/anvil-tests: $(TEST_SRC:%.c=$(A)/obj/%.o) $(ARCHIVES:%=$(A)/%) | $(FAKE_NVML)
	$(CC) $(SAN) -o $@ $^ $(LIBS) -lcriterion -lz

check-layers:
	@scripts/check-layers

check-libs: $(ARCHIVES:%=$(B)/%)
	@scripts/check-libs $(B)

# Tests run under ASan+UBSan; the end-to-end ones drive the sanitized binary.
# One at a time: several compare timestamps against the simulator's, and a
# neighbouring test's load on this 2-core machine would be measured too.
# The simulator that serves as ground truth in those tests is the optimized
# build (ANVIL_SIM_BIN); the client under test is the sanitized one.
test: deps
	@scripts/install-browser-deps
	@scripts/check-layers
	@$(MAKE) --no-print-directory $(JOBS) $(B)/anvil $(A)/anvil $(A)/anvil-tests
	@scripts/check-libs $(B)
	@$(if $(MPI_ON),echo "mpi tests: run (MPI built)",echo "mpi tests: skipped: MPI not built (scripts/install-mpi, then make test-mpi)")
	ANVIL_BIN=$(A)/anvil ANVIL_SIM_BIN=$(B)/anvil ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(A)/anvil-tests --jobs 1

# The MPI build and its tests (tests/*/test_mpi*.c, suite mpi) in build/mpi/,
# apart from the default build so that neither rebuilds the other; the
# simulator is the default build's (make test builds it anyway). Needs Open
# MPI (scripts/install-mpi); .ci/run runs it before make test.
MB := build/mpi
test-mpi: deps
	@$(MAKE) --no-print-directory $(JOBS) $(B)/anvil
	@$(MAKE) --no-print-directory $(JOBS) MPI=1 B=$(MB) A=$(MB)/asan $(MB)/asan/anvil $(MB)/asan/anvil-tests
	ANVIL_BIN=$(MB)/asan/anvil ANVIL_SIM_BIN=$(B)/anvil ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(MB)/asan/anvil-tests --jobs 1 --filter 'mpi/*'

demo: deps
	@$(MAKE) --no-print-directory $(JOBS) $(B)/anvil
	@scripts/demo

bench: deps
	@$(MAKE) --no-print-directory $(JOBS) $(B)/anvil
	@bench/run
	@bench/threads
	@bench/transport
	@bench/memory
	@bench/flat-memory 20000 200000
	@bench/fidelity

fuzz: deps
	@fuzz/run

clean:
	rm -rf $(B)
