package policy

import (
	"strings"
	"testing"
)

func TestRolesOf(t *testing.T) {
	var (
		none     = RoleSet{}
		viewer   = RoleSet{Viewer: true}
		operator = RoleSet{Viewer: true, Operator: true}
		all      = RoleSet{Viewer: true, Operator: true, Approver: true}
	)
	slack := ChannelPolicy{Match: "slack:C1", Level: LevelControlled, Approvers: []string{"U_BOSS", "usergroup:S_SRE"}}
	tests := []struct {
		name string
		cp   ChannelPolicy
		s    Subject
		want RoleSet
	}{
		{"viewers empty: anyone views", slack, Subject{User: "U_ANY"}, viewer},
		{"listed approver holds every role", slack, Subject{User: "U_BOSS"}, all},
		{"operators empty: operators are the approvers", slack, Subject{User: "U_BOSS"}, all},
		{"usergroup entry", slack, Subject{User: "U_X", Groups: []string{"usergroup:S_OTHER", "usergroup:S_SRE"}}, all},
		{"other usergroup", slack, Subject{User: "U_X", Groups: []string{"usergroup:S_OTHER"}}, viewer},
		{"group name as user ID does not match", slack, Subject{User: "usergroup:S_SRE"}, viewer},
		{"platform approver", slack, Subject{User: "U_X", PlatformApprover: true}, all},
		{"local outside the console is nobody special", slack, Subject{User: "U_X", Local: true}, viewer},
		{"console local user holds every role",
			ChannelPolicy{Match: ConsoleChannel, Level: LevelControlled}, Subject{User: "alice", Local: true}, all},
		{"console non-local user",
			ChannelPolicy{Match: ConsoleChannel, Level: LevelControlled}, Subject{User: "bob"}, viewer},
		{"explicit operators",
			ChannelPolicy{Match: "slack:C1", Operators: []string{"U_OP"}, Approvers: []string{"U_BOSS"}}, Subject{User: "U_OP"}, operator},
		{"approver is an operator even when operators are listed",
			ChannelPolicy{Match: "slack:C1", Operators: []string{"U_OP"}, Approvers: []string{"U_BOSS"}}, Subject{User: "U_BOSS"}, all},
		{"viewers listed: others see nothing",
			ChannelPolicy{Match: "slack:C1", Viewers: []string{"U_V"}, Approvers: []string{"U_BOSS"}}, Subject{User: "U_ANY"}, none},
		{"viewers listed: listed viewer",
			ChannelPolicy{Match: "slack:C1", Viewers: []string{"usergroup:S_ALL"}}, Subject{User: "U_ANY", Groups: []string{"usergroup:S_ALL"}}, viewer},
		{"viewers listed: approver still views",
			ChannelPolicy{Match: "slack:C1", Viewers: []string{"U_V"}, Approvers: []string{"U_BOSS"}}, Subject{User: "U_BOSS"}, all},
		{"empty user matches no empty entry",
			ChannelPolicy{Match: "slack:C1", Viewers: []string{"U_V"}, Approvers: []string{""}}, Subject{}, none},
		{"matrix user", ChannelPolicy{Match: "matrix:!r:example.org", Approvers: []string{"@alice:example.org"}},
			Subject{User: "@alice:example.org"}, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cp.RolesOf(tt.s); got != tt.want {
				t.Errorf("RolesOf(%+v) = %+v, want %+v", tt.s, got, tt.want)
			}
		})
	}
}

