// Package inventory is what vigil knows of the machines it may reach:
// resources (nodes, hosts, guests, containers, pods, services) with their
// parents, aliases and reach, loaded strictly from YAML, looked up by name,
// ID or alias, and searched fuzzily.
package inventory

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/textmatch"
)

// ResourceKind is what sort of thing an inventory resource is (SPEC T3).
type ResourceKind string

const (
	KindNode            ResourceKind = "node"             // a hypervisor node (Proxmox VE)
	KindHost            ResourceKind = "host"             // any other machine
	KindVM              ResourceKind = "vm"               // a QEMU guest on a node
	KindLXC             ResourceKind = "lxc"              // a container on a node
	KindDockerContainer ResourceKind = "docker_container" // a container on a docker host
	KindK8sPod          ResourceKind = "k8s_pod"          // a pod, reached with kubectl from its parent
	KindService         ResourceKind = "service"          // a systemd unit on its parent
)

// ResourceKinds lists every kind, in the order of SPEC T3.
func ResourceKinds() []ResourceKind {
	return []ResourceKind{KindNode, KindHost, KindVM, KindLXC, KindDockerContainer, KindK8sPod, KindService}
}

func (k ResourceKind) Valid() bool { return slices.Contains(ResourceKinds(), k) }

// Resource is one thing vigil can act on: where it lives, what it is called
// and how a command reaches it.
type Resource struct {
	ID      policy.ResourceID
	Name    string
	Kind    ResourceKind
	Aliases []string
	// Parent is the resource this one runs inside ("" for top level).
	Parent policy.ResourceID
	// Node is the name of the machine at the root of the resource's chain:
	// "delly" for the node itself, LXC 141 on it and every container in it.
	Node string
	// UID is the provider's identifier: the VMID of a guest, a container's
	// ID, a pod's name. It is the last part of the canonical ID.
	UID string
	// Namespace is a pod's Kubernetes namespace.
	Namespace string
	// Reach says how commands get to the resource. The zero Reach means
	// through the parent (pct exec, qm guest exec, docker exec, kubectl exec,
	// or, for a service, on the parent itself).
	Reach Reach
	// Facts are static discovery facts from the inventory file.
	Facts Facts
	// Shell is the shell commands run with on the resource (bash or sh):
	// policy classifies a command in that dialect and the transport runs
	// exactly that shell. "" means the default for the kind (see
	// DefaultShell); NewInventory fills it in.
	Shell command.Dialect
	// Groups and Labels name the resource for channel scopes
	// (policy.ScopeHosts).
	Groups []string
	Labels map[string]string
}

// DefaultShell is the shell a resource of kind k runs commands with when
// the inventory does not say: bash on machines (nodes, hosts, VMs, LXC
// containers), sh in docker containers and pods, which often have nothing
// else. A service uses its host's shell.
func DefaultShell(k ResourceKind) command.Dialect {
	switch k {
	case KindDockerContainer, KindK8sPod:
		return command.DialectPOSIX
	}
	return command.DialectBash
}

// shell is the resource's shell, its kind's default when not set.
func (r Resource) ShellOrDefault() command.Dialect {
	if r.Shell != "" {
		return r.Shell
	}
	return DefaultShell(r.Kind)
}

// Reach is how commands reach a resource directly. At most one is set.
type Reach struct {
	Local bool
	SSH   *SSHConfig
}

// Direct reports whether the resource has a transport of its own.
func (r Reach) Direct() bool { return r.Local || r.SSH != nil }

// SSHConfig is how to reach a machine over SSH. The host key is always
// verified against KnownHosts.
type SSHConfig struct {
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
	User string `yaml:"user"`
	// KeyFile is an unencrypted private key (OpenSSH or PEM format).
	KeyFile string `yaml:"key_file"`
	// KnownHosts is a known_hosts file holding the host's key.
	KnownHosts string `yaml:"known_hosts"`
	// Identity is whose login commands use: "" (User, always) or
	// per_person: the SSH user the identity mapping gives the person whose
	// call it is (the asker for reads, the approver for a change), so the
	// host's own sudoers and audit see who acted. A person without one is
	// refused on this host.
	Identity string `yaml:"identity"`
	// AllowedUsers limits the logins a per_person host accepts; empty:
	// any mapped login.
	AllowedUsers []string `yaml:"allowed_users"`
}

