# Deployment checks: lint and render the Helm chart, parse the compose file,
# Dockerfile and systemd unit (deploy/). Included by the Makefile
# (`include mk/*.mk`).
#
# The chart is linted (`helm lint --strict`'s rules) and rendered (`helm
# template`) by Helm's own packages inside deploy/'s tests
# (deploy/helm_test.go), not by a helm binary: building the helm command
# cost about four minutes of a cold 2-core run, its library about half a
# minute, since it shares vigil's Kubernetes packages.
#
# deploy/'s tests run with -race although they start no goroutines worth
# checking: they import vigil's config and metrics, and with the flags of
# `go vet -race` (run before them by `make test`) they reuse that build
# instead of compiling those packages' dependencies a second time (the
# PostgreSQL grammar's C code among them).

GO ?= go

.PHONY: deploy-check

deploy-check: ## lint and render the Helm chart, check compose, Dockerfile and systemd unit
	$(GO) test -race -count=1 ./deploy/
