package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/release"
)

var (
	sumA = strings.Repeat("ab", 32)
	sumB = strings.Repeat("cd", 32)
)

func TestParse(t *testing.T) {
	good := "# version kubeedge commit sha256\n\nv0.1.0 v1.20.0 047352bccd57 " + sumA + "  # the first\nv0.2.0 v1.23.1 0123456789ab " + sumB + "\n"
	list, err := Parse(strings.NewReader(good), "released-versions")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Version != "v0.1.0" || list[1].KubeEdge != "v1.23.1" || list[1].Line != 4 {
		t.Errorf("parsed %+v", list)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"three fields", "v0.1.0 v1.20.0 " + sumA, "released-versions:1: 3 fields; want 4"},
		{"bad version", "0.1 v1.20.0 047352bccd57 " + sumA, `released-versions:1: version "0.1" is not a semantic version`},
		{"bad kubeedge", "v0.1.0 latest 047352bccd57 " + sumA, `KubeEdge version "latest" is not a semantic version`},
		{"bad commit", "v0.1.0 v1.20.0 main " + sumA, `commit "main" is not 7 to 40`},
		{"bad digest", "v0.1.0 v1.20.0 047352bccd57 " + strings.ToUpper(sumA), "is not 64 lower-case hex digits"},
		{"twice", "v0.1.0 v1.20.0 047352bccd57 " + sumA + "\nv0.1.0 v1.20.0 047352bccd57 " + sumB, "released-versions:2: version v0.1.0 is listed twice (also on line 1)"},
		{"descending", "v0.2.0 v1.23.1 047352bccd57 " + sumA + "\nv0.1.0 v1.20.0 047352bccd57 " + sumB, "released-versions:2: version v0.1.0 comes after v0.2.0"},
	} {
		if _, err := Parse(strings.NewReader(tc.text), "released-versions"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want %q", tc.name, err, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	list := []Release{{Version: "v0.1.0", KubeEdge: "v1.20.0", Commit: "047352bccd57", SHA256: sumA, Line: 3}}
	for _, tc := range []struct {
		name, version, kubeedge, sum string
		released                     bool
		want                         string
	}{
		{"released again as it was", "v0.1.0", "v1.20.0", sumA, false, ""},
		{"a new version", "v0.2.0", "v1.23.1", sumB, false, ""},
		{"released version, other contents", "v0.1.0", "v1.20.0", sumB, false, "version v0.1.0 is already released (list:3) as a package with SHA-256 " + sumA + "; this one has " + sumB + ": raise VERSION in the Makefile"},
		{"released version, other KubeEdge", "v0.1.0", "v1.23.1", sumA, false, "built from KubeEdge v1.20.0; this package is built from KubeEdge v1.23.1"},
		{"a rebuilt release as it was released", "v0.1.0", "v1.20.0", sumA, true, ""},
		{"a rebuilt release with other contents", "v0.1.0", "v1.20.0", sumB, true, "as a package with SHA-256 " + sumA + "; this one has " + sumB},
		{"a rebuilt release the list lacks", "v0.0.9", "v1.20.0", sumA, true, "version v0.0.9 is not a release list lists"},
	} {
		err := Check(list, "list", tc.version, tc.kubeedge, tc.sum, tc.released)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v; want %q", tc.name, err, tc.want)
		}
	}
}

// TestRun runs the command as build/package.sh does, on a zip whose digest
// the list holds and on one it does not.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	zip := filepath.Join(dir, "edgecore-v0.1.0-windows-amd64.zip")
	if err := os.WriteFile(zip, []byte("package"), 0o644); err != nil {
		t.Fatal(err)
	}
	real, err := release.FileSHA256(zip)
	if err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "released-versions")
	if err := os.WriteFile(list, []byte("v0.1.0 v1.20.0 047352bccd57 "+real+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-list", list}, &out); err != nil || !strings.Contains(out.String(), "1 released versions") {
		t.Errorf("list only: %v, %q", err, out.String())
	}
	if err := run([]string{"-list", list, "-kubeedge", "v1.20.0", "v0.1.0", zip}, &out); err != nil {
		t.Errorf("the released package itself: %v", err)
	}
	if err := os.WriteFile(zip, []byte("rebuilt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-list", list, "-kubeedge", "v1.20.0", "v0.1.0", zip}, &out); err == nil || !strings.Contains(err.Error(), "already released") {
		t.Errorf("a rebuilt v0.1.0 with other contents: got %v; want a refusal", err)
	}
	if err := run([]string{"-list", list, "-kubeedge", "v1.23.1", "v0.2.0", zip}, &out); err != nil {
		t.Errorf("a new version: %v", err)
	}
	if err := run([]string{"-list", list, "-released", "-kubeedge", "v1.23.1", "v0.2.0", zip}, &out); err == nil || !strings.Contains(err.Error(), "not a release") {
		t.Errorf("-released with a version the list lacks: got %v; want a refusal", err)
	}
	if err := run([]string{"-list", list, "v0.2.0", zip}, &out); err == nil || !strings.Contains(err.Error(), `-kubeedge ""`) {
		t.Errorf("no -kubeedge: got %v", err)
	}
}
