package jobpolicy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

func TestPathIsInTheNodesConfigFolder(t *testing.T) {
	if got := PathOf(config.NewLayout(config.Host{GOOS: config.Windows})); got != `C:\etc\kubeedge\config\cloud-jobs.yaml` {
		t.Errorf("Windows: %s", got)
	}
	if got := PathOf(config.NewLayout(config.Host{GOOS: "linux"})); got != "/etc/kubeedge/config/cloud-jobs.yaml" {
		t.Errorf("Linux: %s", got)
	}
}

func TestParseRefusesWhatItCannotApply(t *testing.T) {
	for text, want := range map[string]string{
		"configUpdateJob: {feilds: [x]}":                                               "not a policy",
		"configUpdateJob: {fields: [modules.edged.rootDirectry]}":                      `"modules.edged.rootDirectry" is not a field`,
		"configUpdateJob: {fields: [modules.edgeHub.token]}":                           "can never be taken from a job",
		"configUpdateJob: {fields: [modules.edged.hostnameOverride]}":                  "can never be taken from a job",
		"configUpdateJob: {uncFields: [modules.edged.rootDirectory]}":                  "is not in configUpdateJob.fields",
		"imagePrePullJob: {pullSecretNamespaces: [Kube_System]}":                       `"Kube_System" is not a namespace`,
		"imagePrePullJob: {pullSecretNamespaces: [plant-a]}\nextra: true":              "not a policy",
		"configUpdateJob: {fields: [featureGates.requireAuthorization, featureGates]}": "",
	} {
		_, err := Parse([]byte(text))
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func TestRefusalFollowsThePolicy(t *testing.T) {
	p, err := Parse([]byte("configUpdateJob: {fields: [featureGates.requireAuthorization, modules.edged.nodeIP]}"))
	if err != nil {
		t.Fatal(err)
	}
	for path, refused := range map[string]bool{
		"featureGates.requireAuthorization":                            false,
		"featureGates.moduleRestart":                                   true,
		"modules.edged.nodeIP":                                         false,
		"modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint": true,
		"modules.edged.tailoredKubeletConfig.maxPods":                  false,
		"modules.edgeHub.token":                                        true,
		"modules.edged.noSuchField":                                    true,
	} {
		why, fix := p.Refusal(path, "1")
		if (why != "") != refused {
			t.Errorf("%s: refusal %q, want refused %v", path, why, refused)
		}
		if refused && fix == "" {
			t.Errorf("%s: refused without a fix", path)
		}
	}
	all, _ := Parse([]byte("configUpdateJob: {fields: [featureGates]}"))
	if why, _ := all.Refusal("featureGates.anything", "true"); why != "" {
		t.Errorf("a mapping named whole lets every entry through: %s", why)
	}
}

func TestRemoteValue(t *testing.T) {
	for v, want := range map[string]bool{
		`\\files\share\x`:                      true,
		`//files/share/x`:                      true,
		`\\?\UNC\files\share\x`:                true,
		`\/files\share`:                        true,
		`"\\files\share"`:                      true,
		`[C:\a, \\files\share]`:                true,
		`{k: \\files\share}`:                   true,
		"file://files/share/x":                 true,
		"file:////files/share/x":               true,
		"npipe://files/pipe/containerd":        true,
		"smb://files/share":                    true,
		`\\.\pipe\containerd-containerd`:       false,
		"npipe://./pipe/containerd-containerd": false,
		`\\?\C:\var\lib\kubelet`:               false,
		"file:///C:/x":                         false,
		`C:\var\lib\kubelet`:                   false,
		"tcp://203.0.113.5:10010":              false,
		"110":                                  false,
		"/var/lib/kubelet":                     false,
	} {
		if got := RemoteValue(v); got != want {
			t.Errorf("RemoteValue(%q) = %v, want %v", v, got, want)
		}
	}
}

// The policy is judged before it is believed: a file the judge refuses is
// an error naming it, never a policy; a missing file is the default.
func TestLoadJudgesTheFileFirst(t *testing.T) {
	const path = `C:\etc\kubeedge\config\cloud-jobs.yaml`
	text := []byte("configUpdateJob: {fields: [modules.edged.nodeIP]}")
	read := func(string) ([]byte, error) { return text, nil }
	refuse := func(string) error { return errors.New("is owned by WIN\\operator") }
	if _, err := Load(path, read, refuse); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not trusted") {
		t.Fatalf("a refused file: %v", err)
	}
	p, err := Load(path, read, func(string) error { return nil })
	if err != nil || p.Path != path || !p.allowsField("modules.edged.nodeIP") {
		t.Fatalf("a trusted file: %+v %v", p, err)
	}
	missing := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	judged := false
	p, err = Load(path, missing, func(string) error { judged = true; return nil })
	if err != nil || p.Path != path || len(p.ConfigUpdateJob.Fields) != 0 || judged {
		t.Fatalf("no file: %+v %v (judged %v)", p, err, judged)
	}
	if _, err := Load(path, func(string) ([]byte, error) { return nil, fs.ErrPermission }, func(string) error { return nil }); err == nil {
		t.Fatal("an unreadable file was taken as no policy")
	}
}

// On Windows the file is judged by protect's rule for what the node acts
// on without owning it: an owner other than SYSTEM, Administrators or
// TrustedInstaller, or a DACL that lets others change it, is refused with
// the path. (Wine keeps no ACLs: the decision is shown over a fake.)
func TestHostJudgeOnWindowsJudgesOwnerAndDACL(t *testing.T) {
	const path = `C:\etc\kubeedge\config\cloud-jobs.yaml`
	admins := "O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FR;;;BU)"
	cases := map[string]struct {
		sddl string
		want string
	}{
		"administrators' file": {admins, ""},
		"a user's file":        {"O:S-1-5-21-1-2-3-1001D:P(A;;FA;;;SY)(A;;FA;;;BA)", "owned by"},
		"users may change it":  {"O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FM;;;BU)", "writable by others"},
	}
	for name, c := range cases {
		h := protect.Host{
			Exists: func(string) (bool, error) { return true, nil },
			Read: func(p string) (acl.Security, error) {
				if p == path {
					return acl.ParseSDDL(c.sddl)
				}
				return acl.ParseSDDL("O:BAD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)")
			},
		}
		err := HostJudge(config.Windows, h)(path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path)):
			t.Errorf("%s: %v, want %q and the path", name, err, c.want)
		}
	}
}

