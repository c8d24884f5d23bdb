package containerd

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func TestGenerateIsReadBackWithTheCNIDirectoriesAndSandbox(t *testing.T) {
	want := Dirs{BinDir: `C:\Program Files\containerd\cni\bin`, ConfDir: `C:\Program Files\containerd\cni\conf`}
	data, err := Generate(BundledConfig{CNI: want, SandboxImage: "registry.k8s.io/pause:3.9",
		Root: `C:\ProgramData\containerd\root`, State: `C:\ProgramData\containerd\state`})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(data)
	if err != nil {
		t.Fatalf("the generated file does not read back: %v\n%s", err, data)
	}
	if s.Version != Version2x || s.ConfDir != want.ConfDir || len(s.BinDirs) != 1 || s.BinDirs[0] != want.BinDir || s.BinKey != KeyBinDirs {
		t.Errorf("read back %+v, want version 3 with %+v in bin_dirs and conf_dir", s, want)
	}
	if s.Root != `C:\ProgramData\containerd\root` || s.State != `C:\ProgramData\containerd\state` {
		t.Errorf("read back root %q and state %q", s.Root, s.State)
	}
	var top struct{ Root, State string }
	if err := toml.Unmarshal(data, &top); err != nil || top.Root != s.Root || top.State != s.State {
		t.Errorf("containerd reads root %q and state %q (%v), Read %q and %q", top.Root, top.State, err, s.Root, s.State)
	}
	// cni-config run afterwards finds nothing to change.
	_, changes, err := Edit(data, EditOptions{GOOS: "windows", Want: want, Default: want, Runtime: Runtime{Major: 2, Minor: 1, Patch: 4}})
	if err != nil || len(changes) != 0 {
		t.Errorf("cni-config would edit the generated file: %v %v", changes, err)
	}
	var doc struct {
		Plugins map[string]struct {
			PinnedImages struct{ Sandbox string } `toml:"pinned_images"`
		}
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Plugins["io.containerd.cri.v1.images"].PinnedImages.Sandbox; got != "registry.k8s.io/pause:3.9" {
		t.Errorf("sandbox image %q in\n%s", got, data)
	}
}

func TestGenerateRefusesWhatTOMLCannotHold(t *testing.T) {
	for _, c := range []BundledConfig{
		{CNI: Dirs{BinDir: `C:\it's`, ConfDir: `C:\c`}, SandboxImage: "p"},
		{CNI: Dirs{BinDir: `C:\b`, ConfDir: `C:\c`}, SandboxImage: ""},
		{CNI: Dirs{BinDir: `C:\b`, ConfDir: "C:\\c\n"}, SandboxImage: "p"},
		{CNI: Dirs{BinDir: `C:\b`, ConfDir: `C:\c`}, SandboxImage: "p", Root: `C:\it's`},
	} {
		if _, err := Generate(c); err == nil || !strings.Contains(err.Error(), "containerd configuration") {
			t.Errorf("Generate(%+v) = %v, want a refusal naming the field", c, err)
		}
	}
}

// A --registry-config's folder and credentials read back as containerd 2.x
// reads them, whatever characters the password holds.
func TestGenerateWritesTheRegistryFolderAndCredentials(t *testing.T) {
	pass := `p"a\ss'w0rd` + "\t"
	data, err := Generate(BundledConfig{
		CNI:          Dirs{BinDir: `C:\b`, ConfDir: `C:\c`},
		SandboxImage: "registry.k8s.io/pause:3.10.2",
		Registry: &Registry{ConfigPath: `C:\Program Files\containerd\certs.d`, Auths: map[string]RegistryAuth{
			"mirror.example:5000": {Username: "edge", Password: pass},
			"harbor.example":      {IdentityToken: "tok"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Plugins map[string]struct {
			Registry struct {
				ConfigPath string `toml:"config_path"`
				Configs    map[string]struct {
					Auth struct {
						Username, Password string
						IdentityToken      string `toml:"identitytoken"`
					}
				}
			}
		}
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	r := doc.Plugins["io.containerd.cri.v1.images"].Registry
	if r.ConfigPath != `C:\Program Files\containerd\certs.d` || r.Configs["mirror.example:5000"].Auth.Password != pass ||
		r.Configs["mirror.example:5000"].Auth.Username != "edge" || r.Configs["harbor.example"].Auth.IdentityToken != "tok" {
		t.Errorf("read back %+v from\n%s", r, data)
	}
	if _, err := Read(data); err != nil {
		t.Errorf("cni-config cannot read it: %v", err)
	}
}