func TestRolesValidate(t *testing.T) {
	tests := []struct {
		name string
		cp   ChannelPolicy
		want []string // substrings of the error; none means valid
	}{
		{"controlled with approvers", ChannelPolicy{Match: "slack:C1", Level: LevelControlled, Approvers: []string{"U1"}}, nil},
		{"console controlled without approvers", ChannelPolicy{Match: "console", Level: LevelControlled}, nil},
		{"read only without approvers", ChannelPolicy{Match: "default", Level: LevelReadOnly}, nil},
		{"autonomous without approvers", ChannelPolicy{Match: "matrix:!r:example.org", Level: LevelAutonomous}, nil},
		{"matrix controlled by power level", ChannelPolicy{Match: "matrix:!r:example.org", Level: LevelControlled}, nil},
		{"controlled without approvers",
			ChannelPolicy{Match: "slack:C1", Level: LevelControlled},
			[]string{"channels[slack:C1].approvers", "nobody can approve", "usergroup:<id>", "read_only"}},
		{"default controlled without approvers",
			ChannelPolicy{Match: "default", Level: LevelControlled}, []string{"channels[default].approvers"}},
		{"operators do not count as approvers",
			ChannelPolicy{Match: "slack:C1", Level: LevelControlled, Operators: []string{"U1"}}, []string{"channels[slack:C1].approvers"}},
		{"bad level", ChannelPolicy{Match: "slack:C1", Level: "yolo"},
			[]string{`channels[slack:C1].level: "yolo" is not a control level`, "read_only, controlled or autonomous"}},
		{"empty level", ChannelPolicy{Match: "slack:C1"}, []string{"channels[slack:C1].level"}},
		{"bad match", ChannelPolicy{Match: "general", Level: LevelReadOnly}, []string{"channels[general].match"}},
		{"empty match", ChannelPolicy{Level: LevelReadOnly}, []string{"channels[].match"}},
		{"empty entry", ChannelPolicy{Match: "slack:C1", Level: LevelControlled, Approvers: []string{"U1", ""}},
			[]string{"channels[slack:C1].approvers[1]: empty entry"}},
		{"bare usergroup", ChannelPolicy{Match: "slack:C1", Level: LevelReadOnly, Viewers: []string{"usergroup:"}},
			[]string{"channels[slack:C1].viewers[0]"}},
		{"spaces", ChannelPolicy{Match: "slack:C1", Level: LevelReadOnly, Operators: []string{" U1"}},
			[]string{"channels[slack:C1].operators[0]", "spaces"}},
		{"every problem reported", ChannelPolicy{Match: "x", Level: "y"}, []string{"channels[x].match", "channels[x].level"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cp.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestRolesLookupChannel(t *testing.T) {
	ps := []ChannelPolicy{
		{Match: "default", Level: LevelReadOnly},
		{Match: "slack:C1", Level: LevelControlled, Approvers: []string{"U1"}},
	}
	if cp, ok := LookupChannel(ps, "slack:C1"); !ok || cp.Level != LevelControlled {
		t.Errorf("own entry: %+v %v", cp, ok)
	}
	if cp, ok := LookupChannel(ps, "slack:C2"); !ok || cp.Level != LevelReadOnly || cp.Match != "slack:C2" {
		t.Errorf("default entry: %+v %v", cp, ok)
	}
	if cp, ok := LookupChannel(ps[1:], "slack:C2"); ok || cp.Level != LevelReadOnly {
		t.Errorf("no entry must be read-only: %+v %v", cp, ok)
	}
}

func TestRolesControlLevel(t *testing.T) {
	for l, want := range map[ControlLevel]bool{LevelReadOnly: false, LevelControlled: true, LevelAutonomous: true, "": false, "CONTROLLED": false} {
		if got := l.AllowsWrites(); got != want {
			t.Errorf("%q.AllowsWrites() = %v", l, got)
		}
	}
	if !(ChannelPolicy{Match: ConsoleChannel}).SelfApproval() || (ChannelPolicy{Match: "slack:C1"}).SelfApproval() {
		t.Error("SelfApproval: console only by default")
	}
}

func TestHolders(t *testing.T) {
	slack := ChannelPolicy{Match: "slack:C1", Level: LevelControlled, Operators: []string{"U_OP"},
		Approvers: []string{"U_BOSS", "usergroup:S_SRE", "U_OP"}}
	tests := []struct {
		name     string
		cp       ChannelPolicy
		role     Role
		platform string
		want     string
	}{
		{"operators include the approvers, once each", slack, RoleOperator, "",
			"U_OP, U_BOSS and members of user group S_SRE"},
		{"approvers", slack, RoleApprover, "", "U_BOSS, members of user group S_SRE and U_OP"},
		{"empty operators mean the approvers", ChannelPolicy{Match: "slack:C1", Approvers: []string{"U_BOSS"}}, RoleOperator, "", "U_BOSS"},
		{"platform approvers are named", ChannelPolicy{Match: "matrix:!r:hs"}, RoleOperator,
			"room members with power level 50 or more", "room members with power level 50 or more"},
		{"lists and platform", ChannelPolicy{Match: "matrix:!r:hs", Operators: []string{"@op:hs"}}, RoleOperator,
			"room members with power level 50 or more", "@op:hs and room members with power level 50 or more"},
		{"nobody", ChannelPolicy{Match: "slack:C1"}, RoleOperator, "", "nobody (this channel's configuration lists no operators)"},
		{"viewers empty: everyone", slack, RoleViewer, "", "everyone in the channel"},
		{"console", ChannelPolicy{Match: ConsoleChannel}, RoleOperator, "", "the person at vigil's terminal"},
		{"long lists are cut", ChannelPolicy{Match: "slack:C1", Approvers: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}},
			RoleApprover, "", "a, b, c, d, e, f, g and 3 more in the channel's configuration"},
	}
	for _, tt := range tests {
		if got := tt.cp.Holders(tt.role, tt.platform); got != tt.want {
			t.Errorf("%s: Holders = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRequesterAndMayStop(t *testing.T) {
	cp := ChannelPolicy{Match: "slack:C1", Level: LevelControlled, Operators: []string{"U_OP"}, Approvers: []string{"U_BOSS"}}
	if r := cp.Requester(Subject{User: "U_OP"}); !r.Operator || r.User != "U_OP" || r.Operators != "U_OP and U_BOSS" {
		t.Errorf("operator: %+v", r)
	}
	if r := cp.Requester(Subject{User: "U_VIEW"}); r.Operator || r.System {
		t.Errorf("viewer: %+v", r)
	}
	if r := cp.Requester(Subject{User: "U_X", PlatformApprover: true}); !r.Operator {
		t.Errorf("a platform approver is an operator: %+v", r)
	}
	if r := SystemRequester("alertmanager"); !r.System || r.Operator || r.User != "alertmanager" {
		t.Errorf("system requester: %+v", r)
	}
	viewer := RoleSet{Viewer: true}
	for _, tt := range []struct {
		user, requester string
		roles           RoleSet
		want            bool
	}{
		{"U_A", "U_A", viewer, true},
		{"U_B", "U_A", viewer, false},
		{"U_B", "U_A", RoleSet{Viewer: true, Operator: true}, true},
		{"U_B", "U_A", RoleSet{Viewer: true, Operator: true, Approver: true}, true},
		{"", "", viewer, false},
		{"U_B", "", viewer, false},
	} {
		if got := MayStop(tt.user, tt.requester, tt.roles); got != tt.want {
			t.Errorf("MayStop(%q, %q, %+v) = %v, want %v", tt.user, tt.requester, tt.roles, got, tt.want)
		}
	}
}
