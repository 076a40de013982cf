# anvil — build, test, demo.  Plain make + pkg-config.
#   make        build/anvil and build/libanvil.a (optimized, with debug info)
#   make test   install deps, build with ASan+UBSan, run every test
#   make demo   install deps, build, benchmark the built-in simulator
#   make bench  benchmarks of anvil itself (slow; not part of test)
#   make fuzz   libFuzzer runs of the stream parsers (FUZZ_SECONDS each)

CC      ?= cc
PKGS    := libcurl libevent libcjson libcrypto gsl yaml-0.1
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
# pkg-config runs once deps are installed; a missing .pc file stops the build with its name
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) || echo PKG_CONFIG_FAILED)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) || echo PKG_CONFIG_FAILED)
CFLAGS_BASE = -std=c17 -D_GNU_SOURCE $(WARN) -Isrc $(PKG_CFLAGS)
LIBS    = $(PKG_LIBS) -lm
OPT     := -O2 -g
SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

LIB_SRC := $(sort $(shell find src -name '*.c' ! -name main.c))
TEST_SRC := $(sort $(wildcard tests/unit/*.c tests/e2e/*.c))
HDRS    := $(shell find src tests -name '*.h')

B       := build
A       := build/asan

.PHONY: all test demo bench fuzz deps clean
all: $(B)/anvil

deps:
	@scripts/install-deps

$(B)/obj/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS_BASE) $(OPT) $(CFLAGS) -c $< -o $@

$(A)/obj/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	@echo "CC [asan] $<"
	@$(CC) $(CFLAGS_BASE) $(SAN) $(CFLAGS) -c $< -o $@

$(B)/libanvil.a: $(LIB_SRC:%.c=$(B)/obj/%.o)
	@rm -f $@; ar rcs $@ $^

$(A)/libanvil.a: $(LIB_SRC:%.c=$(A)/obj/%.o)
	@rm -f $@; ar rcs $@ $^

$(B)/anvil: $(B)/obj/src/main.o $(B)/libanvil.a
	$(CC) $(OPT) -o $@ $^ $(LIBS)

$(A)/anvil: $(A)/obj/src/main.o $(A)/libanvil.a
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(A)/anvil-tests: $(TEST_SRC:%.c=$(A)/obj/%.o) $(A)/libanvil.a
	$(CC) $(SAN) -o $@ $^ $(LIBS) -lcriterion

# Tests run under ASan+UBSan; the end-to-end ones drive the sanitized binary.
# One at a time: several compare timestamps against the simulator's, and a
# neighbouring test's load on this 2-core machine would be measured too.
# The simulator that serves as ground truth in those tests is the optimized
# build (ANVIL_SIM_BIN); the client under test is the sanitized one.
test: deps
	@$(MAKE) --no-print-directory $(B)/anvil $(A)/anvil $(A)/anvil-tests
	ANVIL_BIN=$(A)/anvil ANVIL_SIM_BIN=$(B)/anvil ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(A)/anvil-tests --jobs 1

demo: deps
	@$(MAKE) --no-print-directory $(B)/anvil
	@scripts/demo

bench: deps
	@$(MAKE) --no-print-directory $(B)/anvil
	@bench/run

fuzz: deps
	@fuzz/run

clean:
	rm -rf $(B)
