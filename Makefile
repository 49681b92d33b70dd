# vigil — the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       ?= bin/vigil
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
CONFIG    ?= configs/vigil.example.yaml
FUZZTIME  ?= 30s

.PHONY: build build-e2ee run demo test unit bench fuzz lint vet fmt clean

include mk/*.mk

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/vigil

# A binary that can do Matrix end-to-end encryption (matrix.e2ee: true)
# needs cgo and mautrix's pure-Go Olm.
build-e2ee:
	CGO_ENABLED=1 $(GO) build -tags goolm -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/vigil

run: build
	./$(BIN) chat --config $(CONFIG)

# The same terminal chat with a scripted model: no configuration needed.
demo: build
	./$(BIN) chat --config $(CONFIG) --demo

# Everything: static checks, the deployment artifacts, the Dendrite
# homeserver the Matrix tests run against and the Prometheus and
# Alertmanager the observability tests run against (built once, cached),
# then every Go test with the race detector.
test: lint deploy-check dendrite observability unit

unit:
	$(GO) test -race -count=1 -timeout 20m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Each fuzz target runs for FUZZTIME; `go test -fuzz` takes one target at a time.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
