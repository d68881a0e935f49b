# docdex: build, test, install.
#
#   make                 docdex, the core library (lib/libdocdex.a and
#                        lib/libdocdex.so.0) and the benchmark engine
#                        (bench/libdxbench.a, never installed)
#   make check           C unit tests of lib/, the fuzz harnesses over their
#                        saved inputs, the bats suites (the readers' again
#                        with zlib serving, where libdeflate is built in) and
#                        the Python tests, CHECK_JOBS (2) suites at a time;
#                        ends with each suite's time and the tests passed,
#                        failed and skipped
#   make check-zlib      a build without libdeflate (build/zlib) and the
#                        readers' tests on it
#   make CODECS=zlib     build without libdeflate (default: with it, where it
#                        links; CODECS=libdeflate insists)
#   make fuzz            each fuzz harness under libFuzzer (clang), FUZZ_TIME s
#   make asan            make check under AddressSanitizer and UBSan
#   make tsan            make check under ThreadSanitizer
#   make valgrind        make check with every docdex process, unit test and
#                        replay under valgrind's memcheck (slow: not in CI)
#   make demo            index a small generated corpus and serve from it
#   make bench           the benchmarks (generates ~2 GB under build/bench)
#   make install         docdex, its man pages and completions, and the core
#                        library (shared, static, docdex.h, docdex.pc):
#                        PREFIX=/usr/local, LIBDIR, INCLUDEDIR, PKGCONFIGDIR,
#                        DESTDIR honoured; make uninstall removes them
#   make python          the Python package's C extension, built in place in
#                        python/docdex (PYTHON=/usr/bin/python3, with its
#                        python3-dev and python3-setuptools; offline)
#   make python-check    its tests: PYTHON -m pytest -q python/tests
#   make study           the DDP study (bench/study/ddp_study.py): a generated
#                        corpus of STUDY_SIZE (1G) in STUDY_DIR (build/study),
#                        trained on by 1, 2 and 4 gloo ranks with DataLoader
#                        workers from a dict, an offset table and docdex, each
#                        configuration in a cgroup v1 memory group of
#                        STUDY_CAP (18G; empty: none); then 2 ranks under
#                        STUDY_LIMIT (3G; empty: skipped). Memory groups need
#                        root. About 25 minutes; not part of make check
#   make bench-python    DataLoader workers' memory after a pass over the
#                        STUDY_SIZE corpus, a dict against docdex
#                        (bench/study/worker_memory.py, 1, 2, 4 and 8
#                        workers), then python/bench/corpus_speed.py on it
#   make bench-scale     docdex at real sizes (bench/scale.sh): generated
#                        passage and document corpora of SCALE_SIZES (1G 3G
#                        12G) in SCALE_DIR (build/scale, kept), index build,
#                        1M random gets in and out of the page cache for each
#                        --access against fio, bench's workloads in the
#                        page cache and in a memory cgroup of SCALE_LIMIT
#                        (1G), sample; about 40 GB of disk and an hour;
#                        not part of make check
#   make DEV=1           warnings are errors
#
# A build with other flags goes to its own directory: B=build/asan holds the
# sanitizer build (objects, library, binary), so the two never mix.
#
# RUNNER, empty unless make valgrind sets it, runs each unit test, replay
# and docdex process of make check: RUNNER PROGRAM ARG..., or, standing in
# for docdex in the bats suites, DX_RUNNER_PROGRAM=PROGRAM RUNNER ARG....

CC ?= cc
CFLAGS ?= -O2 -g
WARN = -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
       -Wpointer-arith -Wundef -Wvla
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS)
# DEV=1: warnings are errors, for the developer's build.
ifdef DEV
ALL_CFLAGS += -Werror
endif
# -MMD -MP: each object depends on the headers it includes, no more.
ALL_CPPFLAGS = -D_GNU_SOURCE -Ilib -Ibench -MMD -MP $(CPPFLAGS)
# The core library needs zlib and threads; the benchmark engine adds
# libyaml (experiment files) and -ldl (dlopen of the CUDA runtime; in libc
# since glibc 2.34, harmless there).
CORE_LIBS = -lz -lm -lpthread
LDLIBS = -lyaml -ldl $(CORE_LIBS)

