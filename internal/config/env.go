package config

import (
	"slices"
	"strings"

	"github.com/vigilops/vigil/textmatch"
)

// otherVariables are VIGIL_ variables that are not settings: the
// deployment files and the tests read them. They draw no warning.
var otherVariables = map[string]bool{
	"VIGIL_CONFIG":        true, // deploy/docker-compose.yml: the config file to mount
	"VIGIL_IMAGE":         true, // deploy/docker-compose.yml: the image to run
	"VIGIL_VERSION":       true, // deploy/docker-compose.yml: the version to build
	"VIGIL_DENDRITE_DIR":  true, // the Matrix tests' homeserver cache
	"VIGIL_HELM":          true, // make deploy-check's helm binary
	"VIGIL_SHARED_CORPUS": true, // the classifier's shared corpus test
}

// envWarnings returns a warning for every VIGIL_ variable in environ that
// sets nothing: a typo would otherwise be ignored in silence. Each names the
// closest setting.
func envWarnings(environ []string) []string {
	settings := map[string]string{} // variable -> key
	for key := range defaults {
		settings[EnvName(key)] = key
	}
	// Keys that exist but cannot be set from the environment (lists and
	// sections): their variable is named for what it is.
	listKeys := map[string]string{}
	for _, k := range knownKeys() {
		if _, ok := defaults[k]; !ok && !strings.Contains(k, "[]") {
			listKeys[EnvName(k)] = k
		}
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "VIGIL_") || otherVariables[name] || strings.HasPrefix(name, "VIGIL_TEST_") {
			continue
		}
		if _, ok := settings[name]; ok {
			continue
		}
		if key, ok := listKeys[name]; ok {
			out = append(out, "environment variable "+name+" is ignored: "+key+
				" is a list and can only be set in the config file")
			continue
		}
		w := "environment variable " + name + " is not a vigil setting and is ignored"
		if near, ok := closestVariable(name, settings); ok {
			w += "; did you mean " + near + " (" + settings[near] + ")?"
		} else {
			w += "; settings are VIGIL_ and a key of configs/vigil.example.yaml in upper case (llm.model: VIGIL_LLM_MODEL)"
		}
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// closestVariable is the setting variable nearest to name, if any is near.
func closestVariable(name string, settings map[string]string) (string, bool) {
	best, bestD := "", -1
	for v := range settings {
		d := textmatch.Distance(name, v)
		if bestD < 0 || d < bestD || (d == bestD && v < best) {
			best, bestD = v, d
		}
	}
	if bestD < 0 || bestD > max(2, (len(name)-len("VIGIL_"))/3) {
		return "", false
	}
	return best, true
}
