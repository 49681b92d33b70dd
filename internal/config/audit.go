package config

import (
	"fmt"

	"github.com/go-viper/mapstructure/v2"

	"github.com/vigilops/vigil/policy/audit"
)

// Audit configures the audit file and the key that seals the audit chain
// (README "Audit key rotation").
type Audit struct {
	File string `mapstructure:"file"`
	// Key is the audit key itself; set it in the environment
	// (VIGIL_AUDIT_KEY), never in the file. KeyFile names a file holding
	// it instead. One of them, or neither (an unkeyed chain, which vigil
	// warns about at start).
	Key     Secret `mapstructure:"key"`
	KeyFile string `mapstructure:"key_file"`
	// PreviousKeyFiles are keys the chain was sealed with before the
	// current one: verify needs them; new records never use them.
	PreviousKeyFiles []string `mapstructure:"previous_key_files"`
}

// Keyring loads the audit keys: the current key (audit.key or
// audit.key_file; nil when neither is set) and the previous ones. The
// warnings are for the log (a key file others can read).
func (a Audit) Keyring() (*audit.Keyring, []string, error) {
	var warns []string
	var current *audit.Key
	switch {
	case a.Key != "" && a.KeyFile != "":
		return nil, nil, &keyError{"audit.key_file", "is set and so is audit.key (VIGIL_AUDIT_KEY); set one"}
	case a.Key != "":
		k, err := audit.ParseKey([]byte(a.Key.Reveal()))
		if err != nil {
			return nil, nil, &keyError{"audit.key", err.Error()}
		}
		current = k
	case a.KeyFile != "":
		k, w, err := audit.LoadKeyFile(a.KeyFile)
		if err != nil {
			return nil, nil, &keyError{"audit.key_file", err.Error()}
		}
		current = k
		if w != "" {
			warns = append(warns, w)
		}
	}
	var prev []*audit.Key
	for i, p := range a.PreviousKeyFiles {
		key := fmt.Sprintf("audit.previous_key_files[%d]", i)
		k, w, err := audit.LoadKeyFile(p)
		if err != nil {
			return nil, nil, &keyError{key, err.Error()}
		}
		if current != nil && k.ID == current.ID {
			return nil, nil, &keyError{key, "holds the current key (" + k.ID + "); list only keys the chain used before"}
		}
		prev = append(prev, k)
		if w != "" {
			warns = append(warns, w)
		}
	}
	if current == nil && len(prev) == 0 {
		return nil, warns, nil
	}
	return audit.NewKeyring(current, prev...), warns, nil
}

// keyError is an audit key setting that does not load.
type keyError struct{ key, msg string }

func (e *keyError) Error() string { return e.key + ": " + e.msg }

// validateAudit checks the audit keys load.
func (c *Config) validateAudit(bad func(key, format string, args ...any)) {
	if _, _, err := c.Audit.Keyring(); err != nil {
		if ke, ok := err.(*keyError); ok {
			bad(ke.key, "%s", ke.msg)
		} else {
			bad("audit.key", "%v", err)
		}
	}
}

// LoadAudit reads only the audit section of the configuration at path (""
// for none) and the VIGIL_AUDIT_* variables, strictly: `vigil audit` needs
// nothing else, and an auditor's machine need not hold the chat tokens a
// whole configuration must have.
func LoadAudit(path string) (*Audit, error) {
	defs := map[string]any{}
	for _, k := range []string{"audit.file", "audit.key", "audit.key_file"} {
		defs[k] = defaults[k]
	}
	v, err := readViper(path, defs)
	if err != nil {
		return nil, err
	}
	var a Audit
	err = v.UnmarshalKey("audit", &a, func(dc *mapstructure.DecoderConfig) {
		dc.ErrorUnused = true
		dc.DecodeHook = mapstructure.StringToSliceHookFunc(",")
	})
	if err != nil {
		return nil, fmt.Errorf("config: audit: %w", err)
	}
	// UnmarshalKey does not see environment overrides of keys the file
	// leaves out; read each through viper.
	a.File = v.GetString("audit.file")
	a.Key = Secret(v.GetString("audit.key"))
	a.KeyFile = v.GetString("audit.key_file")
	if _, _, err := a.Keyring(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &a, nil
}
