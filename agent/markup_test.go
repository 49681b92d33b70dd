package agent

import "testing"

func TestCleanMarkup(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text unchanged", "nginx is running on web1.\n\nLoad is 0.3.", "nginx is running on web1.\n\nLoad is 0.3."},
		{"plain text with angle brackets", "load < 1 and a <b>tag</b> [x]", "load < 1 and a <b>tag</b> [x]"},
		{"empty", "", ""},
		{
			"dsml function_calls block",
			"Let me check.\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"read\">\n<｜DSML｜parameter name=\"command\" string=\"true\">uptime</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>\nDone.",
			"Let me check.\n\nDone.",
		},
		{
			"dsml tool_calls with double bars",
			"A<｜｜DSML｜｜tool_calls><｜｜DSML｜｜invoke name=\"x\"></｜｜DSML｜｜invoke></｜｜DSML｜｜tool_calls>B",
			"AB",
		},
		{
			"dsml ascii and double-vertical bars",
			"before <|DSML|tool_calls><‖DSML‖invoke name=\"q\">{}</‖DSML‖invoke></|DSML|tool_calls> after",
			"before  after",
		},
		{"dsml unclosed runs to end", "Checking now <｜DSML｜function_calls><｜DSML｜invoke name=\"read\">", "Checking now"},
		{"bare dsml invoke", "x <｜DSML｜invoke name=\"read\"><｜DSML｜parameter name=\"a\">1</｜DSML｜parameter></｜DSML｜invoke> y", "x  y"},
		{"plain DSML tag", "<DSML function_calls>stuff</DSML function_calls>answer", "answer"},
		{"stray dsml tag", "answer</｜DSML｜parameter>", "answer"},
		{"think block", "<think>the user wants uptime; I will guess</think>\n\nI need to run a tool first.", "I need to run a tool first."},
		{"think block mid text", "A <think>hmm</think>B", "A B"},
		{"thinking block", "<thinking>\nplan\n</thinking>\nAnswer.", "Answer."},
		{"unclosed think", "Answer first. <think>and then some reasoning that was cut", "Answer first."},
		{"stray end of thinking", "reasoning about the logs...\n</think>\n\nThe disk is full.", "The disk is full."},
		{"stray end marker at end keeps text", "The disk is full.</think>", "The disk is full."},
		{"end_of_thinking token", "let me think<|end_of_thinking|>Final answer.", "Final answer."},
		{"kimi think", "◁think▷hmm◁/think▷Answer", "Answer"},
		{"special tokens", "Answer.<|im_end|><|eot_id|>", "Answer."},
		{"deepseek end of sentence", "Answer.<｜end▁of▁sentence｜>", "Answer."},
		{
			"deepseek v3 tool calls",
			"ok<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n```json\n{\"command\":\"uptime\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
			"ok",
		},
		{"tool_call token with json", "Sure. <|tool_call|>[{\"name\":\"read\",\"arguments\":{\"x\":1}}] Then more.", "Sure.  Then more."},
		{"python_tag", "<|python_tag|>{\"name\": \"read\", \"parameters\": {}}", ""},
		{"mistral TOOL_CALLS", "[TOOL_CALLS][{\"name\":\"read\",\"arguments\":{}}]", ""},
		{"tool_call token without json", "a <|tool_call|> b", "a  b"},
		{"hermes tool_call block", "I'll check.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"command\": \"df -h\"}}\n</tool_call>", "I'll check."},
		{"function_calls xml", "x<function_calls><invoke name=\"read\"><parameter name=\"a\">1</parameter></invoke></function_calls>y", "xy"},
		{"llama function tag", "<function=read>{\"command\":\"uptime\"}</function> done", "done"},
		{"blank lines collapsed", "A\n\n<think>x</think>\n\n\n\nB", "A\n\nB"},
		{"json mode reply untouched", `{"tool_call":{"name":"read","parameters":{"command":"uptime"}}}`, `{"tool_call":{"name":"read","parameters":{"command":"uptime"}}}`},
		{"think before json mode reply", "<think>call read</think>\n{\"final_answer\":{\"summary\":\"ok\",\"confidence\":\"high\"}}", `{"final_answer":{"summary":"ok","confidence":"high"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CleanMarkup(tt.in); got != tt.want {
				t.Errorf("CleanMarkup(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLooksLikeToolMarkup(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"nginx restarted fine", false},
		{"", false},
		{"<think>just reasoning</think> answer", false},
		{"use `name` and `arguments` fields", false},
		{`{"status": "ok"}`, false},
		{"<｜DSML｜function_calls><｜DSML｜invoke name=\"read\">", true},
		{"</‖DSML‖invoke>", true},
		{"<DSML function_calls>", true},
		{"<tool_call>{\"name\":\"read\"}</tool_call>", true},
		{"<tool_calls>", true},
		{"<function_calls><invoke name=\"x\">", true},
		{"<function=read>{}</function>", true},
		{"<|tool_call|>[...]", true},
		{"<|python_tag|>{}", true},
		{"[TOOL_CALLS][]", true},
		{"<｜tool▁calls▁begin｜>", true},
		{`I ran {"name": "read", "arguments": {"command": "uptime"}}`, true},
		{`{"name":"control","parameters":{}}`, true},
		{`{"tool_call": {"name": "read"}}`, true},
	}
	for _, tt := range tests {
		if got := LooksLikeToolMarkup(tt.in); got != tt.want {
			t.Errorf("LooksLikeToolMarkup(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestCleanMarkupRemovesWhatLooksLikeMarkup: after cleaning, block markup
// detected by LooksLikeToolMarkup is gone.
func TestCleanMarkupRemovesWhatLooksLikeMarkup(t *testing.T) {
	for _, in := range []string{
		"<｜DSML｜function_calls><｜DSML｜invoke name=\"read\"></｜DSML｜invoke></｜DSML｜function_calls>ok",
		"<tool_call>{\"name\":\"read\",\"arguments\":{}}</tool_call>ok",
		"<|tool_call|>{\"name\":\"read\",\"arguments\":{}}ok",
		"<function=read>{}</function>ok",
	} {
		if out := CleanMarkup(in); LooksLikeToolMarkup(out) || out != "ok" {
			t.Errorf("CleanMarkup(%q) = %q", in, out)
		}
	}
}
