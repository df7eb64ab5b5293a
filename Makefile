# hangwatch build entry points. `make demo` and `make test` are the README's
# Quick start; both install missing system packages and build what they need.
#
# The preload agent is built here with cc rather than by SwiftPM: SwiftPM
# links the Swift runtime into every shared library it makes, and the agent
# must load into any program (a plain C one included) without it.

CONFIG      ?= release
# SwiftPM's own output directory (.build/<triple>/<config>; .build/<config> is
# its symlink, made by the first build). The agent goes there too: made first
# as a plain directory, .build/<config> would keep SwiftPM's symlink away.
BUILD_DIR   := $(or $(shell swift build -c $(CONFIG) --show-bin-path 2>/dev/null),.build/$(CONFIG))
AGENT       := $(BUILD_DIR)/libhangwatch-agent.so
AGENT_SRC   := $(wildcard CSupport/os/*.c) $(wildcard CSupport/engine/*.c) $(wildcard CSupport/agent/*.c)
AGENT_HDR   := $(wildcard CSupport/os/include/*.h CSupport/engine/*.h CSupport/engine/include/*.h CSupport/agent/*.h)
CC          ?= cc
AGENT_FLAGS := -std=gnu11 -O2 -g -fPIC -shared -D_GNU_SOURCE -fno-omit-frame-pointer \
               -funwind-tables -fvisibility=hidden -flto -Wall -Wextra -ICSupport/os/include -ICSupport/engine/include \
               -Wl,--build-id -Wl,-z,nodelete
APT_PACKAGES := libunwind-dev libelf-dev zlib1g-dev libc6-dbg

# The same agent built with AddressSanitizer and UndefinedBehaviorSanitizer, by
# the Swift toolchain's clang (it ships their runtimes), for `make test-sanitized`.
# No LTO (clang's needs lld); UB aborts instead of printing and going on. The
# ASan runtime is not linked in: a program gets it preloaded before the agent
# (HANGWATCH_PRELOAD_BEFORE=$$(make -s sanitizer-runtime)), as ASan must come first.
SAN_CC      ?= $(dir $(shell readlink -f "$$(command -v swift)"))clang
SAN_DIR     := .build/sanitized
SAN_AGENT   := $(SAN_DIR)/libhangwatch-agent.so
SAN_FLAGS   := $(filter-out -O2 -flto,$(AGENT_FLAGS)) -O1 \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined

.PHONY: all deps testdeps pydeps build agent agent-sanitized sanitizer-runtime demo test test-sanitized bench docs clean \
        installed-build install uninstall deb debdeps test-install

all: build

# Install the Debian packages the build needs, only when one is missing.
deps:
	@Scripts/ensure-apt-packages.sh $(APT_PACKAGES)

# The HTML report test loads the page in a headless browser, the main-queue
# probe tests count the signals the program receives with strace, and the zsh
# completion is tried in zsh; only the tests need them.
TEST_APT_PACKAGES := chromium strace zsh
testdeps:
	@Scripts/ensure-apt-packages.sh $(TEST_APT_PACKAGES)

# Test-side checkers of the export formats (speedscope schema, pprof protobuf,
# HTML screenshots); installed only when missing.
PIP_PACKAGES := jsonschema protobuf grpcio-tools pillow opentelemetry-proto
pydeps:
	@python3 -c "import jsonschema, google.protobuf, grpc_tools, PIL, opentelemetry.proto" 2>/dev/null || \
	  python3 -m pip install -q --disable-pip-version-check $(PIP_PACKAGES)

agent: $(AGENT)

$(AGENT): $(AGENT_SRC) $(AGENT_HDR) | deps
	@mkdir -p $(BUILD_DIR)
	$(CC) $(AGENT_FLAGS) -o $@ $(AGENT_SRC) -ldl -lpthread

agent-sanitized: $(SAN_AGENT)

$(SAN_AGENT): $(AGENT_SRC) $(AGENT_HDR) Makefile
	@mkdir -p $(SAN_DIR)
	$(SAN_CC) $(SAN_FLAGS) -o $@ $(AGENT_SRC) -ldl -lpthread

# Where the ASan runtime the sanitized agent needs lives (it also holds UBSan's).
sanitizer-runtime:
	@$(SAN_CC) -print-file-name=libclang_rt.asan-$(shell uname -m).so

build: deps
	swift build -c $(CONFIG)
	@$(MAKE) --no-print-directory agent

# The main job: run the bundled RunLoop demo under hangwatch and print its call trees.
demo: build
	$(BUILD_DIR)/hangwatch run -- $(BUILD_DIR)/RunLoopDemo

# Integration tests run real programs and measure durations: one at a time.
# Then the host-safety suites again, against the sanitized agent.
# `swift test` builds every product (the CLI and demos included) with testing
# enabled; a `swift build` before or between would only be undone by it, so
# `test` builds through `swift test` once and runs the sanitized suites on
# that same build (about 4.5 minutes less on a 2-core machine). Last, the
# installed tree and the Debian package are tried away from the tree (test-install).
test: agent pydeps testdeps
	python3 Scripts/check-stage-imports.py >/dev/null
	swift test -c $(CONFIG) --no-parallel
	CONFIG=$(CONFIG) Scripts/test-sanitized.sh
	@$(MAKE) --no-print-directory test-install

test-sanitized: build pydeps testdeps
	CONFIG=$(CONFIG) Scripts/test-sanitized.sh

# Installing: `make install PREFIX=/usr/local` (DESTDIR for staging), `make
# uninstall`, `make deb`. The installed hangwatch has the Swift runtime linked
# in statically (--static-swift-stdlib): its only run-time needs are the
# system's libelf, libunwind, zlib and libstdc++, and no rpath reaches into
# the toolchain or this tree. That build replaces .build/release/hangwatch
# (same behaviour; only the hangwatch module is rebuilt and relinked).
PREFIX      ?= /usr/local
DESTDIR     ?=
RELEASE_DIR  = $(shell swift build -c release --show-bin-path)

installed-build: deps
	swift build -c release --static-swift-stdlib --product hangwatch

install: installed-build
	Scripts/install.sh "$(DESTDIR)$(PREFIX)" "$(RELEASE_DIR)"

uninstall:
	Scripts/install.sh --uninstall "$(DESTDIR)$(PREFIX)"

# dpkg-shlibdeps, for the package's Depends.
debdeps:
	@Scripts/ensure-apt-packages.sh dpkg-dev

deb: installed-build debdeps
	Scripts/make-deb.sh "$(RELEASE_DIR)" .build

# Install into a scratch prefix and from the package, then run a program with
# each copy away from this tree (part of `make test`).
test-install: installed-build debdeps
	Scripts/test-install.sh "$(RELEASE_DIR)"

bench: build
	./Bench/run.sh
	./Bench/library_costs.sh
	./Bench/pool_costs.sh
	./Bench/job_path.sh

# API docs of the library and the report model, with the toolchain's docc: .build/docs/.
docs:
	Scripts/make-docs.sh

clean:
	rm -rf .build
