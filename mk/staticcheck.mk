# staticcheck for `make lint`, built once from the module proxy with
# `go install` into a cache outside the repository, keyed by version (like
# Prometheus and Dendrite). Included by the Makefile.
#
# It runs with GOFLAGS=-race: staticcheck loads packages through `go list
# -export`, which compiles what it needs; with the same flags as `go vet
# -race` and the tests, that is the build they already made, not a second
# compile of every dependency.
#
# The checks are staticcheck's defaults; staticcheck.conf at the repository
# root says which ones are off and why.

GO                  ?= go
VIGIL_CACHE         ?= $(HOME)/.cache/vigil
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK         ?= $(VIGIL_CACHE)/staticcheck-$(STATICCHECK_VERSION)/staticcheck

.PHONY: staticcheck

$(STATICCHECK):
	@echo "lint: building staticcheck $(STATICCHECK_VERSION) into $(@D) (once)"
	GOBIN=$(@D) $(GO) install -trimpath -ldflags="-s -w" honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK) ## staticcheck ./... (built once, cached)
	GOFLAGS=-race $(STATICCHECK) ./...
