package version

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The binaries OfFile is tested on are real Go programs, built here with
// the go command that runs the test, in throwaway modules whose main
// packages have the paths of the two edgecores and whose version
// variables have the paths the builds stamp: what Go records in them
// (the main package, the module versions, -ldflags without -trimpath) is
// what it records in edgecore.exe and in upstream's edgecore.exe, and
// their version resource is made by the tool and flags the Makefile uses.

const versionVarSource = `package version

var (
	version   = "v0.0.0-dev"
	gitVersion = "v0.0.0-master+$Format:%H$"
)

func Get() string { return version + gitVersion }
`

func mainSource(importPath string) string {
	return "package main\n\nimport (\n\t\"fmt\"\n\n\tv \"" + importPath + "\"\n)\n\nfunc main() { fmt.Println(v.Get()) }\n"
}

// writeTree writes files (slash paths) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type build struct {
	goos     string
	pkg      string
	ldflags  string
	trimpath bool
}

// goBuild builds b in the module at dir and returns the binary's path.
func goBuild(t *testing.T, dir string, b build) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "prog")
	if b.goos == "windows" {
		out += ".exe"
	}
	args := []string{"build", "-buildvcs=false", "-o", out}
	if b.trimpath {
		args = append(args, "-trimpath")
	}
	if b.ldflags != "" {
		args = append(args, "-ldflags", b.ldflags)
	}
	cmd := exec.Command("go", append(args, b.pkg)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0", "GOOS="+b.goos, "GOARCH=amd64", "GOTOOLCHAIN=local")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return out
}

// goWinres is the go-winres module the Makefile makes the version
// resource with (GO_WINRES).
func goWinres(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if name, value, ok := strings.Cut(s.Text(), ":="); ok && strings.TrimSpace(name) == "GO_WINRES" {
			return strings.TrimSpace(value)
		}
	}
	t.Fatal("the Makefile sets no GO_WINRES")
	return ""
}

// versionResource writes, with the Makefile's tool, the version resource
// of productVersion into the package directory dir.
func writeVersionResource(t *testing.T, dir, productName, productVersion string) {
	t.Helper()
	cmd := exec.Command("go", "run", goWinres(t), "simply", "--arch", "amd64", "--out", filepath.Join(dir, "rsrc"), "--manifest", "cli",
		"--product-name", productName, "--product-version", productVersion, "--file-version", productVersion,
		"--original-filename", "edgecore.exe", "--file-description", "test")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	cmd.Dir = t.TempDir()
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go-winres: %v\n%s", err, msg)
	}
}

// thisModule is a module shaped like this project's: cmd/edgecore and
// internal/version.
func thisModule(t *testing.T) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":                      "module github.com/kubeedge-windows/edgecore\n\ngo 1.22\n",
		"internal/version/version.go": versionVarSource,
		"cmd/edgecore/main.go":        mainSource("github.com/kubeedge-windows/edgecore/internal/version"),
	})
	return dir
}

// upstreamModule is a module shaped like upstream's: edge/cmd/edgecore
// and pkg/version.
func upstreamModule(t *testing.T) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":                    "module github.com/kubeedge/kubeedge\n\ngo 1.22\n",
		"pkg/version/version.go":    versionVarSource,
		"edge/cmd/edgecore/main.go": mainSource("github.com/kubeedge/kubeedge/pkg/version"),
		"keadm/cmd/keadm/main.go":   mainSource("github.com/kubeedge/kubeedge/pkg/version"),
	})
	return dir
}

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; -short leaves it out")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the programs are cross-built from the build host; the Linux run covers the reading, which does not depend on the OS")
	}
}