# Codecs beside zlib, where this machine has them (lib/codec.h): CODECS=auto
# (the default) takes libdeflate (BGZF blocks, the --bgzf writer) and ISA-L
# (the gzip stream from an access point) where each links, CODECS=libdeflate
# or CODECS=isal insists on that one (and takes the other where it links),
# CODECS=zlib builds without either.  Each build directory keeps the choice
# it was built with ($(B)/codecs), and rebuilds the core when it changes.
CODECS ?= auto
LIBDEFLATE_LINKS := $(shell printf '\043include <libdeflate.h>\nint main(void) { return !libdeflate_alloc_decompressor(); }\n' | \
    $(CC) -x c - -ldeflate -o /dev/null 2>/dev/null && echo yes)
ISAL_LINKS := $(shell printf '\043include <isa-l/igzip_lib.h>\nint main(void) { struct inflate_state s; isal_inflate_init(&s); return 0; }\n' | \
    $(CC) -x c - -lisal -o /dev/null 2>/dev/null && echo yes)
ifeq ($(CODECS)$(LIBDEFLATE_LINKS),libdeflate)
$(error CODECS=libdeflate: libdeflate does not link here (Debian: libdeflate-dev))
endif
ifeq ($(CODECS)$(ISAL_LINKS),isal)
$(error CODECS=isal: ISA-L does not link here (Debian: libisal-dev))
endif
ifneq ($(CODECS),zlib)
CODEC_LIBS = $(strip $(if $(LIBDEFLATE_LINKS),-ldeflate) $(if $(ISAL_LINKS),-lisal))
endif
CODEC_FLAGS = $(if $(findstring -ldeflate,$(CODEC_LIBS)),-DDX_HAVE_LIBDEFLATE) \
              $(if $(findstring -lisal,$(CODEC_LIBS)),-DDX_HAVE_ISAL)
CORE_LIBS += $(CODEC_LIBS)

# The library's version, from docdex.h; the soname changes with MAJOR.
VERSION := $(shell sed -n 's/^\#define DX_VERSION "\(.*\)"/\1/p' lib/docdex.h)
SOVERSION = $(firstword $(subst ., ,$(VERSION)))

PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d

B ?= build
ifeq ($(B),build)
DOCDEX = docdex
LIBDX = lib/libdocdex.a
LIBDX_SO = lib/libdocdex.so.$(SOVERSION)
LIBDXB = bench/libdxbench.a
SYNTH = tests/dx-synth
POKE = tests/ddx-poke
else
DOCDEX = $(B)/docdex
LIBDX = $(B)/libdocdex.a
LIBDX_SO = $(B)/libdocdex.so.$(SOVERSION)
LIBDXB = $(B)/libdxbench.a
SYNTH = $(B)/dx-synth
POKE = $(B)/ddx-poke
endif

