package join

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
)

func TestRemoveTreeOnTheHostKeepsLinkTargets(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "kubelet")
	outside := filepath.Join(dir, "volume")
	for _, d := range []string{filepath.Join(root, "pods", "a", "volumes"), filepath.Join(root, "plugins"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "cpu_manager_state"), filepath.Join(root, "pods", "a", "etc-hosts"), filepath.Join(outside, "data")} {
		if err := os.WriteFile(f, []byte("x"), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	// A pod volume linked into the tree: the link goes, its target stays.
	if err := os.Symlink(outside, filepath.Join(root, "pods", "a", "volumes", "data")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveTree(OSFS{}, runtime.GOOS, root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there: %v", root, err)
	}
	if data, err := os.ReadFile(filepath.Join(outside, "data")); err != nil || string(data) != "x" {
		t.Errorf("the link's target was removed or changed: %v", err)
	}
	// Removing what is gone is not an error: reset runs again after a
	// partial failure.
	if err := RemoveTree(OSFS{}, runtime.GOOS, root); err != nil {
		t.Errorf("second removal: %v", err)
	}
}

func TestRemoveTreeRemovesChildrenBeforeParents(t *testing.T) {
	f := newFakeFS(config.Windows)
	f.write(`C:\var\log\kubeedge\edgecore.log`, "log")
	f.write(`C:\var\log\kubeedge\edgecore-2025-01-02T03-04-05.000.log.gz`, "old")
	f.mkdirAll(`C:\var\log\kubeedge\empty`)
	f.write(`C:\var\log\other.log`, "not ours")
	if err := RemoveTree(f, config.Windows, `C:\var\log\kubeedge`); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`remove C:\var\log\kubeedge\edgecore-2025-01-02T03-04-05.000.log.gz`,
		`remove C:\var\log\kubeedge\edgecore.log`,
		`remove C:\var\log\kubeedge\empty`,
		`remove C:\var\log\kubeedge`,
	}
	if !reflect.DeepEqual(f.changes, want) {
		t.Errorf("removed\n%s\nwant\n%s", strings.Join(f.changes, "\n"), strings.Join(want, "\n"))
	}
	if !f.has(`C:\var\log\other.log`) {
		t.Errorf("removed a file outside the tree")
	}
}

func TestRemoveTreeGoesOnPastAFailureAndNamesIt(t *testing.T) {
	f := newFakeFS(config.Windows)
	f.write(`C:\etc\kubeedge\ca\rootCA.crt`, "ca")
	f.write(`C:\etc\kubeedge\certs\server.crt`, "cert")
	f.failRemove[`C:\etc\kubeedge\ca\rootCA.crt`] = errors.New("The process cannot access the file because it is being used by another process.")
	err := RemoveTree(f, config.Windows, `C:\etc\kubeedge`)
	if err == nil || !strings.Contains(err.Error(), `remove C:\etc\kubeedge\ca\rootCA.crt: The process cannot access the file`) {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "not empty") {
		t.Errorf("the cause is hidden behind a directory-not-empty error: %v", err)
	}
	if f.has(`C:\etc\kubeedge\certs\server.crt`) || f.has(`C:\etc\kubeedge\certs`) {
		t.Errorf("stopped at the first failure instead of removing the rest")
	}
	if !f.has(`C:\etc\kubeedge`) {
		t.Errorf("removed a directory that still holds a file")
	}
}

func TestRemoveTreeRemovesALinkNotItsTarget(t *testing.T) {
	f := newFakeFS(config.Windows)
	f.write(`C:\data\keep.txt`, "keep")
	f.mkdirAll(`C:\var\lib\kubelet\pods`)
	f.nodes[`C:\var\lib\kubelet\pods\vol`] = &fakeNode{dir: true, link: true}
	if err := RemoveTree(f, config.Windows, `C:\var\lib\kubelet`); err != nil {
		t.Fatal(err)
	}
	if f.has(`C:\var\lib\kubelet`) || !f.has(`C:\data\keep.txt`) {
		t.Errorf("paths left: %v", f.paths())
	}
}

func TestTailReadsFromTheOffsetAndRestartsAfterRotation(t *testing.T) {
	p := filepath.Join(t.TempDir(), "edgecore.log")
	if err := os.WriteFile(p, []byte("old line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, off, err := OSFS{}.Tail(p, 0)
	if err != nil || off != 9 {
		t.Fatalf("offset %d, %v", off, err)
	}
	fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString("new line\n")
	fh.Close()
	data, off, err := OSFS{}.Tail(p, off)
	if err != nil || string(data) != "new line\n" || off != 18 {
		t.Errorf("got %q at %d, %v", data, off, err)
	}
	// Rotated: the file starts over and is shorter than the offset.
	os.WriteFile(p, []byte("fresh\n"), 0o600)
	data, off, err = OSFS{}.Tail(p, off)
	if err != nil || string(data) != "fresh\n" || off != 6 {
		t.Errorf("after rotation got %q at %d, %v", data, off, err)
	}
	if _, _, err := (OSFS{}).Tail(p+".missing", 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing log: %v", err)
	}
}

// A --config written with forward slashes names the same file as the
// backslashed default: join accepts it, as `service install` and `config`
// do, and writes and runs the service with it in canonical form.
func TestJoinAcceptsAConfigPathWithForwardSlashes(t *testing.T) {
	w := newWorld(t)
	w.edgecoreIssues(true)
	o := w.options()
	o.ConfigFile = `C:/etc/kubeedge/config/edgecore.yaml`
	var out strings.Builder
	if err := Run(context.Background(), &out, o, w.system()); err != nil {
		t.Fatalf("join refused --config %s: %v\n%s", o.ConfigFile, err, out.String())
	}
	if !w.fs.has(cfgFile) || !strings.Contains(w.fs.content(cfgFile), "hostnameOverride: line3-pc") {
		t.Errorf("no configuration written at %s; files: %v", cfgFile, w.fs.paths())
	}
	mustContain(t, "output", out.String(), `wrote C:\etc\kubeedge\config\edgecore.yaml`,
		`installed service "edgecore": "C:\Program Files\edgecore\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`)
	if svc := w.services.installed["edgecore"]; !reflect.DeepEqual(svc.Args, []string{"--config", cfgFile}) {
		t.Errorf("service runs with %q, want --config %s", svc.Args, cfgFile)
	}
	for _, p := range w.fs.paths() {
		if strings.Contains(p, "/") {
			t.Errorf("created %s with a forward slash", p)
		}
	}
}

// Lower-case drive letters and "." are spellings of the protected
// directory too; ".." out of it is not.
func TestJoinJudgesTheConfigPathAsWindowsDoes(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct{ path, wantErr string }{
		{`c:\etc\kubeedge\.\config\edgecore.yaml`, ""},
		{`C:\etc\kubeedge\..\edgecore.yaml`, `--config: Invalid value: "C:\\etc\\kubeedge\\..\\edgecore.yaml": keep the configuration under C:\etc\kubeedge`},
		{`C:\etc\kubeedge-old\edgecore.yaml`, "keep the configuration under C:\\etc\\kubeedge"},
		{`C:/etc/kubeedge/`, "keep the configuration under C:\\etc\\kubeedge"},
		{`/etc/kubeedge/config/edgecore.yaml`, `--config: Invalid value: "/etc/kubeedge/config/edgecore.yaml": give an absolute path`},
		{`C:etc\kubeedge\config\edgecore.yaml`, "give an absolute path"},
		{``, `--config: Required value: give the configuration file to write, for example C:\etc\kubeedge\config\edgecore.yaml`},
	} {
		o := w.options()
		o.ConfigFile = tc.path
		j, err := New(o, w.system())
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("--config %s refused: %v", tc.path, err)
		case tc.wantErr == "" && j.o.ConfigFile != cfgFile:
			t.Errorf("--config %s is written at %s, want %s", tc.path, j.o.ConfigFile, cfgFile)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("--config %q: error %v, want one containing %q", tc.path, err, tc.wantErr)
		}
	}
}

// On a Windows installed on D:, the protected directory and the
// suggested configuration file are on D:.
func TestJoinTakesTheKubeEdgeDirectoryFromTheHost(t *testing.T) {
	w := newWorld(t)
	w.host.SystemDrive = "D:"
	o := w.options()
	_, err := New(o, w.system())
	mustContain(t, "error", fmt.Sprint(err), `keep the configuration under D:\etc\kubeedge`)
	o.ConfigFile = ""
	_, err = New(o, w.system())
	mustContain(t, "error", fmt.Sprint(err), `for example D:\etc\kubeedge\config\edgecore.yaml`)
	o.ConfigFile = `D:\etc\kubeedge\config\edgecore.yaml`
	j, err := New(o, w.system())
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Plan().Steps[4].Description; !strings.Contains(got, `D:\etc\kubeedge`) {
		t.Errorf("restrict access step: %s", got)
	}
	if hub := j.cfg.Modules.EdgeHub; hub.TLSCertFile != `D:\etc\kubeedge\certs\server.crt` {
		t.Errorf("node certificate at %s", hub.TLSCertFile)
	}
}
