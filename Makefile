# Proust — top-level entry points. `make run` and `make test` work on a fresh
# Debian machine: they install missing packages, configure, build, install
# into build/install, then run the demo or the tests.
BUILD      ?= build
PREFIX     := $(CURDIR)/$(BUILD)/install
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc)

.PHONY: all deps configure build build-release run test test-ofi test-sanitize test-tsan test-tsan-stress test-mpi4py soak bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS) > /dev/null

build: configure
	cmake --build $(BUILD) -j$(JOBS)
	cmake --install $(BUILD) > /dev/null
	@echo "installed into $(PREFIX)"

run: build
	@bash scripts/demo.sh $(PREFIX)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 300 -LE soak $(CTEST_ARGS)

# The ofi rail's tests alone (libfabric; part of `make test` too).
test-ofi: build
	cd $(BUILD) && ctest --output-on-failure -j1 --timeout 300 -L ofi $(CTEST_ARGS)

# The long stress run: 8 ranks x 4 threads, 102 400 checked messages on
# each of shm and tcp (tests/mpi/stress.cmake); PROUST_STRESS_SEED replays.
soak: build
	cd $(BUILD) && ctest --output-on-failure -L soak

# The same tests built with AddressSanitizer + UndefinedBehaviorSanitizer.
test-sanitize:
	$(MAKE) test BUILD=build-asan CMAKE_ARGS="-DPROUST_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug"

# mpi4py from PyPI built with Proust's mpicc, smoke-tested under mpiexec.
test-mpi4py: build
	@bash scripts/mpi4py-smoke.sh $(PREFIX)

# An optimised build (-O3): gcc finds other warnings there (-Werror).
build-release:
	$(MAKE) build BUILD=build-release CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release"

test-tsan:
	$(MAKE) test BUILD=build-tsan CMAKE_ARGS="-DPROUST_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug"

# The stress family (label stress) under ThreadSanitizer, building only
# what it runs: what CI does.
test-tsan-stress: deps
	cmake -S . -B build-tsan -DCMAKE_INSTALL_PREFIX=$(CURDIR)/build-tsan/install \
	  -DPROUST_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug > /dev/null
	cmake --build build-tsan -j$(JOBS) --target proustrun mpi_stress_traffic
	cd build-tsan && ctest --output-on-failure -j$(JOBS) --timeout 300 -L stress

bench: build
	@bash scripts/install-deps.sh --bench
	@bash bench/run.sh $(PREFIX)

clean:
	rm -rf build build-asan build-tsan build-release