// SSHIdentityPerPerson is SSHConfig.Identity of a host that acts as the
// person.
const SSHIdentityPerPerson = "per_person"

// Facts are what is known about a resource without asking it: from the
// inventory file, merged by discover with what a live probe reads.
type Facts struct {
	Ports       []string    `yaml:"ports" json:"ports,omitempty"`
	Services    []string    `yaml:"services" json:"services,omitempty"`
	ConfigPaths []string    `yaml:"config_paths" json:"config_paths,omitempty"`
	LogPaths    []string    `yaml:"log_paths" json:"log_paths,omitempty"`
	BindMounts  []BindMount `yaml:"bind_mounts" json:"bind_mounts,omitempty"`
}

// BindMount maps a path of the parent into the resource.
type BindMount struct {
	// Source is the path on the parent (the docker host, the Proxmox node).
	Source string `yaml:"source" json:"source"`
	// Destination is the path inside the resource.
	Destination string `yaml:"destination" json:"destination"`
	ReadOnly    bool   `yaml:"read_only" json:"read_only,omitempty"`
}

func (r Resource) clone() Resource {
	r.Aliases = slices.Clone(r.Aliases)
	if r.Reach.SSH != nil {
		c := *r.Reach.SSH
		c.AllowedUsers = slices.Clone(c.AllowedUsers)
		r.Reach.SSH = &c
	}
	r.Facts.Ports = slices.Clone(r.Facts.Ports)
	r.Facts.Services = slices.Clone(r.Facts.Services)
	r.Facts.ConfigPaths = slices.Clone(r.Facts.ConfigPaths)
	r.Facts.LogPaths = slices.Clone(r.Facts.LogPaths)
	r.Facts.BindMounts = slices.Clone(r.Facts.BindMounts)
	r.Groups = slices.Clone(r.Groups)
	r.Labels = maps.Clone(r.Labels)
	return r
}

// Inventory is the set of known resources. It is immutable after
// construction and safe for concurrent use; every accessor returns copies.
type Inventory struct {
	list []Resource
	byID map[policy.ResourceID]int
	// byKey indexes lower-cased IDs, names and aliases.
	byKey map[string]int
}

// namePattern is what a name or alias may look like: it is typed after '@' in
// chat and passed to docker and kubectl as it is.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// idPattern is what a canonical ID may look like.
var idPattern = regexp.MustCompile(`^[a-z0-9_]+(:[A-Za-z0-9_./@-]+){1,2}$`)

// NewInventory validates rs and builds an inventory. IDs must be set (the
// YAML loader derives them); names, aliases and IDs must be unique without
// regard to case; parents must exist and form no cycle; kinds must be known;
// every resource must be reachable (a direct transport, or a parent to go
// through with a kind that knows how: lxc, vm, docker_container, k8s_pod,
// service). Errors name the resource and wrap ErrInvalidInventory.
func New(rs []Resource) (*Inventory, error) {
	inv := &Inventory{
		byID:  make(map[policy.ResourceID]int, len(rs)),
		byKey: make(map[string]int, len(rs)*2),
	}
	for _, r := range rs {
		r = r.clone()
		if err := inv.add(r); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidInventory, err)
		}
	}
	for _, r := range inv.list {
		if err := inv.checkLinks(r); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidInventory, err)
		}
	}
	for i := range inv.list {
		inv.list[i].Shell = inv.effectiveShell(inv.list[i])
	}
	return inv, nil
}

// effectiveShell is r's shell: its own, or its kind's default, or for a
// service its host's (its commands run there).
func (inv *Inventory) effectiveShell(r Resource) command.Dialect {
	for r.Shell == "" && r.Kind == KindService && r.Parent != "" {
		r = inv.list[inv.byID[r.Parent]]
	}
	return r.ShellOrDefault()
}

