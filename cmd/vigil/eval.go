package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/eval"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
)

// evalFlags are vigil eval's options.
type evalFlags struct {
	config, scenarios    string
	only                 []string
	runs                 int
	reference            bool
	noCompaction         bool
	jsonOut, markdownOut string
	compare              bool
	list                 bool
	minPass              float64
	judgeMin             int
}

// referenceTokenizer counts reference runs when no llm.model is set.
const referenceTokenizer = "gpt-4o"

func newEvalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Grade investigations: run the scenarios against the configured model (or the reference trajectories) and print a scorecard",
		Long: `eval runs every scenario (broken hosts, containers, Kubernetes, Proxmox,
databases, networks, alerts, red herrings) through vigil's real agent loop,
policy and tools against a simulated world, plays the approver, and grades
each run: root cause named, evidence gathered, no forbidden or unapproved
action, fix verified, within the turn budget.

  vigil eval --config vigil.yaml --runs 3 --markdown score.md --json score.json
  vigil eval --reference                    (the scripted reference trajectories)
  vigil eval --compare old.json new.json    (regressions between two scorecards)

Progress goes to stderr; the Markdown scorecard to stdout unless --markdown
or --json names a file. Exit status: 2 when the model endpoint failed (those
runs are errors, not failures, and are not graded); 1 when pass@1 is below
--min-pass, or under --reference when a reference or valid trajectory fails
or a wrong one passes; --compare exits 1 on a regression beyond what the
runs can explain.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEval(cmd.Context(), f, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "path to the YAML configuration (llm.* is the model under test; eval.* the judge and prices)")
	fl.StringVar(&f.scenarios, "scenarios", "", "directory of scenario YAML files (default: the scenarios built into vigil)")
	fl.StringSliceVar(&f.only, "only", nil, "run only these scenarios (repeatable, or comma-separated)")
	fl.IntVar(&f.runs, "runs", 1, "runs per scenario (pass@k is over these)")
	fl.BoolVar(&f.reference, "reference", false, "replay the reference trajectories instead of a model (also checks every wrong trajectory fails)")
	fl.BoolVar(&f.noCompaction, "no-compaction", false, "turn context compaction off (every call resends the whole history), to compare token figures")
	fl.StringVar(&f.jsonOut, "json", "", "write the scorecard as JSON to this file")
	fl.StringVar(&f.markdownOut, "markdown", "", "write the scorecard as Markdown to this file")
	fl.BoolVar(&f.compare, "compare", false, "compare two JSON scorecards given as arguments: old.json new.json")
	fl.BoolVar(&f.list, "list", false, "list the scenarios (name, category, what is broken) and exit")
	fl.IntVar(&f.judgeMin, "judge-min", 0, "with eval.judge: fail a run whose judge score is below this (1 to 3) or that makes a claim no output supports (default: the judge only reports)")
	fl.Float64Var(&f.minPass, "min-pass", 0, "exit 1 when the total pass@1 is below this (0 to 1; default: no threshold)")
	return cmd
}

func runEval(ctx context.Context, f evalFlags, args []string, out, errOut io.Writer) error {
	if f.compare {
		if len(args) != 2 {
			return fmt.Errorf("eval --compare: want two scorecards, old.json new.json; got %d arguments", len(args))
		}
		old, err := eval.ReadJSON(args[0])
		if err != nil {
			return err
		}
		cur, err := eval.ReadJSON(args[1])
		if err != nil {
			return err
		}
		if eval.Compare(out, old, cur) > 0 {
			return exitError{code: 1}
		}
		return nil
	}
	if len(args) != 0 {
		return fmt.Errorf("eval: unexpected arguments %q (only --compare takes files)", args)
	}
	if f.judgeMin < 0 || f.judgeMin > 3 {
		return fmt.Errorf("eval: --judge-min %d: want 0 to 3", f.judgeMin)
	}
	if f.minPass < 0 || f.minPass > 1 {
		return fmt.Errorf("eval: --min-pass %g: want 0 to 1", f.minPass)
	}
	if f.runs < 1 || f.runs > 100 {
		return fmt.Errorf("eval: --runs %d: want 1 to 100", f.runs)
	}
	cfg, err := config.Load(f.config)
	if err != nil {
		return err
	}
	var all []*eval.Scenario
	if f.scenarios != "" {
		all, err = eval.LoadDir(f.scenarios)
	} else {
		all, err = eval.LoadBuiltin()
	}
	if err != nil {
		return err
	}
	scenarios, err := eval.Select(all, f.only)
	if err != nil {
		return err
	}
	if f.list {
		for _, s := range scenarios {
			fmt.Fprintf(out, "%-30s %-11s %s\n", s.Name, s.Category, s.Summary)
		}
		return nil
	}
	log := newLogger(errOut, cfg.Log, true)
	suite := eval.Suite{
		Scenarios: scenarios,
		Runs:      f.runs,
		Progress:  errOut,
		Options: eval.Options{
			Rules: cfg.Policy.Rules(),
			Agent: agent.Config{
				MaxTurns:             cfg.LLM.MaxTurns,
				ToolMode:             agent.ToolMode(cfg.LLM.ToolMode),
				Instructions:         cfg.LLM.Instructions,
				UnredactedModelInput: !cfg.Policy.RedactModelInput,
				ContextBudgetTokens:  cfg.LLM.ContextBudgetTokens,
				Model:                cfg.LLM.Model,
			},
		},
		CountAs: cfg.LLM.Model,
		Wrong:   f.reference,
	}
	if f.noCompaction {
		suite.Options.Agent.ContextBudgetTokens = -1
	}
	for _, p := range cfg.Eval.Prices {
		suite.Prices = append(suite.Prices, eval.Price{Model: p.Model, Prompt: p.Prompt, Completion: p.Completion})
	}
	if f.reference {
		if suite.CountAs == "" {
			suite.CountAs = referenceTokenizer
			suite.Options.Agent.Model = referenceTokenizer
		}
		// Scripted turns answer in native tool calls.
		suite.Options.Agent.ToolMode = agent.ToolModeNative
	} else {
		m, err := app.NewModel(cfg.LLM, log)
		if err != nil {
			return fmt.Errorf("eval: %w; configure llm.* (or use --reference)", err)
		}
		suite.Model = func(*eval.Scenario) agent.Model { return m }
	}
	if j := cfg.Eval.Judge; j.Configured() {
		jl := cfg.LLM
		jl.BaseURL, jl.Model, jl.APIKey, jl.Temperature = j.BaseURL, j.Model, j.APIKey, 0
		jm, err := app.NewModel(jl, log)
		if err != nil {
			return fmt.Errorf("eval: eval.judge: %w", err)
		}
		suite.Judge = &eval.Judge{Model: jm}
		suite.JudgeMin = f.judgeMin
	} else if f.judgeMin > 0 {
		return fmt.Errorf("eval: --judge-min needs eval.judge configured")
	}
	sc := eval.RunSuite(ctx, suite)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeScorecard(sc, f, out); err != nil {
		return err
	}
	fmt.Fprintf(errOut, "pass@1 %.2f, pass@k %.2f (k=%d) over %d scenarios; %d prompt + %d completion tokens\n",
		sc.Total.Pass1, sc.Total.PassK, sc.Runs, sc.Total.Scenarios, sc.Total.PromptTokens, sc.Total.CompletionTokens)
	if sc.Errors > 0 {
		fmt.Fprintf(errOut, "eval: %d run(s) ended on a system failure (the model endpoint); they are errors, not graded\n", sc.Errors)
		return exitError{code: 2}
	}
	if f.reference && sc.Failed() {
		fmt.Fprintf(errOut, "eval: reference check failed (wrong trajectories that passed: %v; valid ones that failed: %v)\n", sc.WrongPassed, sc.ValidFailed)
		return exitError{code: 1}
	}
	if f.minPass > 0 && sc.Total.Pass1 < f.minPass {
		fmt.Fprintf(errOut, "eval: pass@1 %.2f is below --min-pass %.2f\n", sc.Total.Pass1, f.minPass)
		return exitError{code: 1}
	}
	return nil
}

func writeScorecard(sc eval.Scorecard, f evalFlags, out io.Writer) error {
	write := func(path string, fn func(io.Writer) error) error {
		file, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if err := fn(file); err != nil {
			file.Close()
			return fmt.Errorf("eval: write %s: %w", path, err)
		}
		return file.Close()
	}
	md := func(w io.Writer) error { return sc.WriteMarkdown(w, eval.MarkdownOptions{}) }
	if f.jsonOut != "" {
		if err := write(f.jsonOut, sc.WriteJSON); err != nil {
			return err
		}
	}
	if f.markdownOut != "" {
		return write(f.markdownOut, md)
	}
	if f.jsonOut == "" {
		return md(out)
	}
	return nil
}