LIB_SRC = $(sort $(wildcard lib/*.c))
BENCH_SRC = $(sort $(wildcard bench/*.c))
CMD_SRC = $(sort $(wildcard cmd/*.c))
UNIT_SRC = $(sort $(wildcard tests/unit/test_*.c))
LIB_OBJ = $(LIB_SRC:%.c=$(B)/%.o)
BENCH_OBJ = $(BENCH_SRC:%.c=$(B)/%.o)
CMD_OBJ = $(CMD_SRC:%.c=$(B)/%.o)
UNIT_BIN = $(UNIT_SRC:%.c=$(B)/%)
MAN = $(wildcard man/*.1) $(wildcard man/*.5)

# What the binary says about its build in --version.
BUILD_INFO = -DDX_BUILD_CC='"$(shell $(CC) --version 2>/dev/null | head -n 1)"' \
             -DDX_BUILD_CFLAGS='"$(strip $(CFLAGS))"'

all: $(DOCDEX) $(LIBDX) $(LIBDX_SO) $(SYNTH)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# The core's objects are position-independent, and show only what
# docdex.h marks DX_EXPORT: one set serves the static and the shared
# library.
$(B)/lib/%.o: lib/%.c $(B)/codecs
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(CODEC_FLAGS) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

# The codec libraries this build directory's core was built with: rewritten
# only when they change; setup.py links the Python extension with them.
$(B)/codecs: FORCE
	@mkdir -p $(@D)
	@echo '$(CODEC_LIBS)' | cmp -s - $@ || echo '$(CODEC_LIBS)' > $@
FORCE:

$(B)/cmd/version.o: BUILD_INFO_FLAGS = $(BUILD_INFO)
$(B)/cmd/version.o: cmd/version.c Makefile
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(BUILD_INFO_FLAGS) $(ALL_CFLAGS) -c -o $@ $<

-include $(shell find $(B) -name '*.d' 2>/dev/null)

$(LIBDX): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# --no-undefined: the core needs nothing of the engine or the program.
$(LIBDX_SO): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libdocdex.so.$(SOVERSION) \
	    -Wl,--no-undefined -o $@ $^ $(CORE_LIBS)
	ln -sf libdocdex.so.$(SOVERSION) $(@D)/libdocdex.so

$(LIBDXB): $(BENCH_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# The programs link the core statically: docdex runs from any directory.
$(DOCDEX): $(CMD_OBJ) $(LIBDXB) $(LIBDX)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CMD_OBJ) $(LIBDXB) $(LIBDX) $(LDLIBS)

$(SYNTH): $(B)/tests/dx-synth.o $(LIBDXB) $(LIBDX)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBDXB) $(LIBDX) $(LDLIBS)

# Sets a field of an index and mends its checksums, for tests of indexes
# that lie (tests/ddx-poke.c).
$(POKE): $(B)/tests/ddx-poke.o $(B)/tests/fuzz/ddx_repair.o $(LIBDX)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(CORE_LIBS)

$(B)/tests/unit/%: $(B)/tests/unit/%.o $(LIBDXB) $(LIBDX)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBDXB) $(LIBDX) $(LDLIBS)

# A fake CUDA runtime for tests/unit/test_cuda.c, which finds it through
# DOCDEX_FAKE_CUDART: it exercises bench/cuda.c's dlopen path without CUDA.
FAKE_CUDART = $(B)/tests/libfakecudart.so
$(FAKE_CUDART): tests/fake_cudart.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $<

# fork() that fails with EAGAIN after FAIL_FORK_AFTER calls, preloaded by
# the tests of a worker that cannot be started (tests/fail_fork.c).
FAIL_FORK = $(B)/tests/libfailfork.so
$(FAIL_FORK): tests/fail_fork.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $< -ldl

# Each unit test program, then each replay below, is one TAP line (ok N
# NAME, not ok N NAME): make check counts them as the bats tests.  The
# commands are kept in variables for make check's runner (tests/run-suites.sh),
# single-quoted there: no single quote in them.
UNIT_RUN = st=0; i=0; for t in $(UNIT_BIN); do i=$$((i + 1)); \
    if DOCDEX_FAKE_CUDART=$(abspath $(FAKE_CUDART)) $(RUNNER) $$t; then echo "ok $$i $$t"; \
    else echo "not ok $$i $$t"; st=1; fi; done; exit $$st
unit: $(UNIT_BIN) $(FAKE_CUDART)
	@$(UNIT_RUN)

# Fuzz harnesses: each tests/fuzz/fuzz_NAME.c feeds bytes to one parser of
# outside input (LLVMFuzzerTestOneInput).  make check replays each, with
# the compiler at hand, over its seeds and the inputs that once failed it
# (tests/fuzz/seeds/NAME, tests/fuzz/regress/NAME); make fuzz runs each
# under clang's libFuzzer for FUZZ_TIME seconds.
FUZZ_SRC = $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES = $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
REPLAY_BIN = $(FUZZ_NAMES:%=$(B)/tests/fuzz/replay/%)
FUZZ_INPUTS = $$(find tests/fuzz/seeds/$$n tests/fuzz/regress/$$n -type f 2>/dev/null | sort)

FUZZ_COMMON = $(B)/tests/fuzz/fuzz.o $(B)/tests/fuzz/ddx_repair.o

# The Python package's decoder of documents is plain C: its harness links
# it in.
$(B)/tests/fuzz/replay/utf8 $(B)/tests/fuzz/bin/utf8: $(B)/python/src/utf8.o

$(B)/tests/fuzz/replay/%: $(B)/tests/fuzz/fuzz_%.o $(B)/tests/fuzz/replay.o $(FUZZ_COMMON) $(LIBDXB) $(LIBDX)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter-out $(LIBDXB) $(LIBDX),$^) $(LIBDXB) $(LIBDX) $(LDLIBS)

# With libdeflate built in, the replays run again with zlib serving
# (DOCDEX_CODEC=zlib, lib/codec.h).
REPLAY_CODECS = default $(if $(CODEC_LIBS),zlib)
REPLAY_RUN = st=0; i=0; for c in $(REPLAY_CODECS); do for n in $(FUZZ_NAMES); do i=$$((i + 1)); \
    if DOCDEX_CODEC=$$c $(RUNNER) $(B)/tests/fuzz/replay/$$n $(FUZZ_INPUTS); \
    then echo "ok $$i replay $$n ($$c codec)"; else echo "not ok $$i replay $$n ($$c codec)"; st=1; fi; \
    done; done; exit $$st
replay: $(REPLAY_BIN)
	@$(REPLAY_RUN)

TEST_DOCDEX = $(if $(RUNNER),DX_RUNNER_PROGRAM=$(abspath $(DOCDEX)) DOCDEX=$(RUNNER),DOCDEX=$(abspath $(DOCDEX)))
# The Python package's tests run with the plain build; the sanitizer
# builds test the C code.
PY_CHECK = $(if $(filter build,$(B)),python-check)
PY_RUN = DOCDEX=$(abspath $(DOCDEX)) $(PYTHON) -m pytest -q python/tests

# make check's suites, CHECK_JOBS at a time (tests/run-suites.sh): the unit
# tests, the replays, the Python tests and each bats file, each suite's
# tests in order; its output shown whole once it is done, and at the end
# the time of each and the count of tests passed, failed and skipped.
# A suite that fails does not stop the others, and fails make check.
# CHECK_JOBS=1 runs them one after the other.
CHECK_JOBS ?= 2
# The suites that run one at a time: bench.bats and pin_test.bats each
# compare the whole machine's docdex-bench.* memory cgroups before and
# after a test, which the other's runs would change.
CHECK_SERIAL = bench.bats pin_test.bats
CHECK_SUITES = $(sort $(wildcard tests/*.bats))
# make for tests/library.bats, named through a variable of our own: a
# recipe line that names $(MAKE) itself is run even by make -n.
CHECK_MAKE = $(MAKE)
check: all $(UNIT_BIN) $(FAKE_CUDART) $(REPLAY_BIN) $(POKE) $(FAIL_FORK) $(if $(PY_CHECK),python)
	@$(TEST_DOCDEX) DX_SYNTH=$(abspath $(SYNTH)) DX_POKE=$(abspath $(POKE)) DX_LIBSO=$(abspath $(LIBDX_SO)) \
	    DOCDEX_FAKE_CUDART=$(abspath $(FAKE_CUDART)) DX_FAIL_FORK=$(abspath $(FAIL_FORK)) \
	    DX_MAKE="$(CHECK_MAKE)" DX_BUILD_DIR=$(B) DX_CC="$(CC)" DX_CFLAGS="$(CFLAGS)" DX_LDFLAGS="$(LDFLAGS)" \
	    tests/run-suites.sh -j $(CHECK_JOBS) -s '$(CHECK_SERIAL)' -t $(B)/check-times \
	    -c unit '$(UNIT_RUN)' -c replay '$(REPLAY_RUN)' $(if $(PY_CHECK),-c python '$(PY_RUN)') \
	    $(CHECK_SUITES) \
	    $(if $(ZLIB_CHECK),$(foreach t,$(CODEC_TESTS),-c '$(t), zlib codec' 'DOCDEX_CODEC=zlib bats --tap $(t)'))

# The readers' tests, run a second time with zlib serving where the build
# has libdeflate (lib/codec.h); in the plain build only, as the Python
# tests: zlib's path is the one the sanitizer builds tested before
# libdeflate came, and its replays run under them all.
CODEC_TESTS = tests/gzip.bats tests/hostile.bats tests/access.bats
ZLIB_CHECK = $(and $(CODEC_LIBS),$(filter build,$(B)))

# A build without libdeflate (CODECS=zlib, in build/zlib), and the readers'
# tests on it: the build that machines without libdeflate get.
check-zlib:
	$(MAKE) B=build/zlib CODECS=zlib all build/zlib/ddx-poke
	@DOCDEX=$(abspath build/zlib/docdex) DX_SYNTH=$(abspath build/zlib/dx-synth) \
	    DX_POKE=$(abspath build/zlib/ddx-poke) tests/run-suites.sh -j $(CHECK_JOBS) \
	    -t build/zlib/check-times $(CODEC_TESTS) tests/cli.bats

FUZZ_TIME ?= 60
FUZZ_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
fuzz:
	$(MAKE) B=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link" \
	    LDFLAGS="$(FUZZ_FLAGS)" fuzz-run

$(B)/tests/fuzz/bin/%: $(B)/tests/fuzz/fuzz_%.o $(FUZZ_COMMON) $(LIBDXB) $(LIBDX)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $(filter-out $(LIBDXB) $(LIBDX),$^) $(LIBDXB) $(LIBDX) $(LDLIBS)

# What a run learns is kept in $(B)/corpus/NAME; a failing input is
# written to $(B)/crash-NAME-*, to be kept in tests/fuzz/regress/NAME.
fuzz-run: $(FUZZ_NAMES:%=$(B)/tests/fuzz/bin/%)
	@for n in $(FUZZ_NAMES); do echo "fuzz: $$n, $(FUZZ_TIME) s"; mkdir -p $(B)/corpus/$$n; \
	    $(B)/tests/fuzz/bin/$$n -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=$(B)/crash-$$n- $(B)/corpus/$$n \
	    $$(for d in tests/fuzz/seeds/$$n tests/fuzz/regress/$$n; do [ -d $$d ] && echo $$d; done) \
	    || exit 1; done

# Sanitizer errors exit with their own status so that a test expecting a
# plain failure (1) cannot mistake one for it.
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan:
	ASAN_OPTIONS=exitcode=86:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:exitcode=87 \
	$(MAKE) B=build/asan CFLAGS="$(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)" check

# The corpus is read ahead by a second thread: ThreadSanitizer watches it.
TSAN_FLAGS = -O1 -g -fsanitize=thread
tsan:
	TSAN_OPTIONS=exitcode=88:halt_on_error=1 \
	$(MAKE) B=build/tsan CFLAGS="$(TSAN_FLAGS)" LDFLAGS="$(TSAN_FLAGS)" check

# Memcheck (tests/valgrind.sh) on a plain build of its own: an invalid read
# or write, an uninitialised value or a leak makes a process exit 89.  What
# valgrind says of each process goes to a log in build/valgrind/logs, named
# after the test: those that are not empty are shown at the end and fail
# the run, even where a test ignored the status; then the Python
# package's tests (python-valgrind, below).  About 15 minutes, and 9 for
# the Python tests.
VG_LOGS = build/valgrind/logs
valgrind:
	rm -rf $(VG_LOGS)
	mkdir -p $(VG_LOGS)
	DX_VALGRIND_LOGS=$(abspath $(VG_LOGS)) $(MAKE) B=build/valgrind CFLAGS="-O1 -g" \
	    RUNNER=$(abspath tests/valgrind.sh) check; st=$$?; \
	    find $(VG_LOGS) -name '*.log' -size 0 -delete; \
	    for f in $$(find $(VG_LOGS) -name '*.log' | sort); do \
	        echo "valgrind: $$f"; head -n 60 "$$f"; st=1; done; \
	    $(MAKE) python-valgrind || st=1; \
	    exit $$st

# The Python package's tests with the interpreter under memcheck: the
# extension's reads and writes (PYTHONMALLOC=malloc, so that memcheck sees
# the interpreter's objects as blocks of their own).  Leaks are not looked
# for: the interpreter keeps what it holds at exit (test_processes.py's loop
# of a million calls checks the extension's).  DataLoader workers forked
# are checked too; spawned ones, and the docdex commands the tests run,
# are not.  What memcheck reports in torch's libraries and in ld.so is
# suppressed (tests/valgrind-python.supp).  Run by make valgrind.
python-valgrind: python $(DOCDEX)
	DOCDEX=$(abspath $(DOCDEX)) PYTHONMALLOC=malloc valgrind --quiet --error-exitcode=89 \
	    --suppressions=tests/valgrind-python.supp --leak-check=no --trace-children=no --vgdb=no \
	    $(PYTHON) -m pytest -q -p no:cacheprovider python/tests

# The Python package: docdex._docdex links lib/libdocdex.a statically.
# Debian's interpreter by default, whose python3-dev and python3-setuptools
# build it without the network.
PYTHON ?= /usr/bin/python3
python: $(LIBDX)
	cd python && $(PYTHON) setup.py -q build_ext --inplace

# The tests compare with what docdex get prints.
python-check: python $(DOCDEX)
	DOCDEX=$(abspath $(DOCDEX)) $(PYTHON) -m pytest -q python/tests

# The study (bench/study): torch and Python's docdex package needed.
STUDY_DIR ?= build/study
STUDY_SIZE ?= 1G
STUDY_CAP ?= 18G
STUDY_LIMIT ?= 3G
STUDY_ARGS = --size $(STUDY_SIZE) --workdir $(STUDY_DIR) --docdex $(abspath $(DOCDEX)) \
             --synth $(abspath $(SYNTH))
study: all python
	$(PYTHON) bench/study/ddp_study.py $(STUDY_ARGS) --ranks 1,2,4 --workers 2 --seconds 40 --interval 2 \
	    $(if $(STUDY_CAP),--mem-limit $(STUDY_CAP)) \
	    --json $(STUDY_DIR)/study.json --svg $(STUDY_DIR)/study.svg
	$(if $(STUDY_LIMIT),$(PYTHON) bench/study/ddp_study.py $(STUDY_ARGS) --ranks 2 --workers 2 --interval 2 \
	    --seconds 40 --mem-limit $(STUDY_LIMIT) --title "docdex study: 2 ranks under a memory limit of $(STUDY_LIMIT)" \
	    --json $(STUDY_DIR)/study-limited.json --svg $(STUDY_DIR)/study-limited.svg)

bench-python: all python
	$(PYTHON) bench/study/worker_memory.py $(STUDY_ARGS) --workers 1,2,4,8 \
	    $(if $(STUDY_CAP),--mem-limit $(STUDY_CAP)) --json $(STUDY_DIR)/worker_memory.json
	$(PYTHON) python/bench/corpus_speed.py --corpus $(STUDY_DIR)/synth-$(STUDY_SIZE)/corpus.tsv \
	    --json $(STUDY_DIR)/corpus_speed.json

demo: all
	sh tests/demo.sh $(abspath $(DOCDEX)) $(abspath $(SYNTH))

# Real sizes: SCALE_DIR (kept between runs: the corpora are generated once,
# about 4 minutes for 12G), SCALE_SIZES, SCALE_KINDS; SCALE_LIMIT, the memory
# cgroup of the limited run.  Not part of make check.
SCALE_DIR ?= build/scale
SCALE_SIZES ?= 1G 3G 12G
SCALE_KINDS ?= passages documents
SCALE_LIMIT ?= 1G
bench-scale: all
	LIMIT=$(SCALE_LIMIT) bash bench/scale.sh $(abspath $(DOCDEX)) $(abspath $(SYNTH)) $(SCALE_DIR) "$(SCALE_SIZES)" "$(SCALE_KINDS)"

bench: all
	python3 tests/bench/bench.py --docdex $(abspath $(DOCDEX)) --synth $(abspath $(SYNTH))

# The core library: libdocdex.so.VERSION, with the soname's link (.so.MAJOR) and
# the link a build links to (.so), the static library, docdex.h, and
# docdex.pc for pkg-config, whose prefix is PREFIX.
# docdex.pc is written as it is installed, for the PREFIX of this install.
LIBDX_REAL = libdocdex.so.$(VERSION)

install: $(DOCDEX) $(LIBDX) $(LIBDX_SO)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
	    $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(DOCDEX) $(DESTDIR)$(BINDIR)/docdex
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(wildcard man/*.5) $(DESTDIR)$(MANDIR)/man5
	install -m 644 completions/docdex.bash $(DESTDIR)$(BASHCOMPDIR)/docdex
	install -m 644 completions/_docdex $(DESTDIR)$(ZSHCOMPDIR)/_docdex
	install -m 644 completions/docdex.fish $(DESTDIR)$(FISHCOMPDIR)/docdex.fish
	install -m 755 $(LIBDX_SO) $(DESTDIR)$(LIBDIR)/$(LIBDX_REAL)
	ln -sf $(LIBDX_REAL) $(DESTDIR)$(LIBDIR)/libdocdex.so.$(SOVERSION)
	ln -sf libdocdex.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libdocdex.so
	install -m 644 $(LIBDX) $(DESTDIR)$(LIBDIR)/libdocdex.a
	install -m 644 lib/docdex.h $(DESTDIR)$(INCLUDEDIR)/docdex.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's| @CODEC_LIBS@|$(if $(CODEC_LIBS), $(CODEC_LIBS))|' \
	    lib/docdex.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/docdex.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/docdex.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/docdex $(DESTDIR)$(BASHCOMPDIR)/docdex \
	    $(DESTDIR)$(ZSHCOMPDIR)/_docdex $(DESTDIR)$(FISHCOMPDIR)/docdex.fish
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard man/*.1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(wildcard man/*.5)))
	rm -f $(DESTDIR)$(LIBDIR)/$(LIBDX_REAL) $(DESTDIR)$(LIBDIR)/libdocdex.so.$(SOVERSION) \
	    $(DESTDIR)$(LIBDIR)/libdocdex.so $(DESTDIR)$(LIBDIR)/libdocdex.a \
	    $(DESTDIR)$(INCLUDEDIR)/docdex.h $(DESTDIR)$(PKGCONFIGDIR)/docdex.pc

clean:
	rm -rf build docdex lib/libdocdex.a lib/libdocdex.so* bench/libdxbench.a tests/dx-synth \
	    tests/ddx-poke python/build python/docdex/_docdex*.so
	rm -rf bench/study/__pycache__

.PHONY: all unit replay check check-zlib fuzz fuzz-run asan tsan valgrind demo bench install uninstall clean \
        python python-check python-valgrind study bench-python bench-scale FORCE
.SUFFIXES:
.SECONDARY:
