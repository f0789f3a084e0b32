# Surveyor. `make run` and `make test` are the two commands; see README.md.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
DEV := bin/dev
# Resolved only when a recipe uses it; builds controller-gen on first use.
CONTROLLER_GEN = $(shell $(DEV) tool controller-gen)
KUTTL_ARGS ?=
TEST_FLAGS ?=
BENCH_FLAGS ?=
BENCH_SCALE_FLAGS ?= -skip-settle -skip-propagation -skip-isolation

.PHONY: all build generate manifests tools run test test-fast test-unit test-race test-integration test-kuttl fuzz verify lint image release bench bench-scale clean help
.PHONY: race unit fuzz-corpus kuttl verify-step lint-step $(addprefix e2e-,$(E2E))

all: build

help: ## Show the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(DEV): $(shell find hack -name '*.go') go.mod go.sum
	$(GO) build -o $@ ./hack/dev

# The controller is linked statically (no cgo), fit for a minimal image; without libc and
# the dynamic loader mapped in, its peak RSS at N=1000 is 1.6 MiB lower (docs/performance.md).
build: $(DEV) ## Build the controller manager into bin/surveyor and the kubectl plugin into bin/kubectl-carto.
	CGO_ENABLED=0 $(GO) build -o bin/surveyor ./cmd/surveyor
	$(GO) build -o bin/kubectl-carto ./cmd/kubectl-carto

tools: $(DEV) ## Build every pinned tool into the cache (once per machine).
	$(DEV) tool

# What generate and manifests run, with the controller-gen binary in $$gen (verify runs them
# in a copy of the tree).
GENERATE = "$$gen" object paths=./pkg/apis/...
MANIFESTS = "$$gen" crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases && \
	"$$gen" rbac:roleName=surveyor-manager paths=./cmd/... paths=./pkg/... paths=./internal/... output:rbac:artifacts:config=config/rbac

generate: $(DEV) ## Generate deepcopy code for the API.
	gen=$(CONTROLLER_GEN); $(GENERATE)

manifests: $(DEV) ## Generate the CRDs and the controller's RBAC.
	gen=$(CONTROLLER_GEN); $(MANIFESTS)

# verify regenerates into a copy of the tree and compares, so that it never rewrites a file
# that the steps running beside it in make test are compiling or applying.
verify: $(DEV) ## Fail when generated code or manifests are stale, code is unformatted or vet complains.
	@copy=$$(mktemp -d); trap 'rm -rf "$$copy"' EXIT; \
	tar -c --exclude=./.git --exclude=./bin --exclude=./.run --exclude=./.test --exclude=./dist . | tar -x -C "$$copy"; \
	gen=$(CONTROLLER_GEN); ( cd "$$copy" && $(GENERATE) && $(MANIFESTS) ) >/dev/null; \
	if ! diff -r pkg/apis "$$copy"/pkg/apis || ! diff -r config "$$copy"/config; then \
		echo "generated code or manifests were stale: run 'make generate manifests' and commit the result"; exit 1; fi
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

lint: $(DEV) ## Lint with golangci-lint (staticcheck, revive, unused and the defaults; .golangci.yml).
	lint=$$($(DEV) tool golangci-lint); "$$lint" run --allow-parallel-runners ./...

run: build ## Start a local cluster, the controller and samples/; watch the Workloads until Ctrl-C.
	$(DEV) run -controller bin/surveyor

