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

.PHONY: all build generate manifests tools run test test-unit test-fuzz test-integration test-kuttl verify lint image release bench bench-scale clean help

all: build

help: ## Show the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(DEV): $(shell find hack -name '*.go') go.mod go.sum
	$(GO) build -o $@ ./hack/dev

# The controller is linked statically (no cgo), fit for a minimal image; without libc and
# the dynamic loader mapped in, its peak RSS at N=1000 is 1.6 MiB lower (README, Performance).
build: $(DEV) ## Build the controller manager into bin/surveyor and the kubectl plugin into bin/kubectl-carto.
	CGO_ENABLED=0 $(GO) build -o bin/surveyor ./cmd/surveyor
	$(GO) build -o bin/kubectl-carto ./cmd/kubectl-carto

tools: $(DEV) ## Build every pinned tool into the cache (once per machine).
	$(DEV) tool

generate: $(DEV) ## Generate deepcopy code for the API.
	$(CONTROLLER_GEN) object paths=./pkg/apis/...

manifests: $(DEV) ## Generate the CRDs and the controller's RBAC.
	$(CONTROLLER_GEN) crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=surveyor-manager paths=./cmd/... paths=./pkg/... paths=./internal/... output:rbac:artifacts:config=config/rbac

verify: $(DEV) ## Fail when generated code or manifests are stale, code is unformatted or vet complains.
	@snap=$$(mktemp -d); cp -r pkg/apis config "$$snap"/; \
	$(MAKE) --no-print-directory generate manifests >/dev/null; \
	if ! diff -r "$$snap"/apis pkg/apis || ! diff -r "$$snap"/config config; then \
		echo "generated code or manifests were stale: run 'make generate manifests' and commit the result"; rm -rf "$$snap"; exit 1; fi; \
	rm -rf "$$snap"
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

lint: $(DEV) ## Lint with golangci-lint (staticcheck, revive, unused and the defaults; .golangci.yml).
	lint=$$($(DEV) tool golangci-lint); "$$lint" run ./...

run: build ## Start a local cluster, the controller and samples/; watch the Workloads until Ctrl-C.
	$(DEV) run -controller bin/surveyor

test: verify test-unit test-fuzz test-integration test-kuttl ## Everything CI runs.

# The rollout's property tests (pkg/rollout TestInvariants) run ROLLOUT_HISTORIES random histories
# of about ROLLOUT_STEPS steps from a fixed seed here; test-fuzz runs more from a random one.
ROLLOUT_HISTORIES ?= 5000
ROLLOUT_STEPS ?= 80
test-unit: ## Unit tests (no cluster).
	RAPID_SEED=1 RAPID_CHECKS=$(ROLLOUT_HISTORIES) RAPID_STEPS=$(ROLLOUT_STEPS) $(GO) test $(TEST_FLAGS) ./pkg/... ./cmd/... ./hack/... ./config/... ./internal/...

# Each suite starts its own cluster; -p 1 runs them one after another so that the
# fault suites' timing bounds hold on a two-core machine.
test-integration: tools ## Go end-to-end suites (integration, corpus, faults, security, rollout, install, ...) on a real local cluster.
	$(GO) test $(TEST_FLAGS) -count=1 -p 1 -timeout 45m ./tests/...

# A count rather than a duration: a time-boxed fuzz run can end in a spurious
# "context deadline exceeded" on a loaded machine. 10000 inputs take 1-20 s a target here.
FUZZ_TIME ?= 10000x
FUZZ_HISTORIES ?= 20000
test-fuzz: ## Run every go test -fuzz target for FUZZ_TIME each (their seed corpora also run in test-unit), and FUZZ_HISTORIES rollout histories from a random seed.
	RAPID_SEED=0 RAPID_CHECKS=$(FUZZ_HISTORIES) RAPID_STEPS=$(ROLLOUT_STEPS) $(GO) test -count=1 ./pkg/rollout -run '^TestInvariants$$'
	@for pkg in $$(grep -l '^func Fuzz' $$(git ls-files '*_test.go' 2>/dev/null || find pkg -name '*_test.go') | xargs -n1 dirname | sort -u); do \
		for target in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$pkg/*_test.go | sed 's/^func //'); do \
			echo "fuzz $$pkg $$target ($(FUZZ_TIME))"; \
			$(GO) test ./$$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZ_TIME) || exit 1; \
		done; \
	done

test-kuttl: build tools ## kuttl suites against the local cluster with the controller running.
	$(DEV) kuttl -controller bin/surveyor -- --config tests/kuttl/kuttl-test.yaml $(KUTTL_ARGS)

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

clean: ## Remove build output (the tool cache is kept).
	rm -rf bin .run
