# hangwatch build entry points. `make demo` and `make test` are the README's
# Quick start; both install missing system packages and build what they need.
#
# The preload agent is built here with cc rather than by SwiftPM: SwiftPM
# links the Swift runtime into every shared library it makes, and the agent
# must load into any program (a plain C one included) without it.

CONFIG      ?= release
BUILD_DIR   := .build/$(CONFIG)
AGENT       := $(BUILD_DIR)/libhangwatch-agent.so
AGENT_SRC   := $(wildcard CSupport/engine/*.c) $(wildcard CSupport/agent/*.c)
AGENT_HDR   := $(wildcard CSupport/engine/*.h CSupport/engine/include/*.h CSupport/agent/*.h)
CC          ?= cc
AGENT_FLAGS := -std=gnu11 -O2 -g -fPIC -shared -D_GNU_SOURCE -fno-omit-frame-pointer \
               -funwind-tables -fvisibility=hidden -flto -Wall -Wextra -ICSupport/engine/include \
               -Wl,--build-id -Wl,-z,nodelete
APT_PACKAGES := libunwind-dev libelf-dev zlib1g-dev libc6-dbg

.PHONY: all deps testdeps pydeps build agent demo test bench clean

all: build

# Install the Debian packages the build needs, only when one is missing.
deps:
	@Scripts/ensure-apt-packages.sh $(APT_PACKAGES)

# The HTML report test loads the page in a headless browser; only the tests need it.
TEST_APT_PACKAGES := chromium
testdeps:
	@Scripts/ensure-apt-packages.sh $(TEST_APT_PACKAGES)

# Test-side checkers of the export formats (speedscope schema, pprof protobuf,
# HTML screenshots); installed only when missing.
PIP_PACKAGES := jsonschema protobuf grpcio-tools pillow
pydeps:
	@python3 -c "import jsonschema, google.protobuf, grpc_tools, PIL" 2>/dev/null || \
	  python3 -m pip install -q --disable-pip-version-check $(PIP_PACKAGES)

agent: $(AGENT)

$(AGENT): $(AGENT_SRC) $(AGENT_HDR) | deps
	@mkdir -p $(BUILD_DIR)
	$(CC) $(AGENT_FLAGS) -o $@ $(AGENT_SRC) -ldl -lpthread

build: deps
	swift build -c $(CONFIG)
	@$(MAKE) --no-print-directory agent

# The main job: run the bundled RunLoop demo under hangwatch and print its call trees.
demo: build
	$(BUILD_DIR)/hangwatch run -- $(BUILD_DIR)/RunLoopDemo

# Integration tests run real programs and measure durations: one at a time.
test: build pydeps testdeps
	swift test -c $(CONFIG) --no-parallel

bench: build
	./Bench/run.sh
	./Bench/library_costs.sh

clean:
	rm -rf .build
