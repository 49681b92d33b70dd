package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
)

// inventoryFile is the static inventory's YAML form.
type inventoryFile struct {
	Resources []resourceYAML `yaml:"resources"`
}

type resourceYAML struct {
	// ID overrides the derived canonical ID.
	ID   string `yaml:"id"`
	Name string `yaml:"name"`
	Kind string `yaml:"kind"`
	// Aliases are other names people use.
	Aliases []string `yaml:"aliases"`
	// Parent is the name, alias or ID of the resource this one runs in.
	Parent string `yaml:"parent"`
	// Node names the machine a guest runs on when it has no parent in the
	// inventory (a VM reached over SSH directly); otherwise it is derived.
	Node string `yaml:"node"`
	// VMID is an LXC's or VM's Proxmox ID.
	VMID int `yaml:"vmid"`
	// UID is a container's or pod's provider ID; the name by default.
	UID       string    `yaml:"uid"`
	Namespace string    `yaml:"namespace"`
	Reach     reachYAML `yaml:"reach"`
	Facts     Facts     `yaml:"facts"`
	// Shell is bash or sh: the shell commands run with there, and the
	// dialect policy reads them in. Default: bash on nodes, hosts, VMs and
	// LXC containers, sh in docker containers and pods, the host's for a
	// service.
	Shell string `yaml:"shell"`
	// Groups and Labels are what a channel's scope may name the resource
	// by (channels[].scope.hosts: group:NAME, label:KEY=VALUE); what runs
	// inside it is in scope with it.
	Groups []string          `yaml:"groups"`
	Labels map[string]string `yaml:"labels"`
}

// reachYAML accepts `reach: local`, `reach: parent` (the default for
// children) or `reach: {ssh: {...}}`.
type reachYAML struct {
	Reach
}

type reachMapYAML struct {
	Local bool       `yaml:"local"`
	SSH   *SSHConfig `yaml:"ssh"`
}

func (r *reachYAML) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Value {
		case "local":
			r.Local = true
		case "parent", "":
		default:
			return fmt.Errorf("line %d: reach %q: want local, parent or a mapping with ssh", n.Line, n.Value)
		}
		return nil
	case yaml.MappingNode:
		if err := checkKeys(n, reflect.TypeFor[reachMapYAML](), "reach"); err != nil {
			return err
		}
		var m reachMapYAML
		if err := n.Decode(&m); err != nil {
			return err
		}
		r.Local, r.SSH = m.Local, m.SSH
		return nil
	default:
		return fmt.Errorf("line %d: reach: want local, parent or a mapping with ssh", n.Line)
	}
}

// LoadInventory reads a static inventory file (SPEC T3). Decoding is strict:
// unknown keys, duplicate keys, duplicate names or IDs, unknown parents and
// unknown kinds are errors that name the key or resource. IDs not given are
// derived: {kind}:{name} for nodes and hosts, {kind}:{node}:{vmid} for LXCs
// and VMs, {kind}:{parent}:{uid} for containers, pods and services.
func Load(path string) (*Inventory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load inventory: %w", err)
	}
	inv, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load inventory %s: %w", path, err)
	}
	return inv, nil
}

// ParseInventory is LoadInventory for YAML already in memory.
func Parse(data []byte) (*Inventory, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is empty; it needs a resources list", ErrInvalidInventory)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidInventory, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: the file must hold one YAML document", ErrInvalidInventory)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%w: the file is empty; it needs a resources list", ErrInvalidInventory)
	}
	if err := checkKeys(root.Content[0], reflect.TypeFor[inventoryFile](), ""); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInventory, err)
	}
	var f inventoryFile
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInventory, err)
	}
	if len(f.Resources) == 0 {
		return nil, fmt.Errorf("%w: resources: the list is empty", ErrInvalidInventory)
	}
	rs, err := buildResources(f.Resources)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInventory, err)
	}
	return New(rs)
}

// checkKeys walks a YAML node against the Go type it will decode into and
// reports the first mapping key the type does not have, with its line and
// path, so a typo in the inventory is named rather than ignored.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if path != "" && reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil // checks its own keys
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f.Type
			names = append(names, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				where := path
				if where == "" {
					where = "top level"
				}
				return fmt.Errorf("line %d: %s: unknown key %q (known keys: %s)", k.Line, where, k.Value, strings.Join(names, ", "))
			}
			if err := checkKeys(v, ft, joinPath(path, k.Value)); err != nil {
				return err
			}
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]%s", path, i, nameHint(c))); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// nameHint labels a list element by its name key, when it has one.
func nameHint(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" {
			return fmt.Sprintf(" (%q)", n.Content[i+1].Value)
		}
	}
	return ""
}

// buildResources resolves parents (by name, alias or ID) and derives nodes
// and canonical IDs, parents first.
func buildResources(ys []resourceYAML) ([]Resource, error) {
	index := map[string]int{}
	for i, y := range ys {
		label := fmt.Sprintf("resources[%d] (%q)", i, y.Name)
		if y.Name == "" {
			return nil, fmt.Errorf("resources[%d]: name is required", i)
		}
		if !ResourceKind(y.Kind).Valid() {
			if y.Kind == "" {
				return nil, fmt.Errorf("%s: kind is required (one of %s)", label, KindList())
			}
			return nil, fmt.Errorf("%s: kind %q is not one of %s", label, y.Kind, KindList())
		}
		keys := append([]string{y.Name}, y.Aliases...)
		if y.ID != "" {
			keys = append(keys, y.ID)
		}
		for _, k := range keys {
			lk := strings.ToLower(k)
			if j, dup := index[lk]; dup && j != i {
				return nil, fmt.Errorf("%s: %q is already the name, alias or id of resources[%d] (%q)", label, k, j, ys[j].Name)
			}
			index[lk] = i
		}
	}

	parent := make([]int, len(ys))
	for i, y := range ys {
		parent[i] = -1
		if y.Parent == "" {
			continue
		}
		j, ok := index[strings.ToLower(y.Parent)]
		if !ok {
			return nil, fmt.Errorf("resources[%d] (%q): parent %q is not in the inventory", i, y.Name, y.Parent)
		}
		if j == i {
			return nil, fmt.Errorf("resources[%d] (%q): is its own parent", i, y.Name)
		}
		parent[i] = j
	}

	out := make([]Resource, len(ys))
	state := make([]int, len(ys)) // 0 new, 1 in progress, 2 done
	var build func(i int) error
	build = func(i int) error {
		switch state[i] {
		case 1:
			return fmt.Errorf("resources[%d] (%q): parent chain loops back to it", i, ys[i].Name)
		case 2:
			return nil
		}
		state[i] = 1
		y := ys[i]
		label := fmt.Sprintf("resources[%d] (%q)", i, y.Name)
		switch y.Shell {
		case "", string(command.DialectBash), string(command.DialectPOSIX):
		default:
			return fmt.Errorf("%s: shell %q is not bash or sh (e.g. shell: sh for a container without bash)", label, y.Shell)
		}
		r := Resource{
			Name:      y.Name,
			Kind:      ResourceKind(y.Kind),
			Aliases:   y.Aliases,
			Namespace: y.Namespace,
			Reach:     y.Reach.Reach,
			Facts:     y.Facts,
			Shell:     command.Dialect(y.Shell),
			Groups:    y.Groups,
			Labels:    y.Labels,
		}
		for _, g := range y.Groups {
			if !namePattern.MatchString(g) {
				return fmt.Errorf("%s: group %q is not a name (letters, digits, '.', '_', '-')", label, g)
			}
		}
		for k := range y.Labels {
			if !namePattern.MatchString(k) {
				return fmt.Errorf("%s: label key %q is not a name (letters, digits, '.', '_', '-')", label, k)
			}
		}
		var p *Resource
		if parent[i] >= 0 {
			if err := build(parent[i]); err != nil {
				return err
			}
			p = &out[parent[i]]
			r.Parent = p.ID
			r.Node = p.Node
			if y.Node != "" && y.Node != p.Node {
				return fmt.Errorf("%s: node %q contradicts its parent chain, which runs on %q", label, y.Node, p.Node)
			}
		} else {
			r.Node = y.Node
		}

		isGuest := r.Kind == KindLXC || r.Kind == KindVM
		switch {
		case isGuest && y.VMID <= 0:
			return fmt.Errorf("%s: a %s needs vmid (a positive Proxmox ID)", label, r.Kind)
		case !isGuest && y.VMID != 0:
			return fmt.Errorf("%s: vmid only applies to lxc and vm, not %s", label, r.Kind)
		case isGuest && y.UID != "":
			return fmt.Errorf("%s: a %s is identified by vmid, not uid", label, r.Kind)
		case r.Kind != KindK8sPod && y.Namespace != "":
			return fmt.Errorf("%s: namespace only applies to k8s_pod", label)
		}
		if r.Kind == KindK8sPod && r.Namespace == "" {
			r.Namespace = "default"
		}

		var host string
		switch r.Kind {
		case KindNode, KindHost:
			if y.UID != "" {
				return fmt.Errorf("%s: a %s is identified by its name, not uid", label, r.Kind)
			}
			r.UID = y.Name
			if r.Node == "" {
				r.Node = y.Name
			}
		case KindLXC, KindVM:
			r.UID = strconv.Itoa(y.VMID)
			if r.Node == "" {
				return fmt.Errorf("%s: a %s needs a parent node or node", label, r.Kind)
			}
			host = r.Node
		default:
			r.UID = y.UID
			if r.UID == "" {
				r.UID = y.Name
			}
			switch {
			case p != nil:
				host = p.Name
			case y.Node != "":
				host = y.Node
			default:
				return fmt.Errorf("%s: a %s needs a parent", label, r.Kind)
			}
		}
		r.ID = policy.ResourceID(y.ID)
		if r.ID == "" {
			if host == "" {
				r.ID = policy.ResourceID(fmt.Sprintf("%s:%s", r.Kind, r.UID))
			} else {
				r.ID = policy.ResourceID(fmt.Sprintf("%s:%s:%s", r.Kind, host, r.UID))
			}
		}
		out[i] = r
		state[i] = 2
		return nil
	}
	for i := range ys {
		if err := build(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}
