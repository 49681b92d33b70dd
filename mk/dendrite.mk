# Dendrite homeserver for the Matrix adapter's integration tests.
# Include from the Makefile (`include mk/dendrite.mk`) and make `test` depend
# on `dendrite` so the first, multi-minute build happens outside go test's
# timeout. The binaries are cached per version in
# $(VIGIL_DENDRITE_DIR) or ~/.cache/vigil/dendrite-<version>.
.PHONY: dendrite
dendrite: ## build the Dendrite homeserver the Matrix tests use (cached)
	$(GO) run ./internal/testenv/dendrite/prebuild
