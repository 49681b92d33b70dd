package inventory

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
)

const exampleInventory = "../../configs/inventory.example.yaml"

func loadExample(t *testing.T) *Inventory {
	t.Helper()
	inv, err := Load(exampleInventory)
	if err != nil {
		t.Fatalf("LoadInventory(example): %v", err)
	}
	return inv
}

func TestLoadExampleInventory(t *testing.T) {
	inv := loadExample(t)
	want := map[string]policy.ResourceID{
		"localhost":    "node:localhost",
		"delly":        "node:delly",
		"media-server": "lxc:delly:141",
		"builder":      "vm:delly:203",
		"jellyfin":     "docker_container:media-server:jellyfin",
	}
	if inv.Len() != len(want) {
		t.Errorf("Len = %d, want %d", inv.Len(), len(want))
	}
	for name, id := range want {
		r, ok := inv.Lookup(name)
		if !ok || r.ID != id {
			t.Errorf("Lookup(%s) = %s, %v; want %s", name, r.ID, ok, id)
		}
		if r.Node != "delly" && name != "localhost" {
			t.Errorf("%s: Node = %q, want delly", name, r.Node)
		}
	}
	for _, key := range []string{"PVE", "media", "lxc:delly:141", "@jellyfin", "  ci "} {
		if _, ok := inv.Lookup(key); !ok {
			t.Errorf("Lookup(%q) found nothing", key)
		}
	}
	d, _ := inv.Lookup("delly")
	if d.Reach.SSH == nil || d.Reach.SSH.Host != "192.168.1.10" || d.Reach.SSH.User != "root" {
		t.Errorf("delly reach = %+v", d.Reach)
	}
	j, _ := inv.Lookup("jellyfin")
	if len(j.Facts.BindMounts) != 2 || j.Facts.BindMounts[1] != (BindMount{Source: "/mnt/media", Destination: "/media", ReadOnly: true}) {
		t.Errorf("jellyfin bind mounts = %+v", j.Facts.BindMounts)
	}
	if got := resourceNames(inv.Children("node:delly")); !slices.Equal(got, []string{"media-server", "builder"}) {
		t.Errorf("Children(delly) = %v", got)
	}
	pr := j.ToPolicy()
	if pr.ID != j.ID || pr.Target != "jellyfin" || pr.Parent != "lxc:delly:141" || pr.Node != "delly" || pr.Kind != "docker_container" {
		t.Errorf("ToPolicy = %+v", pr)
	}
}

func TestRoutingChainFromExample(t *testing.T) {
	inv := loadExample(t)
	chain := inv.RoutingChain("docker_container:media-server:jellyfin")
	var got []policy.ResourceID
	for _, r := range chain {
		got = append(got, r.ID)
	}
	want := []policy.ResourceID{"docker_container:media-server:jellyfin", "lxc:delly:141", "node:delly"}
	if !slices.Equal(got, want) {
		t.Errorf("RoutingChain = %v, want %v", got, want)
	}
	if inv.RoutingChain("node:nope") != nil {
		t.Error("RoutingChain of an unknown ID is not nil")
	}
}

func TestInventoryAccessorsReturnCopies(t *testing.T) {
	inv := loadExample(t)
	r, _ := inv.Lookup("delly")
	r.Aliases[0] = "mutated"
	r.Reach.SSH.Host = "evil"
	again, _ := inv.Lookup("delly")
	if again.Aliases[0] != "pve" || again.Reach.SSH.Host != "192.168.1.10" {
		t.Errorf("inventory changed through a returned copy: %+v", again)
	}
}

func TestDefaultInventory(t *testing.T) {
	inv := Default()
	r, ok := inv.Lookup("localhost")
	if !ok || r.ID != "node:localhost" || r.Kind != KindNode || !r.Reach.Local {
		t.Fatalf("default inventory localhost = %+v, %v", r, ok)
	}
	if inv.Len() != 1 {
		t.Errorf("Len = %d, want 1", inv.Len())
	}
}

func TestParseInventoryErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"empty", ``, "empty"},
		{"no resources", "resources: []\n", "list is empty"},
		{"unknown top-level key", "resource:\n  - name: a\n", `line 1: top level: unknown key "resource"`},
		{"unknown resource key", "resources:\n  - name: a\n    kind: node\n    reach: local\n    hostname: x\n", `line 5: resources[0] ("a"): unknown key "hostname"`},
		{"unknown ssh key", "resources:\n  - name: a\n    kind: node\n    reach:\n      ssh:\n        host: h\n        pasword: x\n", `reach.ssh: unknown key "pasword"`},
		{"unknown facts key", "resources:\n  - name: a\n    kind: node\n    reach: local\n    facts:\n      portz: [1]\n", `facts: unknown key "portz"`},
		{"bad reach word", "resources:\n  - name: a\n    kind: node\n    reach: telnet\n", `reach "telnet"`},
		{"duplicate yaml key", "resources:\n  - name: a\n    name: b\n    kind: node\n", `"name" already defined`},
		{"missing kind", "resources:\n  - name: a\n    reach: local\n", `resources[0] ("a"): kind is required`},
		{"bad kind", "resources:\n  - name: a\n    kind: server\n    reach: local\n", `kind "server" is not one of node, host, vm, lxc, docker_container, k8s_pod, service`},
		{"duplicate name", "resources:\n  - name: a\n    kind: node\n    reach: local\n  - name: A\n    kind: host\n    reach: local\n", `resources[1] ("A"): "A" is already the name, alias or id of resources[0] ("a")`},
		{"alias clashes with name", "resources:\n  - name: a\n    kind: node\n    reach: local\n  - name: b\n    kind: host\n    reach: local\n    aliases: [a]\n", `resources[1] ("b"): "a" is already`},
		{"duplicate id", "resources:\n  - name: a\n    kind: node\n    reach: local\n  - name: b\n    id: node:a\n    kind: host\n    reach: local\n", `resource "b": duplicate id "node:a"`},
		{"unknown parent", "resources:\n  - name: ct\n    kind: lxc\n    vmid: 5\n    parent: dely\n", `resources[0] ("ct"): parent "dely" is not in the inventory`},
		{"parent loop", "resources:\n  - name: a\n    kind: docker_container\n    parent: b\n  - name: b\n    kind: docker_container\n    parent: a\n", "loops"},
		{"no reach", "resources:\n  - name: a\n    kind: host\n", `resource "a": has no parent and no reach`},
		{"lxc without vmid", "resources:\n  - name: n\n    kind: node\n    reach: local\n  - name: ct\n    kind: lxc\n    parent: n\n", `resources[1] ("ct"): a lxc needs vmid`},
		{"lxc on a host", "resources:\n  - name: n\n    kind: host\n    reach: local\n  - name: ct\n    kind: lxc\n    vmid: 3\n    parent: n\n", `resource "ct": an lxc is reached with pct/qm on its parent, which must be a node`},
		{"host without reach under parent", "resources:\n  - name: n\n    kind: node\n    reach: local\n  - name: h\n    kind: host\n    parent: n\n", `resource "h": a host needs its own reach`},
		{"bad name", "resources:\n  - name: \"web 1\"\n    kind: host\n    reach: local\n", `resource "web 1": name must be`},
		{"vmid on a container", "resources:\n  - name: n\n    kind: node\n    reach: local\n  - name: c\n    kind: docker_container\n    parent: n\n    vmid: 4\n", "vmid only applies to lxc and vm"},
		{"two documents", "resources:\n  - name: a\n    kind: node\n    reach: local\n---\nresources: []\n", "one YAML document"},
		{"bad shell", "resources:\n  - name: a\n    kind: node\n    reach: local\n    shell: zsh\n", `resources[0] ("a"): shell "zsh" is not bash or sh (e.g. shell: sh`},
		{"wrong type", "resources:\n  - name: n\n    kind: node\n    reach: local\n  - name: ct\n    kind: lxc\n    parent: n\n    vmid: abc\n", "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("ParseInventory accepted it: %d resources", inv.Len())
			}
			if !errors.Is(err, ErrInvalidInventory) {
				t.Errorf("error does not wrap ErrInvalidInventory: %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseInventoryDerivesIDs(t *testing.T) {
	const y = `
resources:
  - name: k8s
    kind: host
    reach: {ssh: {host: 10.0.0.5, key_file: /k}}
  - name: api-0
    kind: k8s_pod
    parent: k8s
    namespace: prod
  - name: nginx
    kind: service
    parent: k8s
    uid: nginx.service
  - name: lonely-vm
    kind: vm
    node: far-node
    vmid: 7
    reach: {ssh: {host: 10.0.0.9, key_file: /k}}
  - name: explicit
    id: host:custom
    kind: host
    reach: local
`
	inv, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]policy.ResourceID{
		"k8s": "host:k8s", "api-0": "k8s_pod:k8s:api-0", "nginx": "service:k8s:nginx.service",
		"lonely-vm": "vm:far-node:7", "explicit": "host:custom",
	} {
		if r, _ := inv.Lookup(name); r.ID != id {
			t.Errorf("%s: ID = %q, want %q", name, r.ID, id)
		}
	}
	if r, _ := inv.Lookup("api-0"); r.Namespace != "prod" {
		t.Errorf("namespace = %q", r.Namespace)
	}
}

func TestLoadInventoryMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestSearchAndSuggest(t *testing.T) {
	inv := loadExample(t)
	got := resourceNames(inv.Search("MEDIA"))
	if len(got) == 0 || got[0] != "media-server" {
		t.Errorf("Search(MEDIA) = %v, want media-server first", got)
	}
	if got := resourceNames(inv.Search("lxc")); !slices.Equal(got, []string{"media-server"}) {
		t.Errorf("Search(lxc) = %v, want the LXC by kind", got)
	}
	if got := resourceNames(inv.Search("docker_container:media")); !slices.Equal(got, []string{"jellyfin"}) {
		t.Errorf("Search by ID part = %v", got)
	}
	if got := inv.Suggest("jelyfin"); !slices.Equal(got, []string{"jellyfin"}) {
		t.Errorf("Suggest(jelyfin) = %v", got)
	}
	if got := inv.Suggest("mediaserver01"); !slices.Contains(got, "media-server") {
		t.Errorf("Suggest(mediaserver01) = %v, want media-server by prefix", got)
	}
}

func TestInventoryShells(t *testing.T) {
	inv, err := Parse([]byte(`
resources:
  - name: n
    kind: node
    reach: local
  - name: plain
    kind: host
    reach: local
    shell: sh
  - name: vm1
    kind: vm
    parent: n
    vmid: 7
  - name: ct
    kind: lxc
    parent: n
    vmid: 8
  - name: app
    kind: docker_container
    parent: ct
  - name: fat
    kind: docker_container
    parent: ct
    shell: bash
  - name: pod
    kind: k8s_pod
    parent: n
  - name: web
    kind: service
    parent: plain
  - name: db
    kind: service
    parent: n
  - name: odd
    kind: service
    parent: n
    shell: sh
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]command.Dialect{
		"n": "bash", "plain": "sh", "vm1": "bash", "ct": "bash", "app": "sh", "fat": "bash",
		"pod": "sh", "web": "sh", "db": "bash", "odd": "sh",
	}
	for name, d := range want {
		r, _ := inv.Lookup(name)
		if r.Shell != d {
			t.Errorf("%s: shell %q, want %q", name, r.Shell, d)
		}
	}
	if _, err := New([]Resource{{ID: "node:x", Name: "x", Kind: KindNode, UID: "x", Reach: Reach{Local: true}, Shell: "fish"}}); err == nil ||
		!strings.Contains(err.Error(), `shell "fish" is not bash or sh`) {
		t.Errorf("NewInventory with shell fish: %v", err)
	}
}

// resourceNames lists the names of rs, in order.
func resourceNames(rs []Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// Groups and labels name resources for channel scopes, and what runs
// inside a resource reaches its scope through it.
func TestScopeGroupsAndLabels(t *testing.T) {
	inv, err := Parse([]byte(`resources:
  - name: pve
    kind: node
    reach: local
    groups: [hypervisors]
    labels: {team: infra}
  - name: media
    kind: lxc
    vmid: 101
    parent: pve
    labels: {team: media}
  - name: jelly
    kind: docker_container
    parent: media
`))
	if err != nil {
		t.Fatal(err)
	}
	if g := inv.Groups(); len(g) != 1 || g[0] != "hypervisors" {
		t.Errorf("groups = %v", g)
	}
	rs, ok := inv.ScopeReaches("JELLY")
	if !ok || len(rs) != 1 {
		t.Fatalf("reaches = %v %v", rs, ok)
	}
	r := rs[0]
	if r.Name != "jelly" || len(r.Via) != 2 || r.Via[0].Labels["team"] != "media" || r.Via[1].Groups[0] != "hypervisors" {
		t.Fatalf("reach = %+v", r)
	}
	if (&policy.Scope{Hosts: []string{"label:team=media"}}).Check("jelly", rs) != nil {
		t.Error("a container in a labelled LXC is in the label's scope")
	}
	if (&policy.Scope{Hosts: []string{"label:team=infra"}}).Check("media", mustReach(t, inv, "media")) != nil {
		t.Error("an LXC on a labelled node is in the node's scope")
	}
	if (&policy.Scope{Hosts: []string{"label:team=media"}}).Check("pve", mustReach(t, inv, "pve")) == nil {
		t.Error("the node above the labelled LXC is not in its scope")
	}
	if _, ok := inv.ScopeReaches("nothing"); ok {
		t.Error("an unknown name is placed")
	}
	for _, bad := range []string{"groups: [\"a b\"]", "labels: {\"te am\": x}"} {
		if _, err := Parse([]byte("resources:\n  - name: a\n    kind: node\n    reach: local\n    " + bad + "\n")); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func mustReach(t *testing.T, inv *Inventory, name string) []policy.Reach {
	t.Helper()
	rs, ok := inv.ScopeReaches(name)
	if !ok {
		t.Fatalf("%s not placed", name)
	}
	return rs
}