func (inv *Inventory) add(r Resource) error {
	label := fmt.Sprintf("resource %q", r.Name)
	if !namePattern.MatchString(r.Name) {
		return fmt.Errorf("resource %q: name must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", r.Name)
	}
	if !r.Kind.Valid() {
		return fmt.Errorf("%s: kind %q is not one of %s", label, r.Kind, KindList())
	}
	if !idPattern.MatchString(string(r.ID)) {
		return fmt.Errorf("%s: id %q is not a canonical ID like kind:host:uid", label, r.ID)
	}
	if _, dup := inv.byID[r.ID]; dup {
		return fmt.Errorf("%s: duplicate id %q", label, r.ID)
	}
	if r.Reach.Local && r.Reach.SSH != nil {
		return fmt.Errorf("%s: reach is both local and ssh", label)
	}
	if s := r.Reach.SSH; s != nil {
		if s.Host == "" {
			return fmt.Errorf("%s: reach.ssh.host is required", label)
		}
		if s.Port < 0 || s.Port > 65535 {
			return fmt.Errorf("%s: reach.ssh.port %d is out of range", label, s.Port)
		}
		switch s.Identity {
		case "":
			if len(s.AllowedUsers) > 0 {
				return fmt.Errorf("%s: reach.ssh.allowed_users needs reach.ssh.identity: %s", label, SSHIdentityPerPerson)
			}
		case SSHIdentityPerPerson:
		default:
			return fmt.Errorf("%s: reach.ssh.identity %q is not %s (leave it out to log in as reach.ssh.user)", label, s.Identity, SSHIdentityPerPerson)
		}
		for _, u := range s.AllowedUsers {
			if u == "" || strings.ContainsAny(u, " \t@:/") {
				return fmt.Errorf("%s: reach.ssh.allowed_users entry %q is not a login name", label, u)
			}
		}
	}
	switch r.Shell {
	case "", command.DialectBash, command.DialectPOSIX:
	default:
		return fmt.Errorf("%s: shell %q is not bash or sh", label, r.Shell)
	}
	if (r.Kind == KindLXC || r.Kind == KindVM) && r.UID == "" {
		return fmt.Errorf("%s: %s needs a vmid", label, r.Kind)
	}
	keys := append([]string{r.Name}, r.Aliases...)
	for i, k := range keys {
		if i > 0 && !namePattern.MatchString(k) {
			return fmt.Errorf("%s: alias %q must be 1-63 letters, digits, '.', '_' or '-'", label, k)
		}
	}
	keys = append(keys, string(r.ID))
	idx := len(inv.list)
	for _, k := range keys {
		lk := strings.ToLower(k)
		if j, dup := inv.byKey[lk]; dup {
			if j == idx {
				continue // a resource may list its own name as an alias
			}
			return fmt.Errorf("%s: %q is already the name, alias or id of resource %q", label, k, inv.list[j].Name)
		}
		inv.byKey[lk] = idx
	}
	inv.byID[r.ID] = idx
	inv.list = append(inv.list, r)
	return nil
}

func (inv *Inventory) checkLinks(r Resource) error {
	label := fmt.Sprintf("resource %q", r.Name)
	if r.Parent == "" {
		if !r.Reach.Direct() {
			return fmt.Errorf("%s: has no parent and no reach (local or ssh)", label)
		}
		return nil
	}
	if _, ok := inv.byID[r.Parent]; !ok {
		return fmt.Errorf("%s: parent %q is not in the inventory", label, r.Parent)
	}
	seen := map[policy.ResourceID]bool{r.ID: true}
	for p := r.Parent; p != ""; p = inv.list[inv.byID[p]].Parent {
		if seen[p] {
			return fmt.Errorf("%s: parent chain loops through %q", label, p)
		}
		seen[p] = true
	}
	if !r.Reach.Direct() {
		switch r.Kind {
		case KindLXC, KindVM, KindDockerContainer, KindK8sPod, KindService:
		default:
			return fmt.Errorf("%s: a %s needs its own reach (local or ssh); only lxc, vm, docker_container, k8s_pod and service are reached through a parent", label, r.Kind)
		}
	}
	parent := inv.list[inv.byID[r.Parent]]
	if (r.Kind == KindLXC || r.Kind == KindVM) && !r.Reach.Direct() && parent.Kind != KindNode {
		return fmt.Errorf("%s: an %s is reached with pct/qm on its parent, which must be a node, not a %s", label, r.Kind, parent.Kind)
	}
	return nil
}

