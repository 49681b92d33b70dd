package plugin

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/vigilops/vigil/confkey"
)

// Config is one plugin: an MCP server started as a command (stdio), or one
// already running that vigil reaches over streamable HTTP (URL). It is also
// one entry of the plugins list in vigil's configuration file (the
// mapstructure tags are its keys), so its rules live here once: Validate.
type Config struct {
	// Name prefixes the plugin's tools; [a-z][a-z0-9_]*.
	Name    string `mapstructure:"name"`
	Command string `mapstructure:"command"`
	// URL is a streamable HTTP MCP endpoint, e.g. http://127.0.0.1:8811/mcp;
	// set it instead of Command.
	URL  string   `mapstructure:"url"`
	Args []string `mapstructure:"args"`
	// Env is added to the small environment the plugin gets (PATH and
	// HOME): vigil's own environment, which holds its tokens, is not passed.
	Env []string `mapstructure:"env"`
	// Timeout bounds each call and the start (DefaultTimeout when zero).
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxResponse bounds the text of one result (DefaultMaxResponse when
	// zero); a reply longer than 16 times that (at least 1 MiB) is refused.
	MaxResponse int `mapstructure:"max_response"`
	// ReadOnlyTools names the tools, as the server lists them, that the
	// operator vouches are reads. Every other tool is a write. A name the
	// server does not offer is an error at start.
	ReadOnlyTools []string `mapstructure:"read_only_tools"`
}

// ValidName is the form of a plugin name.
var ValidName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate checks the entry without starting anything and reports every
// problem, as *confkey.Error values with keys relative to the entry
// ("name", "env[0]"). That two plugins share a name is the list's
// problem, checked by whoever holds the list.
func (c Config) Validate() error {
	es := confkey.NewErrors("")
	if !ValidName.MatchString(c.Name) {
		es.Add("name", "must match [a-z][a-z0-9_]* (it prefixes the plugin's tool names)")
	}
	switch {
	case c.Command == "" && c.URL == "":
		es.Add("command", "is empty; give the MCP server's executable, or url for a plugin reached over streamable HTTP")
	case c.Command != "" && c.URL != "":
		es.Add("url", "and command are both set; a plugin is either started (command) or reached (url)")
	}
	if c.MaxResponse < 0 {
		es.Add("max_response", "must not be negative (0 means 64 KiB)")
	}
	for j, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			es.Add(fmt.Sprintf("env[%d]", j), "is not KEY=value")
		}
	}
	seen := map[string]bool{}
	for j, name := range c.ReadOnlyTools {
		switch {
		case strings.TrimSpace(name) == "":
			es.Add(fmt.Sprintf("read_only_tools[%d]", j), "is empty; name a tool as the plugin lists it")
		case seen[name]:
			es.Add(fmt.Sprintf("read_only_tools[%d]", j), "names %s twice", name)
		}
		seen[name] = true
	}
	return es.Err()
}
