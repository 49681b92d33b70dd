package bot

import (
	"fmt"

	"github.com/vigilops/vigil/policy"
)

// Channels is the per-channel policy, keyed by policy key ("console",
// "slack:C123", "matrix:!room:hs", with "default" for the rest).
type Channels struct {
	byKey map[string]policy.ChannelPolicy
}

// NewChannels validates and indexes channel policies. Duplicate keys are an
// error.
func NewChannels(list []policy.ChannelPolicy) (*Channels, error) {
	c := &Channels{byKey: make(map[string]policy.ChannelPolicy, len(list))}
	for i, cp := range list {
		if cp.Match == "" {
			return nil, fmt.Errorf("channels[%d].match is empty: use console, default, slack:<channel id> or matrix:<room id>", i)
		}
		if _, dup := c.byKey[cp.Match]; dup {
			return nil, fmt.Errorf("channels[%d].match %q appears twice", i, cp.Match)
		}
		if err := cp.Validate(); err != nil {
			return nil, fmt.Errorf("channels[%d]: %w", i, err)
		}
		c.byKey[cp.Match] = cp
	}
	return c, nil
}

// Lookup returns the policy for a channel: its own entry, else "default".
// A channel with neither is not allowed.
func (c *Channels) Lookup(key string) (policy.ChannelPolicy, bool) {
	if cp, ok := c.byKey[key]; ok {
		return cp, true
	}
	if cp, ok := c.byKey[policy.DefaultChannel]; ok {
		cp.Match = key
		return cp, true
	}
	return policy.ChannelPolicy{}, false
}
