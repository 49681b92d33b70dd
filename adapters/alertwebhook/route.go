package alertwebhook

import (
	"fmt"
	"github.com/vigilops/vigil/bot"
	"regexp"
	"sort"
	"strings"
)

// RouteSpec is one alerts.routes entry as configured.
type RouteSpec struct {
	// Name identifies the route in metrics and logs ("routes[0]").
	Name        string
	Match       map[string]string
	MatchRE     map[string]string
	Channel     string
	Investigate bool
	Prompt      string
	Limits      RouteLimits
}

// RouteLimits are the bot's AlertLimits; a zero field takes its default.
type RouteLimits = bot.AlertLimits

// Defaults of RouteLimits.
const (
	DefaultOpenGroups       = bot.DefaultAlertOpenGroups
	DefaultThreadsPerMinute = bot.DefaultAlertThreadsPerMinute
	DefaultOpenIdle         = bot.DefaultAlertOpenIdle
)

// Route is a compiled route: where its notifications go (the bot's
// AlertRoute) and what they must match.
type Route struct {
	bot.AlertRoute
	match   map[string]string
	matchRE map[string]*regexp.Regexp
}

// ParseChannel splits "slack:C0123" or "matrix:!room:server"; it names
// what is wrong with anything else.
func ParseChannel(s string) (platform, channel string, err error) {
	p, c, ok := strings.Cut(strings.TrimSpace(s), ":")
	switch {
	case !ok || c == "":
		return "", "", fmt.Errorf("%q is not a channel: write slack:<channel id> or matrix:<room id>", s)
	case p == "slack":
		if strings.ContainsAny(c, " :#") {
			return "", "", fmt.Errorf("%q: a Slack channel is its ID (C0123456789), not its name", s)
		}
	case p == "matrix":
		if !strings.HasPrefix(c, "!") || !strings.Contains(c[1:], ":") {
			return "", "", fmt.Errorf("%q: a Matrix room is its ID (!abc:example.org), not an alias", s)
		}
	default:
		return "", "", fmt.Errorf("%q: unknown platform %q; use slack or matrix", s, p)
	}
	return p, c, nil
}

// CompileRoute checks and compiles one route. Regexps are anchored at
// both ends, as in Alertmanager's classic match_re.
func CompileRoute(s RouteSpec) (Route, error) {
	p, c, err := ParseChannel(s.Channel)
	if err != nil {
		return Route{}, err
	}
	r := Route{AlertRoute: bot.AlertRoute{Name: s.Name, Platform: p, Channel: c, Investigate: s.Investigate, Prompt: s.Prompt,
		Limits: s.Limits.WithDefaults()}, match: s.Match, matchRE: map[string]*regexp.Regexp{}}
	for k, expr := range s.MatchRE {
		re, err := regexp.Compile("^(?:" + expr + ")$")
		if err != nil {
			return Route{}, fmt.Errorf("match_re.%s: %q is not a regular expression: %v", k, expr, err)
		}
		r.matchRE[k] = re
	}
	return r, nil
}

// Matches reports whether every match and match_re of the route holds for
// labels. A label that is absent has the value "".
func (r Route) Matches(labels map[string]string) bool {
	for k, v := range r.match {
		if labels[k] != v {
			return false
		}
	}
	for k, re := range r.matchRE {
		if !re.MatchString(labels[k]) {
			return false
		}
	}
	return true
}

// Router picks the route of a notification: the first that matches, else
// the default (when there is one).
type Router struct {
	routes []Route
	def    *Route
}

// NewRouter compiles routes; defaultChannel may be "" (no default: an
// alert no route matches is refused). defaultLimits, optional, are the
// default route's limits.
func NewRouter(specs []RouteSpec, defaultChannel string, investigateDefault bool, defaultLimits ...RouteLimits) (*Router, error) {
	rt := &Router{}
	for i, s := range specs {
		if s.Name == "" {
			s.Name = fmt.Sprintf("routes[%d]", i)
		}
		r, err := CompileRoute(s)
		if err != nil {
			return nil, fmt.Errorf("alerts.%s: %w", s.Name, err)
		}
		rt.routes = append(rt.routes, r)
	}
	if defaultChannel != "" {
		p, c, err := ParseChannel(defaultChannel)
		if err != nil {
			return nil, fmt.Errorf("alerts.default: %w", err)
		}
		var l RouteLimits
		if len(defaultLimits) > 0 {
			l = defaultLimits[0]
		}
		rt.def = &Route{AlertRoute: bot.AlertRoute{Name: "default", Platform: p, Channel: c, Investigate: investigateDefault, Limits: l.WithDefaults()}}
	}
	return rt, nil
}

// Route returns the route for labels.
func (rt *Router) Route(labels map[string]string) (Route, bool) {
	for _, r := range rt.routes {
		if r.Matches(labels) {
			return r, true
		}
	}
	if rt.def != nil {
		return *rt.def, true
	}
	return Route{}, false
}

// Platforms lists the chat platforms routes send to.
func (rt *Router) Platforms() []string {
	seen := map[string]bool{}
	for _, r := range rt.routes {
		seen[r.Platform] = true
	}
	if rt.def != nil {
		seen[rt.def.Platform] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