func TestOfFileThisBuild(t *testing.T) {
	skipShort(t)
	mod := thisModule(t)
	pkg := "./cmd/edgecore"
	stamp := "-s -w -X github.com/kubeedge-windows/edgecore/internal/version.version=%s -X github.com/kubeedge/kubeedge/pkg/version.gitVersion=v1.23.1"

	// As the Makefile builds it: -trimpath (so Go records no -ldflags)
	// and the version resource with the whole version.
	writeVersionResource(t, filepath.Join(mod, "cmd", "edgecore"), string(ProgramThis), "v0.3.0-rc.1")
	exe := goBuild(t, mod, build{goos: "windows", pkg: pkg, trimpath: true, ldflags: strings.ReplaceAll(stamp, "%s", "v9.9.9")})
	s, err := OfFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if s.Program != ProgramThis || s.Version != "v0.3.0-rc.1" || s.From != FromResource {
		t.Errorf("the Makefile's build reads as %+v, want edgecore for Windows v0.3.0-rc.1 from the version resource", s)
	}

	// Releases up to v0.2.0 (v0.1.0 is the previous release the e2e
	// upgrades from) wrote the numbers only.
	writeVersionResource(t, filepath.Join(mod, "cmd", "edgecore"), string(ProgramThis), "0.1.0.0")
	if s, err := OfFile(goBuild(t, mod, build{goos: "windows", pkg: pkg, trimpath: true})); err != nil || s.Version != "v0.1.0" {
		t.Errorf("a v0.1.0 build reads as %+v, %v; want v0.1.0", s, err)
	}

	// Another product's resource is not taken for ours.
	writeVersionResource(t, filepath.Join(mod, "cmd", "edgecore"), "Something Else", "v1.0.0")
	if s, err := OfFile(goBuild(t, mod, build{goos: "windows", pkg: pkg, trimpath: true})); err == nil || !strings.Contains(err.Error(), "Something Else") {
		t.Errorf("a resource of another product reads as %+v, %v", s, err)
	}
	if err := os.Remove(filepath.Join(mod, "cmd", "edgecore", "rsrc_windows_amd64.syso")); err != nil {
		t.Fatal(err)
	}

	// Without -trimpath, Go records -ldflags: the -X value is read.
	s, err = OfFile(goBuild(t, mod, build{goos: "windows", pkg: pkg, ldflags: strings.ReplaceAll(stamp, "%s", "v0.4.0")}))
	if err != nil || s.Version != "v0.4.0" || s.From != FromLdflags || s.KubeEdge != "v1.23.1" {
		t.Errorf("a build recording -ldflags reads as %+v, %v", s, err)
	}

	// Neither: the version is unknown, and said so.
	for _, goos := range []string{"windows", "linux"} {
		s, err := OfFile(goBuild(t, mod, build{goos: goos, pkg: pkg, trimpath: true, ldflags: strings.ReplaceAll(stamp, "%s", "v0.4.0")}))
		if err == nil || s.Program != ProgramThis || s.Version != "" {
			t.Errorf("%s: a build without a resource or recorded -ldflags reads as %+v, %v; want the program and no version", goos, s, err)
		}
	}
}

func TestOfFileUpstream(t *testing.T) {
	skipShort(t)
	up := upstreamModule(t)
	// As upstream's hack/lib/golang.sh builds its release: no -trimpath,
	// -X values quoted as the shell passes them.
	ldflags := `-s -w -buildid= -X 'github.com/kubeedge/kubeedge/pkg/version.buildDate=2025-06-01T00:00:00Z' -X github.com/kubeedge/kubeedge/pkg/version.gitVersion=v1.23.1`
	s, err := OfFile(goBuild(t, up, build{goos: "windows", pkg: "./edge/cmd/edgecore", ldflags: ldflags}))
	if err != nil || s.Program != ProgramUpstream || s.Version != "v1.23.1" || s.From != FromLdflags {
		t.Errorf("upstream's release build reads as %+v, %v", s, err)
	}

	// Built in another module graph (as make bench-node's reference, and
	// the e2e's keadm node, are), with -trimpath: the KubeEdge module's
	// version.
	ref := t.TempDir()
	writeTree(t, ref, map[string]string{
		"go.mod":   "module example.com/reference\n\ngo 1.22\n\nrequire github.com/kubeedge/kubeedge v1.23.1\n\nreplace github.com/kubeedge/kubeedge => " + up + "\n",
		"tools.go": "package reference\n\nimport _ \"github.com/kubeedge/kubeedge/pkg/version\"\n",
	})
	s, err = OfFile(goBuild(t, ref, build{goos: "windows", pkg: "github.com/kubeedge/kubeedge/edge/cmd/edgecore", trimpath: true, ldflags: ldflags}))
	if err != nil || s.Program != ProgramUpstream || s.Version != "v1.23.1" || s.From != FromModules {
		t.Errorf("upstream's main built in another module graph reads as %+v, %v", s, err)
	}

	// Another program of upstream's, and no program at all.
	if s, err := OfFile(goBuild(t, up, build{goos: "windows", pkg: "./keadm/cmd/keadm", ldflags: ldflags})); err == nil || !strings.Contains(err.Error(), "not an edgecore") {
		t.Errorf("keadm reads as %+v, %v", s, err)
	}
	text := filepath.Join(t.TempDir(), "edgecore.exe")
	if err := os.WriteFile(text, []byte("MZ not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := OfFile(text); err == nil {
		t.Errorf("a file that is no program reads as %+v", s)
	}
}

func TestLdflagsVars(t *testing.T) {
	got := ldflagsVars(`-s -w -X a.b=1 -X='c.d=two words' --X e.f=3 -X "g.h=x=y" -X`)
	want := map[string]string{"a.b": "1", "c.d": "two words", "e.f": "3", "g.h": "x=y"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestResourceVersion(t *testing.T) {
	for in, want := range map[string]string{"v0.2.0": "v0.2.0", "v1.0.0-rc.1": "v1.0.0-rc.1", "0.1.0.0": "v0.1.0", "0.1.0.7": "", "1.2": "", "v0.2": "", "0.99999.0.0": ""} {
		got, ok := resourceVersion(in)
		if got != want || ok != (want != "") {
			t.Errorf("resourceVersion(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
