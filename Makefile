# Surveyor. `make run` and `make test` are the two commands; see README.md.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
DEV := bin/dev
# Resolved only when a recipe uses it; builds controller-gen on first use.
CONTROLLER_GEN = $(shell $(DEV) tool controller-gen)
KUTTL_ARGS ?=
TEST_FLAGS ?=

.PHONY: all build generate manifests tools run test test-unit test-integration test-kuttl verify clean help

all: build

help: ## Show the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(DEV): $(shell find hack -name '*.go') go.mod go.sum
	$(GO) build -o $@ ./hack/dev

build: $(DEV) ## Build the controller manager into bin/surveyor.
	$(GO) build -o bin/surveyor ./cmd/surveyor

tools: $(DEV) ## Build every pinned tool into the cache (once per machine).
	$(DEV) tool

generate: $(DEV) ## Generate deepcopy code for the API.
	$(CONTROLLER_GEN) object paths=./pkg/apis/...

manifests: $(DEV) ## Generate the CRDs and the controller's RBAC.
	$(CONTROLLER_GEN) crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=surveyor-manager paths=./cmd/... paths=./pkg/... output:rbac:artifacts:config=config/rbac

verify: $(DEV) ## Fail when generated code or manifests are stale, code is unformatted or vet complains.
	@snap=$$(mktemp -d); cp -r pkg/apis config "$$snap"/; \
	$(MAKE) --no-print-directory generate manifests >/dev/null; \
	if ! diff -r "$$snap"/apis pkg/apis || ! diff -r "$$snap"/config config; then \
		echo "generated code or manifests were stale: run 'make generate manifests' and commit the result"; rm -rf "$$snap"; exit 1; fi; \
	rm -rf "$$snap"
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

run: build ## Start a local cluster, the controller and samples/; watch the Workloads until Ctrl-C.
	$(DEV) run -controller bin/surveyor

test: verify test-unit test-integration test-kuttl ## Everything CI runs.

test-unit: ## Unit tests (no cluster).
	$(GO) test $(TEST_FLAGS) ./pkg/... ./cmd/... ./hack/...

test-integration: tools ## Go tests against a real kube-apiserver, etcd, controller-manager and kwok.
	$(GO) test $(TEST_FLAGS) -count=1 -timeout 30m ./tests/integration/...

test-kuttl: build tools ## kuttl suites against the local cluster with the controller running.
	$(DEV) kuttl -controller bin/surveyor -- --config tests/kuttl/kuttl-test.yaml $(KUTTL_ARGS)

clean: ## Remove build output (the tool cache is kept).
	rm -rf bin .run