func TestJudgePOSIX(t *testing.T) {
	if err := judgePOSIX("/p", 0, 0o644); err != nil {
		t.Errorf("root's 0644: %v", err)
	}
	for what, err := range map[string]error{
		"uid 1000":       judgePOSIX("/p", 1000, 0o644),
		"group writable": judgePOSIX("/p", 0, 0o664),
		"a link":         judgePOSIX("/p", 0, fs.ModeSymlink|0o777),
	} {
		if err == nil || !strings.Contains(err.Error(), "/p") {
			t.Errorf("%s: %v", what, err)
		}
	}
	// The host's own judge reads the file's real owner.
	f := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := HostJudge("linux", protect.Host{})(f)
	if (os.Getuid() == 0) != (err == nil) {
		t.Errorf("uid %d: %v", os.Getuid(), err)
	}
}

func TestPullSecretsComeFromTheNodesNamespaceOrThePolicys(t *testing.T) {
	var none Policy
	if err := none.PullSecretAllowed("default", ""); err != nil {
		t.Errorf("default namespace: %v", err)
	}
	if err := none.PullSecretAllowed("line3", "line3"); err != nil {
		t.Errorf("the node's namespace: %v", err)
	}
	err := none.PullSecretAllowed("kube-system", "")
	for _, w := range []string{`"kube-system"`, "cluster-scoped", "pullSecretNamespaces", "fix:"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("kube-system: %v lacks %q", err, w)
		}
	}
	p, _ := Parse([]byte("imagePrePullJob: {pullSecretNamespaces: [plant-a]}"))
	if err := p.PullSecretAllowed("plant-a", ""); err != nil {
		t.Errorf("a namespace the policy names: %v", err)
	}
	if err := p.PullSecretAllowed("plant-b", ""); err == nil {
		t.Error("plant-b taken")
	}
}