# make test runs the gate's steps side by side, TEST_JOBS at a time, each with its output in
# $(TEST_LOG)/STEP.log (printed whole when it fails), and ends with a table of seconds per step.
# The end-to-end suites start a cluster each and mostly wait on it, so they overlap well with
# each other and with the compiling steps; TEST_JOBS=1 runs the steps one after another.
TEST_JOBS ?= 4
TEST_LOG := .test
STEP = $(DEV) step -dir $(TEST_LOG)
# One step per Go end-to-end package in tests/ (kuttl and templates hold no Go tests).
E2E := $(sort $(patsubst tests/%/,%,$(dir $(wildcard tests/*/*_test.go))))
# The longest steps first, so that none starts last and runs alone. One after another, warm
# (2026-12-07): faults 392 s, install 281 (both platforms), rollout 156, integration 60,
# security 43, corpus 33, cli 21, web 17; kuttl 337.
GATE := e2e-faults kuttl e2e-install e2e-rollout race e2e-integration e2e-security e2e-corpus \
	unit verify-step e2e-examples e2e-cli e2e-web lint-step fuzz-corpus
GATE += $(filter-out $(GATE),$(addprefix e2e-,$(E2E)))

# The tools (dev tool builds them side by side) and the controller are built first: were they
# prerequisites inside the parallel make, make would start the steps that need neither, in
# whatever order, while they build, and the longest suites would start last.
test: $(DEV) ## Everything CI runs: verify, lint, unit tests (pkg/ and internal/ under -race), fuzz corpora, the end-to-end suites and kuttl, side by side (TEST_JOBS); ends with seconds per step.
	@rm -rf $(TEST_LOG); mkdir -p $(TEST_LOG)
	$(MAKE) --no-print-directory tools build >/dev/null
	@rc=0; $(MAKE) --no-print-directory -k -j$(TEST_JOBS) E2E_DEPS= KUTTL_DEPS= $(GATE) || rc=$$?; \
	$(DEV) times -dir $(TEST_LOG); exit $$rc

test-fast: verify test-unit ## The edit loop: verify and the unit tests (no cluster, no race detector, no lint).

# The rollout's property tests (pkg/rollout TestInvariants) run ROLLOUT_HISTORIES random histories
# of about ROLLOUT_STEPS steps from a fixed seed in the gate; make fuzz runs more from a random one.
ROLLOUT_HISTORIES ?= 5000
ROLLOUT_STEPS ?= 80
ROLLOUT_ENV = RAPID_SEED=1 RAPID_CHECKS=$(ROLLOUT_HISTORIES) RAPID_STEPS=$(ROLLOUT_STEPS)
UNIT_PKGS := ./pkg/... ./cmd/... ./hack/... ./config/... ./internal/...
# Under the race detector in the gate: every package that runs goroutines of its own.
RACE_PKGS := ./pkg/... ./internal/...
# Packages with go test -fuzz targets; without -fuzz, go test runs their seeds (f.Add and
# testdata/fuzz), which is deterministic: the gate's fuzz-corpus step.
FUZZ_PKGS := $(sort $(dir $(shell grep -l '^func Fuzz' $$(git ls-files '*_test.go' 2>/dev/null || find pkg internal -name '*_test.go'))))

test-unit: ## Unit tests (no cluster), fuzz seed corpora included.
	$(ROLLOUT_ENV) $(GO) test $(TEST_FLAGS) $(UNIT_PKGS)

# Packages whose tests bound what code allocates (runtime.MemStats): the race detector's
# instrumented build allocates more than the one that ships, so they also run without it.
ALLOC_PKGS := $(sort $(dir $(shell grep -l 'ReadMemStats\|AllocsPerRun' $$(git ls-files 'pkg/*_test.go' 'internal/*_test.go' 2>/dev/null || find pkg internal -name '*_test.go'))))

# The gate's unit steps. race covers pkg/ and internal/ instead of their plain run; unit runs
# the rest and, without the race detector, ALLOC_PKGS and pkg/rollout: a pure planner (no
# goroutines) whose property test is several times slower under the race detector, so race
# runs RACE_HISTORIES of its histories and unit all of them. fuzz-corpus runs the fuzz
# targets' seeds once, so the other two skip them.
RACE_HISTORIES ?= 100
race: $(DEV)
	@$(STEP) race -- env $(ROLLOUT_ENV) RAPID_CHECKS=$(RACE_HISTORIES) $(GO) test -race $(TEST_FLAGS) -skip '^Fuzz' $(RACE_PKGS)
unit: $(DEV)
	@$(STEP) unit -- env $(ROLLOUT_ENV) $(GO) test $(TEST_FLAGS) -skip '^Fuzz' $(filter-out $(RACE_PKGS),$(UNIT_PKGS)) $(addprefix ./,$(sort $(ALLOC_PKGS) pkg/rollout/))
fuzz-corpus: $(DEV)
	@$(STEP) fuzz-corpus -- $(GO) test $(TEST_FLAGS) -run '^Fuzz' $(addprefix ./,$(FUZZ_PKGS))

test-race: ## go test -race over pkg/ and internal/ (what the gate runs instead of their plain unit tests).
	$(ROLLOUT_ENV) RAPID_CHECKS=$(RACE_HISTORIES) $(GO) test -race $(TEST_FLAGS) $(RACE_PKGS)

# Each suite starts its own cluster (temporary directory, ports handed out by hack/cluster).
test-integration: tools ## Go end-to-end suites (integration, corpus, faults, security, rollout, install, ...) on a real local cluster, one package at a time.
	$(GO) test $(TEST_FLAGS) -count=1 -p 1 -timeout 45m ./tests/...

# tests/install's TestImage builds the image for these platforms only (empty: all of make
# image's, linux/amd64 and arm64); cross-compiling for arm64 costs minutes on a cold Go cache.
IMAGE_TEST_PLATFORMS ?= linux/amd64
# What a suite step needs built; make test builds it before the steps start.
E2E_DEPS ?= tools
KUTTL_DEPS ?= build tools
$(addprefix e2e-,$(E2E)): e2e-%: $(E2E_DEPS)
	@$(STEP) e2e-$* -- env SURVEYOR_IMAGE_PLATFORMS=$(IMAGE_TEST_PLATFORMS) $(GO) test $(TEST_FLAGS) -count=1 -timeout 45m ./tests/$*

test-kuttl: build tools ## kuttl suites against the local cluster with the controller running.
	$(DEV) kuttl -controller bin/surveyor -- --config tests/kuttl/kuttl-test.yaml $(KUTTL_ARGS)

kuttl: $(KUTTL_DEPS)
	@$(STEP) kuttl -- $(DEV) kuttl -controller bin/surveyor -- --config tests/kuttl/kuttl-test.yaml $(KUTTL_ARGS)

# In the gate, verify and lint are steps like the others.
verify-step: $(DEV)
	@$(STEP) verify -- $(MAKE) --no-print-directory verify
lint-step: $(DEV)
	@$(STEP) lint -- $(MAKE) --no-print-directory lint

# Exploration, outside the gate. A count rather than a duration: a time-boxed fuzz run can end
# in a spurious "context deadline exceeded" on a loaded machine. 10000 inputs take 1-20 s a
# target here.
FUZZ_TIME ?= 10000x
FUZZ_HISTORIES ?= 20000
fuzz: ## Explore: every go test -fuzz target for FUZZ_TIME (inputs, or a duration like 1m) and FUZZ_HISTORIES rollout histories from a random seed; a failing input is written to the package's testdata/fuzz, where make test then runs it: commit it with the fix.
	RAPID_SEED=0 RAPID_CHECKS=$(FUZZ_HISTORIES) RAPID_STEPS=$(ROLLOUT_STEPS) $(GO) test -count=1 ./pkg/rollout -run '^TestInvariants$$'
	@for pkg in $(FUZZ_PKGS); do \
		for target in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$pkg*_test.go | sed 's/^func //'); do \
			echo "fuzz $$pkg $$target ($(FUZZ_TIME))"; \
			$(GO) test ./$$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZ_TIME) || exit 1; \
		done; \
	done

image: $(DEV) ## The controller's image (ko, linux/amd64 and arm64): pushed to KO_DOCKER_REPO when set, else an OCI layout in dist/image.
	$(DEV) image -layout dist/image

release: $(DEV) ## dist/surveyor.yaml: config/default with the image (built as make image builds it) pinned by digest.
	$(DEV) release -layout dist/image -o dist/surveyor.yaml

bench: build ## Benchmark N=1000 Workloads (BENCH_FLAGS, e.g. -n 100 -runs 3); results in bench/results/.
	$(GO) build -o bin/bench ./hack/bench
	bin/bench -controller bin/surveyor $(BENCH_FLAGS)

bench-scale: build ## Time per Workload at N = 100, 1000 and 10000, and its growth (BENCH_SCALE_FLAGS).
	$(GO) build -o bin/bench ./hack/bench
	bin/bench -controller bin/surveyor -scale 100,1000,10000 $(BENCH_SCALE_FLAGS)

clean: ## Remove build output and make test's logs (the tool cache is kept).
	rm -rf bin .run $(TEST_LOG)
