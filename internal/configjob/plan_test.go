package configjob

import (
	"os"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
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
		{"modules.edged.rootDirectory", `C:\Windows\kubelet`, []string{"rootDirectory", `C:\Windows`, "fix:"}},
		{"modules.edged.rootDirectory", `D:\`, []string{"rootDirectory", `D:\`, "the root of a drive", "fix:"}},
		{"modules.edged.rootDirectory", `C:\Windows.\kubelet`, []string{"rootDirectory", `C:\Windows\kubelet`, "a directory of Windows", "fix:"}},
		{"modules.edged.tailoredKubeletConfig.maxPods", "many", []string{"maxPods", "many", "whole number"}},
		{"modules.edged.tailoredKubeletConfig.maxpods", "50", []string{"maxpods", "did you mean"}},
		{"modules.edged.tailoredKubeletConfig.clusterDNS[0]", "10.96.0.10", []string{"clusterDNS[0]", "set the whole list"}},
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
	if got := Redact("a "+token+" b", token, ""); got != "a "+Redacted+" b" {
		t.Fatalf("Redact: %q", got)
	}
}

func TestRefusesAnEmptyJob(t *testing.T) {
	if _, err := Make(joinedFile(t), nil, windowsNode); err == nil || !strings.Contains(err.Error(), "spec.updateFields is empty") {
		t.Fatalf("got %v", err)
	}
}
