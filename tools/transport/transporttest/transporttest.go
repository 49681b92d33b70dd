// Package transporttest holds fixtures for tests that run commands through
// the transports: an inventory with every nested kind and stand-ins for the
// guest managers, so a nested route runs for real on this machine.
package transporttest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vigilops/vigil/tools/inventory"
)

// NestedInventory has every nested kind (lxc, vm, docker_container,
// k8s_pod, service under a node or host), with a guest that has its own
// reach, for tests of routing through parents.
func NestedInventory(t testing.TB) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.Parse([]byte(`
resources:
  - name: delly
    kind: node
    reach: local
  - name: media-server
    kind: lxc
    parent: delly
    vmid: 141
  - name: builder
    kind: vm
    parent: delly
    vmid: 203
  - name: jellyfin
    kind: docker_container
    parent: media-server
  - name: buildkit
    kind: docker_container
    parent: builder
    uid: 0f3a9c
  - name: kube
    kind: host
    parent: delly
    reach: {ssh: {host: 10.0.0.7, key_file: /k}}
  - name: api-0
    kind: k8s_pod
    parent: kube
    namespace: prod
  - name: nginx
    kind: service
    parent: media-server
    uid: nginx.service
`))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// FakeManagers puts stand-ins for pct and docker on PATH that run the
// command they are given on this machine, so a nested route runs for real
// through every layer of quoting. The result is the
// environment to give RouterOptions.LocalEnv.
func FakeManagers(t testing.TB) []string {
	t.Helper()
	dir := t.TempDir()
	scripts := map[string]string{
		// pct exec <vmid> -- cmd...
		"pct": "#!/bin/sh\n[ \"$1\" = exec ] || { echo \"pct $*\"; exit 0; }\nshift 2\n[ \"$1\" = -- ] && shift\nexec \"$@\"\n",
		// docker exec [-i] <name> cmd...
		"docker": "#!/bin/sh\n[ \"$1\" = exec ] || { echo \"docker $*\"; exit 0; }\nshift\n[ \"$1\" = -i ] && shift\nshift\nexec \"$@\"\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"PATH=" + dir + ":" + os.Getenv("PATH")}
}
