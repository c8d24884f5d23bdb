package configjob

import (
	"os"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/jobpolicy"
)

const token = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e.eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJl"

var windowsNode = Node{Host: config.Host{GOOS: config.Windows}, Executable: `C:\Program Files\edgecore\edgecore.exe`}

// joinedFile is the configuration join writes, with the comments an
// operator adds.
func joinedFile(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../config/testdata/windows-join.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := "# line 3 PC, set up by the plant team\n" + strings.Replace(string(raw), "      maxPods: 110", "      maxPods: 110 # the line's 40 pods and room", 1)
	if !strings.Contains(string(raw), token) {
		t.Fatal("the fixture no longer holds the join token this test looks for")
	}
	return []byte(text)
}

func TestAppliesFieldsAndKeepsTheComments(t *testing.T) {
	p, err := Make(joinedFile(t), map[string]string{
		"modules.edged.tailoredKubeletConfig.maxPods":                     "60",
		"Modules.Edged.TailoredKubeletConfig.ImageGCHighThresholdPercent": "70",
		"modules.edged.nodeLabels":                                        "{line:l3,site:north}",
		"modules.edged.tailoredKubeletConfig.clusterDNS":                  "{10.96.0.10,10.96.0.11}",
		"modules.edgeHub.projectID":                                       "'0123'",
	}, windowsNode, token)
	if err != nil {
		t.Fatal(err)
	}
	got := string(p.Text)
	for _, want := range []string{
		"# line 3 PC, set up by the plant team",
		"maxPods: 60 # the line's 40 pods and room",
		"imageGCHighThresholdPercent: 70",
		"line: l3",
		"site: north",
		"- 10.96.0.10",
		`projectID: "0123"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the new file lacks %q:\n%s", want, got)
		}
	}
	c, _, err := config.LoadBytes(p.Text, "new", windowsNode.Host)
	if err != nil {
		t.Fatal(err)
	}
	k := c.Modules.Edged.TailoredKubeletConfig
	if k.MaxPods != 60 || *k.ImageGCHighThresholdPercent != 70 || len(k.ClusterDNS) != 2 || c.Modules.Edged.NodeLabels["site"] != "north" || c.Modules.EdgeHub.ProjectID != "0123" {
		t.Fatalf("the new configuration reads maxPods %d, imageGCHigh %d, clusterDNS %v, labels %v, projectID %q",
			k.MaxPods, *k.ImageGCHighThresholdPercent, k.ClusterDNS, c.Modules.Edged.NodeLabels, c.Modules.EdgeHub.ProjectID)
	}
	if strings.Join(p.Changes, " ") == "" || strings.Contains(strings.Join(p.Changes, " "), token) {
		t.Fatalf("changes %v", p.Changes)
	}
}

// Each value would break a Windows node: it is refused naming the field,
// the value and the fix, and no plan is made.
func TestRefusesWhatBreaksAWindowsNode(t *testing.T) {
	cases := []struct {
		field, value string
		want         []string
	}{
		{"modules.edged.tailoredKubeletConfig.cgroupsPerQOS", "true", []string{"cgroupsPerQOS", "true", "set cgroupsPerQOS: false"}},
		{"modules.edged.tailoredKubeletConfig.maxPods", "many", []string{"maxPods", "many", "whole number"}},
		{"modules.edged.tailoredKubeletConfig.maxpods", "50", []string{"maxpods", "did you mean"}},
		{"modules.edged.tailoredKubeletConfig.clusterDNS[0]", "10.96.0.10", []string{"clusterDNS[0]", "set the whole list"}},
	}
	// A node whose administrators let jobs move the kubelet's root: the
	// node's own rules still refuse a folder of Windows or a drive root.
	admin := windowsNode
	admin.Policy = mustPolicy(t, "configUpdateJob: {fields: [modules.edged.rootDirectory]}")
	for _, c := range []struct {
		field, value string
		want         []string
	}{
		{"modules.edged.rootDirectory", `C:\Windows\kubelet`, []string{"rootDirectory", `C:\Windows`, "fix:"}},
		{"modules.edged.rootDirectory", `D:\`, []string{"rootDirectory", `D:\`, "the root of a drive", "fix:"}},
		{"modules.edged.rootDirectory", `C:\Windows.\kubelet`, []string{"rootDirectory", `C:\Windows\kubelet`, "a directory of Windows", "fix:"}},
	} {
		_, err := Make(joinedFile(t), map[string]string{c.field: c.value}, admin, token)
		if err == nil {
			t.Errorf("%s=%s: accepted although the policy names the field", c.field, c.value)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s=%s: %q lacks %q", c.field, c.value, err, w)
			}
		}
	}
	for _, c := range cases {
		p, err := Make(joinedFile(t), map[string]string{c.field: c.value}, windowsNode, token)
		if err == nil {
			t.Errorf("%s=%s: accepted:\n%s", c.field, c.value, p.Text)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "nothing on the node changed") {
			t.Errorf("%s=%s: %q does not say that nothing changed", c.field, c.value, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s=%s: %q lacks %q", c.field, c.value, msg, w)
			}
		}
	}
}

func TestNeverRepeatsTheToken(t *testing.T) {
	for _, fields := range []map[string]string{
		{"modules.edgeHub.token": "new-" + token},
		{"Modules.EdgeHub.Token": token},
		// A refusal that quotes the whole file's token field would
		// carry it too: the result is checked as a whole.
		{"modules.edgeHub.httpServer": token},
	} {
		_, err := Make(joinedFile(t), fields, windowsNode, token)
		if err == nil {
			t.Fatalf("%v accepted", fields)
		}
		if strings.Contains(err.Error(), token) {
			t.Fatalf("the refusal of %v repeats the token: %v", fields, err)
		}
	}
}

func TestRefusesAnEmptyJob(t *testing.T) {
	if _, err := Make(joinedFile(t), nil, windowsNode); err == nil || !strings.Contains(err.Error(), "spec.updateFields is empty") {
		t.Fatalf("got %v", err)
	}
}

func mustPolicy(t *testing.T, text string) jobpolicy.Policy {
	t.Helper()
	p, err := jobpolicy.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p.Path = `C:\etc\kubeedge\config\cloud-jobs.yaml`
	return p
}

// sampleValue is a value of the field's kind that the node's rules would
// take, so that a refusal can only come from the field's class.
func sampleValue(path string) string {
	switch {
	case strings.HasSuffix(path, "Endpoint"):
		return "tcp://203.0.113.5:10010"
	case strings.Contains(strings.ToLower(path), "file") || strings.HasSuffix(path, "Dir") ||
		strings.HasSuffix(path, "Path") || strings.HasSuffix(path, "Directory") || strings.HasSuffix(path, "dataSource"):
		return `C:\elsewhere\x`
	}
	return "1"
}

// Every field the table does not call a tunable is refused, naming the
// field and why, and nothing is planned; every tunable is not refused for
// its class. The same fields pass once the node's policy names them.
func TestEveryRefusedFieldIsRefusedWithItsReason(t *testing.T) {
	for _, c := range jobpolicy.Classification() {
		key := c.Path
		if c.Map {
			key += ".someKey"
		}
		value := sampleValue(c.Path)
		_, err := Make(joinedFile(t), map[string]string{key: value}, windowsNode, token)
		if c.Class == jobpolicy.Tunable {
			if err != nil && strings.Contains(err.Error(), "refused: ") {
				t.Errorf("tunable %s refused for its class: %v", key, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s (%s) = %s: accepted", key, c.Class, value)
			continue
		}
		msg := err.Error()
		for _, w := range []string{"nothing on the node changed", `"` + key + `"`, "refused: " + c.Reason(), "fix: remove it from the job"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: the refusal lacks %q:\n%s", key, w, msg)
			}
		}
		if !c.Never && !strings.Contains(msg, `C:\etc\kubeedge\config\cloud-jobs.yaml`) && !strings.Contains(msg, "cloud-jobs.yaml") {
			t.Errorf("%s: the refusal does not say how the node's administrators allow it:\n%s", key, msg)
		}
		if c.Class == jobpolicy.Secret && strings.Contains(msg, "= "+value+":") {
			t.Errorf("%s: the refusal repeats the secret's value:\n%s", key, msg)
		}
		if c.Never {
			continue
		}
		allowed := windowsNode
		allowed.Policy = mustPolicy(t, "configUpdateJob: {fields: ["+c.Path+"]}")
		if _, err := Make(joinedFile(t), map[string]string{key: value}, allowed, token); err != nil && strings.Contains(err.Error(), "refused: ") {
			t.Errorf("%s: refused although the policy names it: %v", key, err)
		}
	}
}

// The examples of the issue: each is refused with the field and why.
func TestRefusesTheFieldsThatReachBeyondTheNode(t *testing.T) {
	for key, value := range map[string]string{
		"modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint": "tcp://203.0.113.5:10010",
		"modules.metaManager.metaServer.enable":                        "true",
		"modules.metaManager.metaServer.server":                        "0.0.0.0:10550",
		"modules.edgeHub.websocket.server":                             "203.0.113.5:10000",
		"modules.edgeHub.httpServer":                                   "https://203.0.113.5:10002",
		"modules.edgeHub.tlsCaFile":                                    `C:\Users\Public\ca.crt`,
		"featureGates.requireAuthorization":                            "false",
		"modules.edged.rootDirectory":                                  `\\203.0.113.5\share\kubelet`,
	} {
		_, err := Make(joinedFile(t), map[string]string{key: value}, windowsNode, token)
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "refused: ") {
			t.Errorf("%s=%s: %v", key, value, err)
		}
	}
}

// A value naming another host's share is refused even for a field the
// policy lets jobs change, until the policy lets it take a share too.
func TestRefusesAUNCValueUnlessThePolicyAllowsIt(t *testing.T) {
	fields := mustPolicy(t, "configUpdateJob: {fields: [modules.edged.rootDirectory]}")
	unc := mustPolicy(t, "configUpdateJob: {fields: [modules.edged.rootDirectory], uncFields: [modules.edged.rootDirectory]}")
	for _, v := range []string{`\\files\kubelet`, `//files/kubelet`, `\\?\UNC\files\kubelet`} {
		n := windowsNode
		n.Policy = fields
		_, err := Make(joinedFile(t), map[string]string{"modules.edged.rootDirectory": v}, n, token)
		if err == nil || !strings.Contains(err.Error(), "another host's share") || !strings.Contains(err.Error(), "uncFields") {
			t.Errorf("rootDirectory=%s with the field allowed: %v", v, err)
		}
		n.Policy = unc
		if _, err := Make(joinedFile(t), map[string]string{"modules.edged.rootDirectory": v}, n, token); err != nil && strings.Contains(err.Error(), "another host's share") {
			t.Errorf("rootDirectory=%s with uncFields: %v", v, err)
		}
	}
	// A tunable's value that names a share is refused too.
	_, err := Make(joinedFile(t), map[string]string{"modules.edged.nodeLabels": `{share:\\files\x}`}, windowsNode, token)
	if err == nil || !strings.Contains(err.Error(), "another host's share") {
		t.Errorf("a label naming a share: %v", err)
	}
}

// A URL's password in a job's value shows in no refusal.
func TestRefusalsNeverShowAURLsCredentials(t *testing.T) {
	_, err := Make(joinedFile(t), map[string]string{"modules.edgeHub.httpServer": "https://alice:s3cr3t@203.0.113.5:10002"}, windowsNode, token)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "alice") {
		t.Fatalf("got %v", err)
	}
	admin := windowsNode
	admin.Policy = mustPolicy(t, "configUpdateJob: {fields: [modules.edgeHub.httpServer, modules.eventBus.mqttPassword]}")
	_, err = Make(joinedFile(t), map[string]string{"modules.edgeHub.httpServer": "https://alice:s3cr3t@203.0.113.5:10002"}, admin, token)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "alice") {
		t.Fatalf("the node's rules' refusal: %v", err)
	}
	p, err := Make(joinedFile(t), map[string]string{"modules.eventBus.mqttPassword": "hunter2-pw"}, admin, token)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(p.Changes, " "), "hunter2-pw") {
		t.Fatalf("the changes show the password: %v", p.Changes)
	}
}