func KindList() string {
	ks := ResourceKinds()
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// DefaultInventory is the embedded default (SPEC T3, S4): the local machine
// as node:localhost, reached by the local transport. The machine's host name
// is an alias when it is a valid name.
func Default() *Inventory {
	r := Resource{ID: "node:localhost", Name: "localhost", Kind: KindNode, Node: "localhost", UID: "localhost", Reach: Reach{Local: true}}
	if h, err := os.Hostname(); err == nil {
		h, _, _ = strings.Cut(h, ".")
		if namePattern.MatchString(h) && !strings.EqualFold(h, "localhost") {
			r.Aliases = []string{h}
		}
	}
	inv, err := New([]Resource{r})
	if err != nil {
		// The resource above is fixed; only a programming error gets here.
		panic(err)
	}
	return inv
}

// Len is the number of resources.
func (inv *Inventory) Len() int { return len(inv.list) }

// Lookup finds a resource by ID, name or alias, ignoring case.
func (inv *Inventory) Lookup(nameOrIDOrAlias string) (Resource, bool) {
	i, ok := inv.byKey[strings.ToLower(strings.TrimPrefix(strings.TrimSpace(nameOrIDOrAlias), "@"))]
	if !ok {
		return Resource{}, false
	}
	return inv.list[i].clone(), true
}

// Get finds a resource by canonical ID.
func (inv *Inventory) Get(id policy.ResourceID) (Resource, bool) {
	i, ok := inv.byID[id]
	if !ok {
		return Resource{}, false
	}
	return inv.list[i].clone(), true
}

// All returns every resource in inventory order.
func (inv *Inventory) All() []Resource {
	out := make([]Resource, len(inv.list))
	for i, r := range inv.list {
		out[i] = r.clone()
	}
	return out
}

// Children returns the resources whose parent is id, in inventory order.
func (inv *Inventory) Children(id policy.ResourceID) []Resource {
	var out []Resource
	for _, r := range inv.list {
		if r.Parent == id {
			out = append(out, r.clone())
		}
	}
	return out
}

// RoutingChain returns the resource followed by its ancestors up to the top:
// for a docker container in LXC 141 on node delly, [jellyfin, media-server,
// delly]. It is nil when id is unknown.
func (inv *Inventory) RoutingChain(id policy.ResourceID) []Resource {
	var out []Resource
	for cur := id; cur != "" && len(out) <= len(inv.list); {
		i, ok := inv.byID[cur]
		if !ok {
			break
		}
		out = append(out, inv.list[i].clone())
		cur = inv.list[i].Parent
	}
	return out
}

// ToPolicy is the resource as policy's resolved context records it. Target is
// the resource's name, which is what tools accept as `target`.
func (r Resource) ToPolicy() policy.Resource {
	return policy.Resource{
		ID:      r.ID,
		Kind:    string(r.Kind),
		Name:    r.Name,
		Aliases: slices.Clone(r.Aliases),
		Parent:  r.Parent,
		Node:    r.Node,
		Target:  r.Name,
	}
}

// ScopeReaches implements policy.ScopeResolver for the inventory: the
// resource target names (by ID, name or alias) as a host-kind reach,
// with the resources it runs inside as its Via.
func (inv *Inventory) ScopeReaches(target string) ([]policy.Reach, bool) {
	r, ok := inv.Lookup(target)
	if !ok {
		return nil, false
	}
	chain := inv.RoutingChain(r.ID)
	if len(chain) == 0 {
		chain = []Resource{r}
	}
	reach := func(x Resource) policy.Reach {
		return policy.Reach{Kind: policy.ScopeHosts, Name: x.Name, Aliases: slices.Clone(x.Aliases),
			Labels: maps.Clone(x.Labels), Groups: slices.Clone(x.Groups)}
	}
	out := reach(chain[0])
	for _, x := range chain[1:] {
		out.Via = append(out.Via, reach(x))
	}
	return []policy.Reach{out}, true
}

// Filter is the inventory of the resources keep accepts, with the
// resources they run inside (which a resource is reached through), in
// inventory order: a channel's view of the inventory for its scope.
func (inv *Inventory) Filter(keep func(Resource) bool) (*Inventory, error) {
	in := make(map[policy.ResourceID]bool, len(inv.list))
	for _, r := range inv.list {
		if !keep(r.clone()) {
			continue
		}
		for _, c := range inv.RoutingChain(r.ID) {
			in[c.ID] = true
		}
	}
	var rs []Resource
	for _, r := range inv.list {
		if in[r.ID] {
			rs = append(rs, r)
		}
	}
	return New(rs)
}

// Groups lists every group named in the inventory, sorted.
func (inv *Inventory) Groups() []string {
	var out []string
	for _, r := range inv.list {
		for _, g := range r.Groups {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Search returns resources whose ID, name, alias or kind contains q, ignoring
// case, best first: exact name or alias matches, then name prefixes, then
// the rest in inventory order.
func (inv *Inventory) Search(q string) []Resource {
	q = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(q), "@"))
	if q == "" {
		return nil
	}
	type hit struct {
		r    Resource
		rank int
	}
	var hits []hit
	for _, r := range inv.list {
		rank := -1
		for _, k := range append([]string{r.Name}, r.Aliases...) {
			k = strings.ToLower(k)
			switch {
			case k == q:
				rank = max(rank, 3)
			case strings.HasPrefix(k, q):
				rank = max(rank, 2)
			case strings.Contains(k, q):
				rank = max(rank, 1)
			}
		}
		if rank < 0 && (strings.Contains(strings.ToLower(string(r.ID)), q) || strings.Contains(string(r.Kind), q)) {
			rank = 0
		}
		if rank >= 0 {
			hits = append(hits, hit{r.clone(), rank})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return b.rank - a.rank })
	out := make([]Resource, len(hits))
	for i, h := range hits {
		out[i] = h.r
	}
	return out
}

// Suggest offers up to five names close to q for a "did you mean" line: names
// or aliases that contain q or are contained in it, share a prefix of four or
// more characters, or are within edit distance two.
func (inv *Inventory) Suggest(q string) []string {
	q = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(q), "@"))
	if q == "" {
		return nil
	}
	var out []string
	for _, r := range inv.list {
		for _, k := range append([]string{r.Name}, r.Aliases...) {
			lk := strings.ToLower(k)
			if strings.Contains(lk, q) || strings.Contains(q, lk) || textmatch.CommonPrefix(lk, q) >= 4 || textmatch.Distance(lk, q) <= 2 {
				out = append(out, r.Name)
				break
			}
		}
		if len(out) == 5 {
			break
		}
	}
	return out
}

// resolveTarget looks a target up for a tool, or says it is not there with
// suggestions, as a NOT_FOUND block the model can act on.
func (inv *Inventory) ResolveTarget(field, target string) (Resource, *policy.Block) {
	r, ok := inv.Lookup(target)
	if ok {
		return r, nil
	}
	b := &policy.Block{
		Code:         policy.CodeNotFound,
		Message:      fmt.Sprintf("%s %q is not in the inventory", field, target),
		RecoveryHint: "use the query tool (action=search) to find the resource's name",
		Details:      map[string]any{"field": field, "target": target},
	}
	if s := inv.Suggest(target); len(s) > 0 {
		b.Message += "; did you mean " + strings.Join(s, ", ") + "?"
		b.Details["suggestions"] = s
	}
	return Resource{}, b
}

// ErrInvalidInventory: an inventory failed validation. Callers that wire the
// package may match it with errors.Is.
var ErrInvalidInventory = errors.New("invalid inventory")
