# vigil eval: the investigation scorecard (eval/, README "Evaluating a model").

.PHONY: eval eval-reference

eval: build ## grade the configured model on every scenario (CONFIG=..., writes eval-score.md and eval-score.json)
	./$(BIN) eval --config $(CONFIG) --markdown eval-score.md --json eval-score.json

# The reference trajectories run in `make unit` too (eval's Go tests), which
# also fail when eval/REFERENCE.md is out of date.
eval-reference: ## run the reference trajectories and regenerate eval/REFERENCE.md
	VIGIL_UPDATE_REFERENCE=1 $(GO) test -count=1 -run 'TestReferenceReportUpToDate' ./eval/
	$(GO) run ./cmd/vigil eval --reference > /dev/null
