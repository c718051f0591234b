# glcompute: plain Makefile. Objects under build/ (build/san-* with SANITIZE).
#   make                 library (static, shared, pkg-config) and tools
#   make check           cmocka tests (installs missing Debian packages as root)
#   make demo            the main job on the default device
#   make bench           benchmarks
#   make install PREFIX=/usr/local
#   make SANITIZE=address,undefined check
#   make WERROR=1        warnings are errors (CI)

CC      ?= cc
CXX     ?= c++
PREFIX  ?= /usr/local
CFLAGS  ?= -O2 -g
SANITIZE ?=
WERROR  ?=
BUILD   ?= build$(if $(SANITIZE),/san-$(subst $(comma),-,$(SANITIZE)))
comma   := ,

VERSION := 0.1.0
SOMAJOR := 0

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes $(if $(WERROR),-Werror)
SANFL   := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all)
# Only headers are taken from these: EGL, GLES and GBM are loaded at run time
# with dlopen, so the library loads (and reports why) on machines without them.
DEPFL   := $(shell pkg-config --cflags egl glesv2 gbm 2>/dev/null)
CMOCKA_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS   := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

# src/core is GL-free (graph, compiler, planners, op rules): built without
# src/gl or the GL headers on its include path, so a GL include there fails
# to compile. src/gl: device, buffers, kernels, encoder, sessions, plans.
CORE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) $(SANFL) \
              -fPIC -fvisibility=hidden -Iinclude -Isrc/core -I$(BUILD)/gen
ALL_CFLAGS = $(CORE_CFLAGS) -Isrc/gl $(DEPFL)
LIBS    := -ldl -lm -lpthread
LDFLAGS_ALL = $(SANFL) $(LDFLAGS)

