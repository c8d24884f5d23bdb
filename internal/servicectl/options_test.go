package servicectl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

var windowsHost = config.Host{GOOS: config.Windows, Hostname: "LINE3-PC", NodeIP: "10.0.0.5",
	ProgramFiles: `C:\Program Files`, SystemDrive: "C:"}

const exe = `C:\Program Files\edgecore\edgecore.exe`

// depsOn is host's dependencies with this program at exe.
func depsOn(host config.Host) *deps.Dependencies {
	return &deps.Dependencies{Host: host, Layout: config.NewLayout(host), Executable: exe}
}

// A relative --config is made absolute against the directory the command
// runs in: the service starts in System32.
func TestInstallOptionsComplete(t *testing.T) {
	o := NewInstallOptions(depsOn(config.Host{GOOS: "linux"}))
	o.ConfigFile = "edgecore.yaml"
	if err := o.Complete(depsOn(config.Host{GOOS: "linux"})); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Join(wd, "edgecore.yaml"); o.ConfigFile != want || o.Executable != exe {
		t.Errorf("completed to --config %q and executable %q, want %q and %q", o.ConfigFile, o.Executable, want, exe)
	}
	o = NewInstallOptions(depsOn(windowsHost))
	if err := o.Complete(depsOn(windowsHost)); err != nil || o.ConfigFile != `C:\etc\kubeedge\config\edgecore.yaml` {
		t.Errorf("the default Windows path was changed to %q (%v)", o.ConfigFile, err)
	}
	// Written into the service's command line as join writes it.
	o.ConfigFile = `C:/etc/kubeedge/config/../config/edgecore.yaml`
	if err := o.Complete(depsOn(windowsHost)); err != nil || o.ConfigFile != `C:\etc\kubeedge\config\edgecore.yaml` {
		t.Errorf("C:/etc/kubeedge/config/../config/edgecore.yaml completed to %q (%v)", o.ConfigFile, err)
	}
	lost := errors.New("the executable was deleted")
	if err := o.Complete(&deps.Dependencies{Host: windowsHost, ExecutableErr: lost}); !errors.Is(err, lost) || !strings.Contains(err.Error(), "find edgecore.exe") {
		t.Errorf("a lost executable: %v", err)
	}
}

func TestInstallOptionsValidateNamesAnEmptyConfig(t *testing.T) {
	o := NewInstallOptions(depsOn(windowsHost))
	if err := o.Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	o.ConfigFile = ""
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--config is empty") || !strings.Contains(err.Error(), `C:\etc\kubeedge\config\edgecore.yaml`) {
		t.Errorf("empty --config: %v", err)
	}
}

// install runs the executable with the configuration, restricts the
// node's directories, passes on the service manager's warnings and says
// how to start it.
func TestRunInstall(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edgecore.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &host{}
	var out, errOut bytes.Buffer
	o := InstallOptions{ConfigFile: cfg, Executable: exe, Host: windowsHost, Layout: config.NewLayout(windowsHost)}
	if err := RunInstall(&out, &errOut, o, h.system()); err != nil {
		t.Fatal(err)
	}
	if len(h.calls) < 3 || !reflect.DeepEqual(h.calls[:3], []string{"install edgecore", "mkdir " + logDir, `restrict C:\etc\kubeedge`}) {
		t.Errorf("did %q, want the install, the log directory, then the node's directories", h.calls)
	}
	mustContain(t, "output", out.String(), `Installed service edgecore: "`+exe+`" --config `+cfg+"\n",
		"go to "+logDir+", open to SYSTEM and Administrators only", "Start it with: edgecore.exe service start")
	if errOut.String() != "warning: containerd is not installed\n" {
		t.Errorf("warnings: %q", errOut.String())
	}
	// The Windows defaults stop the pods for up to 30 s at a host
	// shutdown: Windows must wait that long, and for edgecore's own stop.
	if got := h.installed.PreShutdownTimeout; got != service.PreShutdownTimeoutFor(30*time.Second) || got != 70*time.Second {
		t.Errorf("installed with a pre-shutdown time-out of %v, want 70s for the default 30s of node shutdown", got)
	}
}

// The pre-shutdown time-out follows the configuration's grace periods.
func TestRunInstallSetsThePreShutdownTimeOutFromTheConfiguration(t *testing.T) {
	for text, want := range map[string]time.Duration{
		"      shutdownGracePeriod: 0s\n      shutdownGracePeriodCriticalPods: 0s\n": 35 * time.Second,
		"      shutdownGracePeriod: 0s\n      shutdownGracePeriodCriticalPods: 0s\n      shutdownGracePeriodByPodPriority:\n" +
			"      - {priority: 0, shutdownGracePeriodSeconds: 60}\n      - {priority: 100000, shutdownGracePeriodSeconds: 30}\n": 130 * time.Second,
	} {
		cfg := filepath.Join(t.TempDir(), "edgecore.yaml")
		body := "apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\nmodules:\n  edged:\n    tailoredKubeletConfig:\n" + text
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		h := &host{}
		o := InstallOptions{ConfigFile: cfg, Executable: exe, Host: windowsHost, Layout: config.NewLayout(windowsHost)}
		if err := RunInstall(&bytes.Buffer{}, &bytes.Buffer{}, o, h.system()); err != nil {
			t.Fatal(err)
		}
		if got := h.installed.PreShutdownTimeout; got != want {
			t.Errorf("%s: pre-shutdown time-out %v, want %v", body, got, want)
		}
	}
}

