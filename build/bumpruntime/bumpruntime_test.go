package bumpruntime

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module is one version of a stand-in module the test's proxy serves:
// its go.mod and its files (path in the module: content).
type module struct {
	path, version string
	gomod         string
	files         map[string]string
	noZip         bool // served by version and go.mod, its source refused
}

const mainPkg = "package main\n\nfunc main() {}\n"

// escape is the module path as the proxy protocol spells it.
func escape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if r >= 'A' && r <= 'Z' {
			b.WriteString("!" + strings.ToLower(string(r)))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writeProxy lays out mods as a file:// GOPROXY.
func writeProxy(t *testing.T, dir string, mods []module) {
	t.Helper()
	lists := map[string][]string{}
	for _, m := range mods {
		d := filepath.Join(dir, escape(m.path), "@v")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		lists[d] = append(lists[d], m.version)
		must(t, os.WriteFile(filepath.Join(d, m.version+".info"), []byte(fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, m.version)), 0o644))
		must(t, os.WriteFile(filepath.Join(d, m.version+".mod"), []byte(m.gomod), 0o644))
		if m.noZip {
			continue
		}
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		files := map[string]string{"go.mod": m.gomod}
		for k, v := range m.files {
			files[k] = v
		}
		for name, content := range files {
			w, err := z.Create(m.path + "@" + m.version + "/" + name)
			must(t, err)
			_, err = w.Write([]byte(content))
			must(t, err)
		}
		must(t, z.Close())
		must(t, os.WriteFile(filepath.Join(d, m.version+".zip"), buf.Bytes(), 0o644))
	}
	for d, versions := range lists {
		must(t, os.WriteFile(filepath.Join(d, "list"), []byte(strings.Join(versions, "\n")+"\n"), 0o644))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// served is what the test's proxy serves: containerd has a newer patch
// of the bundle's 2.3 line, a release candidate and a newer line whose
// default pause image is newer; hcsshim's newest release needs a module
// whose source the proxy refuses (as hcsshim v0.15.0's shim does); the
// CNI plugins have a newer patch.
func served() []module {
	ctrd := func(v, pause string) module {
		return module{path: "github.com/containerd/containerd/v2", version: v, gomod: "module github.com/containerd/containerd/v2\n\ngo 1.22\n",
			files: map[string]string{"cmd/containerd/main.go": mainPkg,
				"internal/cri/config/config.go": "package config\n\nconst (\n\tDefaultSandboxImage = \"registry.k8s.io/pause:" + pause + "\"\n)\n"}}
	}
	hcs := func(v, gomod, shim string) module {
		return module{path: "github.com/Microsoft/hcsshim", version: v, gomod: "module github.com/Microsoft/hcsshim\n\ngo 1.22\n" + gomod,
			files: map[string]string{"cmd/containerd-shim-runhcs-v1/main.go": shim}}
	}
	cni := func(v string) module {
		return module{path: "github.com/containernetworking/plugins", version: v, gomod: "module github.com/containernetworking/plugins\n\ngo 1.22\n",
			files: map[string]string{"plugins/main/windows/win-bridge/main.go": mainPkg}}
	}
	return []module{
		ctrd("v2.3.7", "3.10.2"), ctrd("v2.3.8", "3.10.2"), ctrd("v2.3.9-rc.1", "3.10.2"), ctrd("v2.4.0", "3.10.3"),
		hcs("v0.14.1", "", mainPkg),
		hcs("v0.15.0", "\nrequire github.com/Microsoft/cosesign1go v1.7.0\n",
			"package main\n\nimport _ \"github.com/Microsoft/cosesign1go/pkg/cosesign1\"\n\nfunc main() {}\n"),
		{path: "github.com/Microsoft/cosesign1go", version: "v1.7.0", gomod: "module github.com/Microsoft/cosesign1go\n\ngo 1.22\n", noZip: true},
		cni("v1.10.0"), cni("v1.10.1"),
	}
}

// checkout is a copy of the script in a tree of its own whose Makefile
// pins containerd, hcsshim and the CNI plugins and whose configuration
// names the pause tag.
func checkout(t *testing.T, containerd, hcsshim, cni, pause string) string {
	t.Helper()
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("..", "bump-runtime.sh"))
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(dir, "build"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "config"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "build", "bump-runtime.sh"), script, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "Makefile"), []byte(fmt.Sprintf(
		"CONTAINERD_VERSION := %s\nHCSSHIM_VERSION := %s\nCNI_PLUGINS_VERSION := %s\n", containerd, hcsshim, cni)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "config", "validate.go"), []byte(
		"package config\n\nconst WindowsSandboxImage = \"registry.k8s.io/pause:"+pause+"\"\n"), 0o644))
	return dir
}

