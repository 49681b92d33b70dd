package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// durationRule is what a duration key accepts. Every duration is written
// with its unit ("90s", "10m"): a bare number is refused, because YAML
// reads 600 as 600 nanoseconds, which expires every approval at once.
type durationRule struct {
	// key is the key's pattern ("plugins[].timeout").
	key string
	// min is the smallest value that makes sense; anything shorter is a
	// mistake (a unit left out, ms for s).
	min time.Duration
	// zero, when set, says what 0 means; 0 is then allowed.
	zero    string
	example string
	// why explains the minimum.
	why string
}

// durationRules lists every duration key. TestEveryDurationHasARule keeps
// it complete: a new duration key needs a rule here.
var durationRules = []durationRule{
	{key: "store.redis.replica_ack_timeout", min: 10 * time.Millisecond, example: "1s",
		why: "a replica on the same network acknowledges within milliseconds; less fails writes for nothing"},
	{key: "llm.timeout", min: time.Second, example: "120s",
		why: "a model call takes at least that long"},
	{key: "policy.approval_ttl", min: 30 * time.Second, example: "10m",
		why: "a person needs time to read the card and decide"},
	{key: "slack.usergroup_ttl", min: 10 * time.Second, zero: "the default, 5m", example: "5m",
		why: "Slack rate-limits user group lookups"},
	{key: "plugins[].timeout", min: time.Second, zero: "30s", example: "30s",
		why: "a plugin needs that long to start and answer"},
	{key: "observability.prometheus[].timeout", min: time.Second, zero: "30s", example: "30s",
		why: "a range query takes at least that long"},
	{key: "observability.alertmanager.timeout", min: time.Second, example: "30s",
		why: "an Alertmanager call takes at least that long"},
	{key: "observability.alertmanager.max_silence", min: time.Minute, example: "24h",
		why: "a silence shorter than that is over before anyone reads it"},
	{key: "kubernetes.discovery_refresh", min: 10 * time.Second, example: "2m",
		why: "listing a cluster's objects more often loads its API server"},
	{key: "kubernetes.timeout", min: time.Second, example: "30s",
		why: "a Kubernetes API call takes at least that long"},
	{key: "alerts.debounce", min: time.Second, zero: "investigate at once", example: "30s",
		why: "Alertmanager batches a group's alerts at least that far apart"},
	{key: "alerts.limits.open_group_idle", min: time.Minute, example: "24h",
		why: "a firing group is notified again every repeat_interval (Alertmanager's default is 4h); shorter forgets groups still firing"},
}

func durationRuleFor(pattern string) (durationRule, bool) {
	for _, r := range durationRules {
		if r.key == pattern {
			return r, true
		}
	}
	return durationRule{}, false
}

// parseDuration reads a duration as written in the file or environment.
// Bare numbers are refused (0 aside, which is 0 in any unit).
func parseDuration(raw any) (time.Duration, error) {
	switch x := raw.(type) {
	case nil:
		return 0, nil
	case time.Duration:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0, nil
		}
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			return bareNumber(n)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errors.New("not a duration: write a number and a unit (ms, s, m, h)")
		}
		return d, nil
	}
	v := reflect.ValueOf(raw)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return bareNumber(float64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return bareNumber(float64(v.Uint()))
	case reflect.Float32, reflect.Float64:
		return bareNumber(v.Float())
	}
	return 0, errors.New("not a duration: write a number and a unit (ms, s, m, h)")
}

func bareNumber(n float64) (time.Duration, error) {
	if n == 0 {
		return 0, nil
	}
	return 0, &unitError{n: n}
}

// unitError is a duration written as a bare number.
type unitError struct{ n float64 }

func (e *unitError) Error() string {
	return fmt.Sprintf("a bare number has no unit (it would mean %s)", time.Duration(e.n))
}

// example is the number with units: 600 -> "600s or 10m".
func (e *unitError) example() string {
	num := strconv.FormatFloat(e.n, 'f', -1, 64)
	ex := num + "s"
	if e.n >= 60 && e.n == float64(int64(e.n)) && int64(e.n)%60 == 0 {
		ex += " or " + strconv.FormatInt(int64(e.n)/60, 10) + "m"
	}
	return ex
}

// durationHook decodes every time.Duration field through parseDuration,
// so no key, present or future, reads a bare number as nanoseconds.
func durationHook() mapstructure.DecodeHookFuncType {
	return func(_ reflect.Type, to reflect.Type, data any) (any, error) {
		if to != durationType {
			return data, nil
		}
		return parseDuration(data)
	}
}

// checkDurations applies the minimums to every duration in c.
func (c *Config) checkDurations() []error {
	var errs []error
	for _, dv := range c.durations() {
		r, ok := durationRuleFor(pattern(dv.key))
		if !ok {
			r = durationRule{min: 1, example: "30s"}
		}
		switch {
		case dv.d == 0 && r.zero != "":
		case dv.d < 0:
			errs = append(errs, c.problem(dv.key, "must not be negative"))
		case dv.d < r.min:
			msg := fmt.Sprintf("%s is shorter than the minimum, %s", dv.d, r.min)
			if r.why != "" {
				msg += " (" + r.why + ")"
			}
			if r.zero != "" {
				msg += "; 0 means " + r.zero
			}
			errs = append(errs, c.problem(dv.key, msg))
		}
	}
	return errs
}