// A configuration that cannot load, or that gives the node a directory it
// may not restrict, is refused before anything changes: the service would
// only fail and restart for ever.
func TestRunInstallRefusesAConfigurationThatDoesNotLoad(t *testing.T) {
	h := &host{}
	o := InstallOptions{ConfigFile: filepath.Join(t.TempDir(), "none.yaml"), Executable: exe, Host: windowsHost, Layout: config.NewLayout(windowsHost)}
	var missing *config.MissingFileError
	if err := RunInstall(&bytes.Buffer{}, &bytes.Buffer{}, o, h.system()); !errors.As(err, &missing) {
		t.Errorf("a missing configuration: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "edgecore.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\nmodules:\n  edged:\n    rootDirectory: C:\\\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.ConfigFile = bad
	err := RunInstall(&bytes.Buffer{}, &bytes.Buffer{}, o, h.system())
	if err == nil || !strings.Contains(err.Error(), "rootDirectory") {
		t.Errorf("a kubelet root at the drive's root: %v", err)
	}
	if len(h.calls) != 0 {
		t.Errorf("did %q before refusing", h.calls)
	}
}

// writeConfig writes a loadable configuration into a directory of its
// own, and returns its path and that of the upgrade settings beside it as
// the service finds them (upgrade.SettingsPath), which the fake host says
// exist or not.
func writeConfig(t *testing.T) (cfg, settings string) {
	t.Helper()
	cfg = filepath.Join(t.TempDir(), "edgecore.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, upgrade.SettingsPath(windowsHost.GOOS, cfg)
}

// A configuration outside C:\etc\kubeedge, and the upgrade settings
// beside it, which the service reads as SYSTEM, are restricted as join
// restricts the one it writes; the log directory is made restricted.
func TestRunInstallRestrictsTheConfigurationAndTheUpgradeSettings(t *testing.T) {
	cfg, settings := writeConfig(t)
	h := &host{}
	usersRead := "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
	h.exists()[filepath.Dir(cfg)], h.exists()[cfg], h.exists()[settings] = usersRead, usersRead, usersRead
	o := InstallOptions{ConfigFile: cfg, Executable: exe, Host: windowsHost, Layout: config.NewLayout(windowsHost)}
	if err := RunInstall(&bytes.Buffer{}, &bytes.Buffer{}, o, h.system()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"restrict " + cfg, "restrict " + settings} {
		found := false
		for _, c := range h.calls {
			found = found || c == want
		}
		if !found {
			t.Errorf("did %q, want %q", h.calls, want)
		}
	}
	if got := h.made[logDir]; got != acl.DirectorySDDL {
		t.Errorf("the log directory was made with %q, want %q", got, acl.DirectorySDDL)
	}
}

// A configuration in a folder others may rename, or upgrade settings
// another account wrote, are refused with the fix before anything
// changes: a service would run what they put there as SYSTEM.
func TestRunInstallRefusesAConfigurationOthersMayReplace(t *testing.T) {
	for name, tc := range map[string]struct {
		path  func(cfg, settings string) string
		sddl  string
		wants []string
	}{
		"a folder Authenticated Users modify": {
			path: func(cfg, _ string) string { return filepath.Dir(cfg) },
			sddl: "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;ID;0x1301bf;;;AU)",
			wants: []string{"is a parent that others may rename or empty: Authenticated Users has 0x1301bf",
				"/inheritance:d", "/remove:g *S-1-5-11"},
		},
		"settings another account wrote": {
			path:  func(_, settings string) string { return settings },
			sddl:  "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)",
			wants: []string{"the upgrade settings, which name where the binaries that run as SYSTEM come from) is owned by S-1-5-21-1-2-3-1001", "takeown"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, settings := writeConfig(t)
			h := &host{}
			h.exists()[tc.path(cfg, settings)] = tc.sddl
			o := InstallOptions{ConfigFile: cfg, Executable: exe, Host: windowsHost, Layout: config.NewLayout(windowsHost)}
			err := RunInstall(&bytes.Buffer{}, &bytes.Buffer{}, o, h.system())
			if err == nil {
				t.Fatal("installed")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(h.calls) != 0 {
				t.Errorf("did %q before refusing", h.calls)
			}
		})
	}
}