LIB_SRC := $(wildcard src/core/*.c src/gl/*.c)
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/glsl_table.o
# embedded: common.glsl and one kernel per .comp; the family includes
# (glsl/*.glsl) and the generated enums.glsl are inlined where included
GLSL    := glsl/common.glsl $(sort $(wildcard glsl/*.comp))
GLSL_INC := $(filter-out glsl/common.glsl,$(wildcard glsl/*.glsl)) $(BUILD)/gen/enums.glsl \
            $(BUILD)/gen/kparams.glsl

TEST_SRC := $(filter-out tests/test_header.c,$(wildcard tests/test_*.c))
# Plain C references and the op test harness, linked into every test.
REF_OBJ  := $(patsubst tests/ref/%.c,$(BUILD)/tests/ref/%.o,$(wildcard tests/ref/*.c))
TESTS    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC)) \
            $(BUILD)/tests/test_header_c11 $(BUILD)/tests/test_header_c99 \
            $(BUILD)/tests/test_header_cxx
TOOLS    := $(BUILD)/glc-info $(BUILD)/glc-plan-dump $(BUILD)/examples/scale $(BUILD)/examples/hello \
            $(BUILD)/examples/embed $(BUILD)/examples/transformer $(BUILD)/examples/generate \
            $(BUILD)/gpu_race \
            $(BUILD)/glc-bench \
            $(BUILD)/glc-bench-ops $(BUILD)/bench_hazard

STATIC  := $(BUILD)/libglcompute.a
SHARED  := $(BUILD)/libglcompute.so.$(VERSION)

.PHONY: all check run-tests check-softpipe run-softpipe demo run-demo bench run-bench install clean deps FORCE
all: $(STATIC) $(SHARED) $(BUILD)/glcompute.pc $(TOOLS)

FORCE:

deps:
	@bash ci/deps.sh

$(BUILD)/obj/core/%.o: src/core/%.c $(wildcard src/core/*.h) include/glcompute.h | $(BUILD)/gen/glsl_table.c
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -c $< -o $@

$(BUILD)/obj/gl/%.o: src/gl/%.c $(wildcard src/core/*.h src/gl/*.h) include/glcompute.h | $(BUILD)/gen/glsl_table.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/tools/embed-glsl: src/tools/embed_glsl.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O1 $< -o $@

# enums.glsl: the C enum values kernels compare; kparams.glsl: the kernels'
# parameter slots (src/core/kparams.h); printed by a host tool
$(BUILD)/tools/glsl-enums: src/tools/glsl_enums.c include/glcompute.h src/core/ops.h src/core/kparams.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O1 -Iinclude -Isrc/core $< -o $@

$(BUILD)/gen/enums.glsl: $(BUILD)/tools/glsl-enums
	@mkdir -p $(dir $@)
	$(BUILD)/tools/glsl-enums > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/kparams.glsl: $(BUILD)/tools/glsl-enums
	@mkdir -p $(dir $@)
	$(BUILD)/tools/glsl-enums --kparams > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/glsl_table.c: $(BUILD)/tools/embed-glsl $(GLSL) $(GLSL_INC)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed-glsl -I $(BUILD)/gen $(GLSL) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/glsl_table.o: $(BUILD)/gen/glsl_table.c src/gl/kernel.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHARED): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libglcompute.so.$(SOMAJOR) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)
	ln -sf libglcompute.so.$(VERSION) $(BUILD)/libglcompute.so.$(SOMAJOR)
	ln -sf libglcompute.so.$(SOMAJOR) $(BUILD)/libglcompute.so

# Rewritten every run, so `make install PREFIX=...` records the prefix it installs to.
$(BUILD)/glcompute.pc: FORCE
	@mkdir -p $(BUILD)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: glcompute' 'Description: ML compute graphs on OpenGL ES 3.1 compute shaders' \
	  'Version: $(VERSION)' 'Libs: -L$${libdir} -lglcompute' 'Libs.private: $(LIBS)' \
	  'Cflags: -I$${includedir}' > $@

$(BUILD)/glc-info: src/tools/glc_info.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/glc-plan-dump: src/tools/glc_plan_dump.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/glc-bench: bench/glc_bench.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/glc-bench-ops: bench/bench_ops.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/bench_hazard: bench/bench_hazard.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/gpu_race: tests/gpu_race.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

# The adoption test plays a host application: it calls EGL and GLES itself.
$(BUILD)/tests/test_adopt: EXTRA_LIBS = $(shell pkg-config --libs egl glesv2 2>/dev/null || echo -lEGL -lGLESv2)

# The thread test starts threads of its own.
$(BUILD)/tests/test_threads: EXTRA_LIBS = -lpthread

# The embedding example plays a GL application too.
$(BUILD)/examples/embed: EXTRA_LIBS = $(shell pkg-config --libs egl glesv2 2>/dev/null || echo -lEGL -lGLESv2)

# The main job: the decoder (examples/llama.c) and its C reference.
$(BUILD)/examples/transformer: examples/transformer.c examples/llama.c examples/llama_ref.c examples/llama_gguf.c examples/llama.h examples/cli.c examples/cli.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iexamples examples/transformer.c examples/cli.c examples/llama.c examples/llama_ref.c examples/llama_gguf.c -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

# Text from a GGUF model, for people (the reference for --verify).
$(BUILD)/examples/generate: examples/generate.c examples/llama.c examples/llama_ref.c examples/llama_gguf.c examples/llama.h examples/cli.c examples/cli.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iexamples examples/generate.c examples/cli.c examples/llama.c examples/llama_ref.c examples/llama_gguf.c -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(EXTRA_LIBS) $(LIBS)

$(BUILD)/tests/ref/%.o: tests/ref/%.c $(wildcard tests/ref/*.h) include/glcompute.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CMOCKA_CFLAGS) -Itests/ref -c $< -o $@

# Tests link the static library, so they can reach internal (glc__) symbols.
$(BUILD)/tests/%: tests/%.c tests/testutil.h tests/fakegl.h tests/forced_mv.h $(REF_OBJ) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CMOCKA_CFLAGS) -Itests/ref $< -o $@ $(REF_OBJ) $(STATIC) $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(EXTRA_LIBS) $(LIBS)

# The strict-GLSL check compiles the decoder's plans (examples/llama.c).
$(BUILD)/tests/test_glsl_strict: tests/test_glsl_strict.c examples/llama.c examples/llama.h tests/testutil.h tests/fakegl.h $(REF_OBJ) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CMOCKA_CFLAGS) -Itests/ref -Iexamples $< examples/llama.c -o $@ $(REF_OBJ) $(STATIC) $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(EXTRA_LIBS) $(LIBS)

# The decoder's GGUF path, against its C reference (examples/llama*.c).
$(BUILD)/tests/test_llama_gguf: tests/test_llama_gguf.c examples/llama.c examples/llama_ref.c examples/llama_gguf.c examples/llama.h tests/testutil.h $(REF_OBJ) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CMOCKA_CFLAGS) -Itests/ref -Iexamples $< examples/llama.c examples/llama_ref.c examples/llama_gguf.c -o $@ $(REF_OBJ) $(STATIC) $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(EXTRA_LIBS) $(LIBS)

# The public header, compiled three ways.
# (the C11 build links the shared library: it checks the exported symbols)
$(BUILD)/tests/test_header_c11: tests/test_header.c include/glcompute.h $(SHARED)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -Werror -pedantic $(SANFL) -Iinclude $< -o $@ -L$(BUILD) -lglcompute -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_ALL) $(LIBS)
$(BUILD)/tests/test_header_c99: tests/test_header.c include/glcompute.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 $(WARN) -Werror -pedantic $(SANFL) -Iinclude $< -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)
$(BUILD)/tests/test_header_cxx: tests/test_header.c include/glcompute.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CXX) -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic $(SANFL) -Iinclude $< -x none -o $@ $(STATIC) $(LDFLAGS_ALL) $(LIBS)

# deps first, on its own: under -j the compile rules must not race the
# package install (and CMOCKA_CFLAGS is read when the sub-make starts).
check: deps
	@$(MAKE) --no-print-directory run-tests

# Every plan the suite builds is run once more with GLC_VALIDATE=1: the
# oracle checks each emitted stream for a missing barrier.
VALIDATED := $(addprefix GLC_VALIDATE=1:$(BUILD)/,tests/test_plan tests/test_plan_exec tests/test_fuse \
             tests/test_fuse_random tests/test_fuse_res tests/test_schedule \
             examples/hello examples/transformer)

# The plan and fusion tests once more on the ES 3.1 minimum limits
# (GLC_LIMITS=min: 4 storage blocks, a wide binding alignment), where
# some fusions cannot fire and buffer offsets must be 256-aligned: the
# expectations follow the device.
LIMITED := $(addprefix GLC_LIMITS=min:$(BUILD)/,tests/test_plan tests/test_plan_exec tests/test_fuse \
           tests/test_fuse_random tests/test_fuse_res tests/test_fuse_glu tests/test_fuse_rope \
           tests/test_device tests/test_adopt tests/test_op_quant tests/test_op_reduce \
           tests/test_schedule)

# Test binaries run this many at a time (independent: each its own temp
# files); their outputs print in order.
TEST_JOBS ?= 2

# tests/cli.sh: the examples and tools with good and bad arguments.
run-tests: all $(TESTS)
	@SANITIZE=$(SANITIZE) TEST_JOBS=$(TEST_JOBS) bash ci/run_tests.sh $(TESTS) $(BUILD)/examples/scale $(BUILD)/examples/hello \
	    $(BUILD)/examples/transformer \
	    $(BUILD)/examples/embed $(VALIDATED) $(LIMITED) GLC_BUILD=$(BUILD):tests/cli.sh

# A second Mesa driver: softpipe, an interpreter (about 30x slower than
# llvmpipe) with another shader backend, exactly OpenGL ES 3.1 and a 4-byte
# SSBO offset alignment. Bounded (about 25 s on 2 cores): every op family
# at its smallest case, the demo, and the plan, fusion and binding tests
# that run in seconds there.
SOFTPIPE := GALLIUM_DRIVER=softpipe:GLC_OPS_SMALLEST=1:$(BUILD)/tests/test_ops \
            $(addprefix GALLIUM_DRIVER=softpipe:$(BUILD)/,examples/transformer tests/test_adopt \
            tests/test_plan tests/test_plan_exec tests/test_plan_bind tests/test_session \
            tests/test_fuse tests/test_fuse_rope tests/test_split_param tests/test_q_prefill \
            tests/test_op_elementwise tests/test_op_rope)
check-softpipe: deps
	@$(MAKE) --no-print-directory run-softpipe

run-softpipe: all $(TESTS)
	@TEST_JOBS=$(TEST_JOBS) bash ci/run_tests.sh $(SOFTPIPE)

demo: deps
	@$(MAKE) --no-print-directory run-demo

run-demo: all
	$(BUILD)/examples/transformer --config tiny

# Benchmarks print markdown; bench/RESULTS.md keeps the runs worth keeping.
bench:
	@bash ci/deps.sh --bench
	@$(MAKE) --no-print-directory run-bench

run-bench: all
	GLC_COMMIT=$$(git rev-parse --short HEAD 2>/dev/null) $(BUILD)/glc-bench
	$(BUILD)/glc-bench-ops
	$(BUILD)/bench_hazard
	$(BUILD)/examples/transformer --config tiny --decode 64

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/glcompute.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libglcompute.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libglcompute.so.$(SOMAJOR)
	ln -sf libglcompute.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libglcompute.so
	install -m 644 $(BUILD)/glcompute.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 755 $(BUILD)/glc-info $(DESTDIR)$(PREFIX)/bin/

# Fuzzing (clang only): tests/fuzz_graph.c drives the graph builders and the
# compiler with libFuzzer, under ASan and UBSan. The library is built again
# in $(FUZZ_BUILD) with coverage; the seed corpus is written by the harness.
#   make fuzz                          build $(FUZZ_BUILD)/fuzz_graph
#   make fuzz-run FUZZ_SECONDS=60      run it that long; any crash, hang
#                                      (-timeout=10 s) or report fails
FUZZ_BUILD   ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN     := fuzzer-no-link,address,undefined
# rss: ASan with llvmpipe starts near 0.9 GB; one input stays far below
# malloc_limit (tensors are capped at 4 MiB by the harness).
FUZZ_FLAGS   ?= -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2560 \
                -malloc_limit_mb=512 -max_len=512 -print_final_stats=1
.PHONY: fuzz fuzz-run fuzz-gguf-run
fuzz:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang SANITIZE=$(FUZZ_SAN) \
	  $(FUZZ_BUILD)/fuzz_graph $(FUZZ_BUILD)/fuzz_gguf

$(BUILD)/fuzz_graph: tests/fuzz_graph.c $(STATIC)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< -o $@ $(STATIC) $(LDFLAGS_ALL) -fsanitize=fuzzer $(LIBS)

# The GGUF reader (tests/fuzz_gguf.c): files up to 4 KiB.
$(BUILD)/fuzz_gguf: tests/fuzz_gguf.c $(STATIC)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< -o $@ $(STATIC) $(LDFLAGS_ALL) -fsanitize=fuzzer $(LIBS)

fuzz-gguf-run: fuzz
	@mkdir -p $(FUZZ_BUILD)/gguf-corpus $(FUZZ_BUILD)/gguf-seeds $(FUZZ_BUILD)/artifacts
	$(FUZZ_BUILD)/fuzz_gguf -write_seeds=$(FUZZ_BUILD)/gguf-seeds
	$(FUZZ_BUILD)/fuzz_gguf -max_total_time=$(FUZZ_SECONDS) -timeout=10 -max_len=4096 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/gguf- \
	  $(FUZZ_BUILD)/gguf-corpus $(FUZZ_BUILD)/gguf-seeds

# LP_NUM_THREADS=0: llvmpipe runs dispatches inline (cheaper for tiny
# graphs; no worker threads for the sanitizers to follow).
fuzz-run: fuzz
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/seeds $(FUZZ_BUILD)/artifacts
	$(FUZZ_BUILD)/fuzz_graph -write_seeds=$(FUZZ_BUILD)/seeds
	LP_NUM_THREADS=0 $(FUZZ_BUILD)/fuzz_graph $(FUZZ_FLAGS) \
	  -artifact_prefix=$(FUZZ_BUILD)/artifacts/ $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/seeds

clean:
	rm -rf build

# The reference objects are prerequisites of pattern rules: keep them.
.SECONDARY: $(REF_OBJ)
