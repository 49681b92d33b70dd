# vigil — the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       ?= bin/vigil
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
CONFIG    ?= configs/vigil.example.yaml
FUZZTIME  ?= 30s

.PHONY: help build build-e2ee run demo test unit bench fuzz lint vet fmt clean

# A bare `make` lists the targets. Set before the includes: otherwise the
# first target of an included file (the Dendrite build) would be the default.
.DEFAULT_GOAL := help

include mk/*.mk

# Every target with a `##` note is listed, one line each, in file order.
help: ## list the targets (the default)
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z0-9_-]+:.*## / { printf "  make %-13s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## static binary in bin/vigil
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/vigil

# A binary that can do Matrix end-to-end encryption (matrix.e2ee: true)
# needs cgo and mautrix's pure-Go Olm.
build-e2ee: ## bin/vigil with Matrix end-to-end encryption (cgo)
	CGO_ENABLED=1 $(GO) build -tags goolm -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/vigil

run: build ## the terminal chat on this machine (configure a model first, or see demo)
	./$(BIN) chat --config $(CONFIG)

# The same terminal chat with a scripted model: no configuration needed.
demo: build ## the terminal chat with a scripted model: no configuration needed
	./$(BIN) chat --config $(CONFIG) --demo

# Everything: static checks, the deployment artifacts, the Dendrite
# homeserver the Matrix tests run against and the Prometheus and
# Alertmanager the observability tests run against (built once, cached),
# then every Go test with the race detector. One after the other: building
# them two at a time measured slower on a cold 2-core machine, not faster.
test: lint deploy-check dendrite observability unit ## every check and test (what CI runs)

unit: ## go test -race ./... only
	$(GO) test -race -count=1 -timeout 20m ./...

bench: ## every benchmark
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Each fuzz target runs for FUZZTIME; `go test -fuzz` takes one target at a time.
fuzz: ## each fuzz target for FUZZTIME (default 30s)
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

lint: vet ## go vet and gofmt
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# With -race, vet compiles the dependencies exactly as `make unit` does,
# so the tests reuse them instead of compiling everything a second time
# (about four minutes on a cold 2-core machine).
vet: ## go vet ./... (race build: the tests reuse it)
	$(GO) vet -race ./...

fmt: ## gofmt -w every Go file
	gofmt -w $$(git ls-files '*.go')

clean: ## remove bin/
	rm -rf bin