// run runs the script of tree with proxy as GOPROXY and a module cache of
// the test's own, so that no stand-in reaches the build's cache.
func run(t *testing.T, tree, proxy string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	modcache := filepath.Join(t.TempDir(), "mod")
	env := append(os.Environ(), "GOPROXY="+proxy, "GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=",
		"GOMODCACHE="+modcache, "GOTOOLCHAIN=local", "GOFLAGS=")
	t.Cleanup(func() { // the module cache is read-only
		c := exec.Command("go", "clean", "-modcache")
		c.Env = env
		_ = c.Run()
	})
	cmd := exec.Command(filepath.Join(tree, "build", "bump-runtime.sh"), args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func wantLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// --check names every bundled component and the sandbox image for which
// something newer is served, and fails: a newer patch of the bundle's
// containerd line, a newer CNI plugins release, a newer pause image than
// the bundle's (the newest containerd's default). A release that cannot
// be built from the proxy is named and passed over, a release candidate
// does not count, and a newer containerd line is named without failing.
func TestCheckReportsWhatIsServedNewer(t *testing.T) {
	proxy := t.TempDir()
	writeProxy(t, proxy, served())
	tree := checkout(t, "v2.3.7", "v0.14.1", "v1.10.0", "3.10.2")
	out, errs, code := run(t, tree, "file://"+proxy, "--check")
	t.Logf("build/bump-runtime.sh --check:\n%s%s", out, errs)
	if code != 1 {
		t.Errorf("--check exited %d, want 1\n%s%s", code, out, errs)
	}
	wantLines(t, "the report", out,
		"containerd: v2.3.7 is bundled; v2.3.8 is served (the newest patch of its v2.3 line)",
		"hcsshim: v0.14.1 is the newest (the newest release that builds)",
		"CNI plugins: v1.10.0 is bundled; v1.10.1 is served (the newest release that builds)",
		"sandbox image: 3.10.2 is bundled; 3.10.3 is served (containerd v2.4.0's default is registry.k8s.io/pause:3.10.3)",
		"note: containerd v2.4.0 is served on newer lines: moving to one is a decision")
	wantLines(t, "stderr", errs,
		"note: github.com/Microsoft/hcsshim v0.15.0 is served but cannot be built here:", "github.com/Microsoft/cosesign1go@v1.7.0",
		"the bundled runtime is behind what is served: run build/bump-runtime.sh")
	if strings.Contains(out+errs, "rc.1") {
		t.Errorf("a release candidate is reported:\n%s%s", out, errs)
	}
	if mk, _ := os.ReadFile(filepath.Join(tree, "Makefile")); !strings.Contains(string(mk), "CONTAINERD_VERSION := v2.3.7\n") {
		t.Errorf("--check changed the Makefile:\n%s", mk)
	}
}

// Without --check the Makefile moves to the newest of each that builds,
// and the sandbox image is named for the operator to move.
func TestBumpMovesTheMakefile(t *testing.T) {
	proxy := t.TempDir()
	writeProxy(t, proxy, served())
	tree := checkout(t, "v2.3.7", "v0.14.1", "v1.10.0", "3.10.2")
	out, errs, code := run(t, tree, "file://"+proxy)
	if code != 0 {
		t.Fatalf("exited %d\n%s%s", code, out, errs)
	}
	mk, err := os.ReadFile(filepath.Join(tree, "Makefile"))
	must(t, err)
	if want := "CONTAINERD_VERSION := v2.3.8\nHCSSHIM_VERSION := v0.14.1\nCNI_PLUGINS_VERSION := v1.10.1\n"; string(mk) != want {
		t.Errorf("Makefile:\n%s\nwant\n%s", mk, want)
	}
	wantLines(t, "output", out, "Makefile: containerd v2.3.8, hcsshim v0.14.1, CNI plugins v1.10.1.",
		"Next: set config.WindowsSandboxImage to registry.k8s.io/pause:3.10.3")
}

// A bundle at the newest of everything passes --check, saying so for each
// component; an unreachable proxy is said and passes.
func TestCheckPassesWhenCurrentOrOffline(t *testing.T) {
	proxy := t.TempDir()
	writeProxy(t, proxy, served())
	tree := checkout(t, "v2.3.8", "v0.14.1", "v1.10.1", "3.10.3")
	out, errs, code := run(t, tree, "file://"+proxy, "--check")
	if code != 0 {
		t.Errorf("--check exited %d, want 0\n%s%s", code, out, errs)
	}
	wantLines(t, "the report", out, "containerd: v2.3.8 is the newest", "hcsshim: v0.14.1 is the newest",
		"CNI plugins: v1.10.1 is the newest", "sandbox image: 3.10.3 is the newest")

	out, errs, code = run(t, tree, "off", "--check")
	if code != 0 || !strings.Contains(errs, "the Go module proxy does not answer") {
		t.Errorf("offline: exit %d\n%s%s", code, out, errs)
	}
}
