# vigil — the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       ?= bin/vigil
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
CONFIG    ?= configs/vigil.example.yaml
FUZZTIME  ?= 30s

# vigil's exit status when something it needs (a language model) is not
# configured: sysexits' EX_CONFIG (cmd/vigil/version.go). `make run` stops
# cleanly on it, after vigil has said what to configure.
EXIT_NOT_CONFIGURED := 78

# The shared command corpus (policy/command's TestSharedCorpus) is checked
# when VIGIL_SHARED_CORPUS names it or a ../shared checkout sits beside this
# one; otherwise `make test` says so in a plain line, first and last.
SHARED_CORPUS := $(or $(VIGIL_SHARED_CORPUS),$(wildcard ../shared/corpus/commands.tsv))
corpus_note = $(if $(SHARED_CORPUS),echo "test: checking the shared command corpus $(SHARED_CORPUS)",echo "test: NOT CHECKING the shared command corpus: no ../shared/corpus/commands.tsv beside this clone (set VIGIL_SHARED_CORPUS=FILE to check one)")

.PHONY: help build build-e2ee run demo test unit corpus-note bench fuzz lint vet fmt clean

# A bare `make` lists the targets. Set before the includes: otherwise the
# first target of an included file (the Dendrite build) would be the default.
.DEFAULT_GOAL := help

include mk/*.mk

# Every target with a `##` note is listed, one line each, in file order.
help: ## list the targets (the default)
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z0-9_-]+:.*## / { printf "  make %-13s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## static binary in bin/vigil
	@echo "building $(BIN): the first build compiles its dependencies, a few minutes"
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/vigil

# A binary that can do Matrix end-to-end encryption (matrix.e2ee: true)
# needs cgo and mautrix's pure-Go Olm.
build-e2ee: ## bin/vigil with Matrix end-to-end encryption (cgo)
	@echo "building $(BIN) with Matrix end-to-end encryption: the first build compiles its dependencies, a few minutes"
	CGO_ENABLED=1 $(GO) build -tags goolm -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/vigil

# With no model configured, vigil explains how to configure one and exits
# with EXIT_NOT_CONFIGURED: that is a stop, not a failure, so make says so
# and exits 0 instead of printing "Error 78". Any other status is passed on.
run: build ## the terminal chat on this machine (configure a model first, or see demo)
	@$(BIN) chat --config $(CONFIG); status=$$?; \
	if [ $$status -eq $(EXIT_NOT_CONFIGURED) ]; then \
	  echo "make run: stopped: no language model is configured (see above); nothing failed. Try: make demo"; exit 0; \
	fi; exit $$status

# The same terminal chat with a scripted model: no configuration needed. It
# plays a short conversation by itself (a question, the reads, an approval
# and the check that follows the change); `vigil chat --demo` lets you type.
demo: build ## a scripted conversation on this machine: reads, an approval, the verification
	$(BIN) chat --config $(CONFIG) --demo --play

# Everything: static checks, the deployment artifacts, the Dendrite
# homeserver the Matrix tests run against and the Prometheus and
# Alertmanager the observability tests run against (built once, cached),
# then every Go test with the race detector. One after the other: building
# them two at a time measured slower on a cold 2-core machine, not faster.
#
# deploy/'s tests (deploy-check) are part of `go test ./...`: `make test`
# runs them there, once, not a second time on their own.
test: corpus-note lint dendrite observability unit ## every check and test (what CI runs)
	@$(corpus_note)

corpus-note: ## say whether make test checks the shared command corpus
	@$(corpus_note)

# How `make unit` spends a 2-core machine's time (.ci/pkgtime measures it
# per package):
#  - the longest packages start first (go test starts the test binaries in
#    the order of its arguments; ./... adds the rest, each once), so none
#    of them is left to run alone at the end: the read sandbox's harm test
#    (CPU-bound, four namespaces at a time), internal/e2e (mostly waiting:
#    servers, failovers, timers), eval, the Slack adapter;
#  - UNIT_P packages are built or tested at a time (go test -p, default
#    the number of processors): 3 lets a package that waits overlap the
#    ones that compute, and the linking of the next test binaries overlap
#    both;
#  - the test binaries are linked without DWARF debug information (-w),
#    which halves each link (a race test binary's link takes 4 to 15 s of
#    CPU, and there is one per package on every run, warm or cold); panics
#    and race reports keep their file:line (from the symbol table, which
#    stays).
UNIT_P     ?= 3
UNIT_FIRST := ./tools/sandbox/harm ./internal/e2e ./eval ./adapters/slack ./adapters/internal/split \
	./adapters/matrix ./agent ./cmd/vigil ./policy/command/sqlcheck ./store/redis ./policy/command ./tools/plugin

unit: ## go test -race ./... only
	$(GO) test -race -count=1 -timeout 20m -p $(UNIT_P) -ldflags=-w $(UNIT_FIRST) ./...

bench: ## every benchmark
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Each fuzz target runs for FUZZTIME; `go test -fuzz` takes one target at a time.
fuzz: ## each fuzz target for FUZZTIME (default 30s)
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

lint: vet staticcheck ## go vet, staticcheck and gofmt
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
