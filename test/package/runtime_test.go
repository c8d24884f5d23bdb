//go:build package

package pkgtest

import (
	"bytes"
	"debug/buildinfo"
	"debug/pe"
	"encoding/json"
	"os"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
)

// The bundled runtime is what join installs: every program
// runtimeinstall.Files names, each a Windows x86-64 build of the pinned
// module version the Makefile gives, with its versions beside it and the
// license of every module compiled into it.
func TestRuntimeBundle(t *testing.T) {
	files, _ := openPackage(t)
	want := map[string]string{ // module of each program's main package
		"containerd.exe":                "github.com/containerd/containerd/v2@" + os.Getenv("CONTAINERD_VERSION"),
		"ctr.exe":                       "github.com/containerd/containerd/v2@" + os.Getenv("CONTAINERD_VERSION"),
		"containerd-shim-runhcs-v1.exe": "github.com/Microsoft/hcsshim@" + os.Getenv("HCSSHIM_VERSION"),
		"win-bridge.exe":                "github.com/containernetworking/plugins@" + os.Getenv("CNI_PLUGINS_VERSION"),
		"win-overlay.exe":               "github.com/containernetworking/plugins@" + os.Getenv("CNI_PLUGINS_VERSION"),
		"host-local.exe":                "github.com/containernetworking/plugins@" + os.Getenv("CNI_PLUGINS_VERSION"),
	}
	var missing []string
	for _, f := range runtimeinstall.Files {
		name := path.Join(runtimeinstall.BundleDir, f.Sub, f.Name)
		data := files[name]
		if len(data) == 0 {
			t.Errorf("the package has no %s", name)
			continue
		}
		p, err := pe.NewFile(bytes.NewReader(data))
		if err != nil || p.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
			t.Errorf("%s is not a Windows x86-64 program: %v", name, err)
			continue
		}
		tmp := t.TempDir() + "/" + f.Name
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		bi, err := buildinfo.ReadFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if got := bi.Main.Path + "@" + bi.Main.Version; got != want[f.Name] {
			t.Errorf("%s is built from %s, want %s", name, got, want[f.Name])
		}
		for _, s := range bi.Settings {
			if s.Key == "CGO_ENABLED" && s.Value != "0" {
				t.Errorf("%s is built with CGO_ENABLED=%s", name, s.Value)
			}
		}
		for _, dep := range append(bi.Deps, &bi.Main) {
			if len(files["licenses/runtime/"+strings.ReplaceAll(dep.Path, "/", "_")+".txt"]) == 0 {
				missing = append(missing, f.Name+": "+dep.Path)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no license in licenses/runtime for %d modules: %v", len(missing), missing)
	}
	var versions map[string]string
	if err := json.Unmarshal(files["runtime/manifest.json"], &versions); err != nil {
		t.Fatalf("runtime/manifest.json: %v", err)
	}
	for k, env := range map[string]string{"containerd": "CONTAINERD_VERSION", "hcsshim": "HCSSHIM_VERSION", "cni-plugins": "CNI_PLUGINS_VERSION"} {
		if versions[k] != os.Getenv(env) || versions[k] == "" {
			t.Errorf("runtime/manifest.json gives %s %q, want %q", k, versions[k], os.Getenv(env))
		}
	}
	for _, lic := range []string{"github.com_containerd_containerd_v2", "github.com_containernetworking_plugins"} {
		if !bytes.Contains(files["licenses/runtime/"+lic+".txt"], []byte("Apache License")) {
			t.Errorf("licenses/runtime/%s.txt is not the Apache License", lic)
		}
	}
	if !bytes.Contains(files["licenses/runtime/github.com_Microsoft_hcsshim.txt"], []byte("MIT License")) {
		t.Error("licenses/runtime/github.com_Microsoft_hcsshim.txt is not the MIT License")
	}
	if !bytes.Contains(files["NOTICE"], []byte("containerd")) || !bytes.Contains(files["NOTICE"], []byte("licenses/runtime")) {
		t.Error("NOTICE does not name the bundled runtime and its licenses")
	}
}
