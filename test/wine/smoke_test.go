//go:build wine

package wine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

var windowsHost = config.Host{GOOS: config.Windows}

func TestVersion(t *testing.T) {
	kubeedge, kubernetes := upstreamVersions(t)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := run(t, time.Minute, args...)
		if r.code != 0 {
			t.Fatalf("%v exited %d: %s", args, r.code, r.stderr)
		}
		for _, want := range []string{
			"edgecore for Windows v",
			"KubeEdge:   " + kubeedge,
			"Kubernetes: " + kubernetes,
			"Git commit: ",
			"windows/amd64",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v output lacks %q:\n%s", args, want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "Git commit: unknown") {
			t.Errorf("%v: the build did not stamp the git commit:\n%s", args, r.stdout)
		}
	}
}

// The printed samples must be Windows configurations through and through,
// and load back without a single rewrite.
func TestSampleConfigsAreWindowsAndLoadBack(t *testing.T) {
	for _, flag := range []string{"--minconfig", "--defaultconfig"} {
		r := run(t, time.Minute, flag)
		if r.code != 0 {
			t.Fatalf("%s exited %d: %s", flag, r.code, r.stderr)
		}
		for _, bad := range []string{"/etc/", "/var/", "/usr/", "/run/", "kubeedge/pause", "unix://"} {
			if strings.Contains(r.stdout, bad) {
				t.Errorf("%s output contains %q", flag, bad)
			}
		}
		p := filepath.Join(t.TempDir(), "edgecore.yaml")
		if err := os.WriteFile(p, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		c, rewrites, err := config.Load(p, windowsHost)
		if err != nil {
			t.Fatalf("%s output does not load back: %v\n%s", flag, err, r.stdout)
		}
		if len(rewrites) != 0 {
			t.Errorf("%s output needed rewrites: %v", flag, rewrites)
		}
		if c.Kind != "EdgeCore" || c.APIVersion != "edgecore.config.kubeedge.io/v1alpha2" {
			t.Errorf("%s: kind %q apiVersion %q", flag, c.Kind, c.APIVersion)
		}
		if name := c.Modules.Edged.HostnameOverride; name == "" || strings.ToLower(name) != name {
			t.Errorf("%s: node name %q is not a lowercase name", flag, name)
		}
	}
}

func TestMissingConfigFile(t *testing.T) {
	const path = `C:\no\such\dir\edgecore.yaml`
	r := run(t, time.Minute, "--config", path)
	if r.code == 0 {
		t.Fatal("a missing config file did not make edgecore.exe fail")
	}
	if !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "edgecore.exe --minconfig") {
		t.Errorf("the error does not name the path and point to --minconfig:\n%s", r.stderr)
	}
}

// minimalConfig is the printed minimal sample with edgehub off (as printed)
// and the database in dir; each "old" line of replace becomes "new".
func minimalConfig(t *testing.T, dir string, replace ...string) string {
	t.Helper()
	r := run(t, time.Minute, "--minconfig")
	if r.code != 0 {
		t.Fatalf("--minconfig exited %d", r.code)
	}
	replace = append(replace, `  dataSource: C:\var\lib\kubeedge\edgecore.db`,
		"  dataSource: "+toWindowsPath(filepath.Join(dir, "db", "edgecore.db")))
	text := r.stdout
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]+"\n") {
			t.Fatalf("the minimal sample has no line %q", replace[i])
		}
		text = strings.Replace(text, replace[i]+"\n", replace[i+1]+"\n", 1)
	}
	if !strings.Contains(text, "edgeHub:\n    enable: false") {
		t.Fatal("the minimal sample no longer has edgehub disabled")
	}
	p := filepath.Join(dir, "edgecore.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const samplePriorityClass = "    windowsPriorityClass: NORMAL_PRIORITY_CLASS"

// With edgehub off, edgecore.exe must get as far as the embedded kubelet,
// hand it the configured Windows priority class, and the kubelet then
// reports the missing container runtime by its endpoint; without containerd
// the process exits on its own.
func TestWaitsForTheMissingCRI(t *testing.T) {
	dir := t.TempDir()
	cfg := minimalConfig(t, dir, samplePriorityClass, "    windowsPriorityClass: BELOW_NORMAL_PRIORITY_CLASS")

	// Without a runtime the kubelet would give up at once and take
	// edgecore with it; edgecore waits instead, naming what it waits for.
	log, ok := runUntil(t, 2*time.Minute, "Waiting for the container runtime", "--config", toWindowsPath(cfg))
	if !ok {
		t.Fatalf("edgecore.exe did not say it waits for the container runtime:\n%s", log)
	}
	for _, want := range []string{
		"Starting edgecore",
		`endpoint="npipe://./pipe/containerd-containerd"`,
		"Start-Service containerd",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if strings.Contains(log, "Rewrote config value") {
		t.Error("the printed sample needed rewriting when loaded")
	}
	if strings.Contains(log, "starting module edged") {
		t.Error("edged started before the container runtime answered")
	}
	if t.Failed() {
		t.Logf("edgecore.exe log:\n%s", log)
	}
}

// A configuration written the Linux way, with forward slashes and drive-less
// paths, starts with every path rewritten and each rewrite logged.
func TestRewritesPosixStylePaths(t *testing.T) {
	dir := t.TempDir()
	id := filepath.Base(filepath.Dir(dir))
	dbPath := toWindowsPath(filepath.Join(dir, "db", "edgecore.db"))
	cfg := minimalConfig(t, dir,
		`    rootDirectory: C:\var\lib\kubelet`, "    rootDirectory: /var/lib/kubelet-"+id+"/",
		"      containerRuntimeEndpoint: npipe://./pipe/containerd-containerd",
		"      containerRuntimeEndpoint: //./pipe/containerd-containerd")
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The database path with forward slashes.
	s := strings.Replace(string(text), "dataSource: "+dbPath, "dataSource: "+strings.ReplaceAll(dbPath, `\`, "/"), 1)
	if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}

	// The paths are rewritten, and the directories made, before edgecore
	// waits for the (here absent) container runtime.
	log, ok := runUntil(t, 2*time.Minute, "Waiting for the container runtime", "--config", toWindowsPath(cfg))
	if !ok {
		t.Fatalf("edgecore.exe did not get as far as waiting for the runtime:\n%s", log)
	}
	for _, want := range []string{
		`field="database.dataSource"`,
		`to="` + strings.ReplaceAll(dbPath, `\`, `\\`) + `"`,
		`field="modules.edged.rootDirectory" from="/var/lib/kubelet-` + id + `/" to="C:\\var\\lib\\kubelet-` + id + `"`,
		`field="modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint" from="//./pipe/containerd-containerd" to="npipe://./pipe/containerd-containerd"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if n := strings.Count(log, "Rewrote config value"); n != 3 {
		t.Errorf("%d rewrites logged, want 3 (each once)", n)
	}
	// The drive-less root directory landed on the system drive.
	root := filepath.Join(os.Getenv("WINEPREFIX"), "drive_c", "var", "lib", "kubelet-"+id)
	if _, err := os.Stat(root); err != nil {
		t.Errorf("root directory not created on the system drive: %v", err)
	}
	os.RemoveAll(root)
	if t.Failed() {
		t.Logf("edgecore.exe log:\n%s", log)
	}
}

func TestRefusesUnknownPriorityClass(t *testing.T) {
	dir := t.TempDir()
	cfg := minimalConfig(t, dir, samplePriorityClass, "    windowsPriorityClass: FOO")
	r := run(t, time.Minute, "--config", toWindowsPath(cfg))
	if r.code != 1 {
		t.Errorf("exit code %d, want 1", r.code)
	}
	for _, want := range append([]string{"modules.edged.windowsPriorityClass", `"FOO"`}, config.WindowsPriorityClasses...) {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("error lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "Starting edged") {
		t.Error("edged started with an invalid configuration")
	}
}

// The generator refuses to write anything when cloudcore does not answer,
// and writes a configuration that loads back when told not to check.
func TestConfigGenerator(t *testing.T) {
	const token = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e." +
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJl"
	// In the prefix's C:, not under /tmp: every account may rename what
	// is in /tmp (mode 1777), and config refuses to write the token below
	// a folder others may rename.
	out := filepath.Join(driveCTempDir(t), "edgecore.yaml")
	winOut := toWindowsPath(out)
	r := run(t, time.Minute, "config", "-e", "127.0.0.1:1", "-t", token, "-o", winOut)
	if r.code != 1 || !strings.Contains(r.stderr, "--cloudcore-ipport") || !strings.Contains(r.stderr, "--offline") {
		t.Errorf("unreachable cloudcore: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a configuration was written although cloudcore did not answer")
	}

	r = run(t, time.Minute, "config", "--cloudcore-ipport", "192.0.2.10:10000", "--token", token,
		"--edgenode-name", "press-7", "--labels", "site=plant-1", "--offline", "--output", winOut)
	if r.code != 0 {
		t.Fatalf("--offline: exit %d\n%s", r.code, r.stderr)
	}
	c, rewrites, err := config.Load(out, windowsHost)
	if err != nil || len(rewrites) != 0 {
		t.Fatalf("generated configuration does not load back cleanly: %v %v", err, rewrites)
	}
	if c.Modules.EdgeHub.Token != token || c.Modules.Edged.HostnameOverride != "press-7" ||
		c.Modules.EdgeHub.WebSocket.Server != "192.0.2.10:10000" || c.Modules.Edged.NodeLabels["site"] != "plant-1" {
		t.Errorf("generated configuration: %+v", c.Modules.EdgeHub)
	}
	r = run(t, time.Minute, "config", "-e", "192.0.2.10:10000", "-t", token, "--offline", "-o", winOut)
	if r.code != 1 || !strings.Contains(r.stderr, "--force") {
		t.Errorf("an existing configuration was not protected: exit %d\n%s", r.code, r.stderr)
	}
}

// TestDMIServesNamedPipe is a device mapper's view of the edge: with device
// twins on, edgecore serves DMI on \\.\pipe\kubeedge-dmi, and a client
// (test/wine/dmiclient, a Windows program) registers a mapper over it with
// gRPC. The edge answers: it stores the mapper (and logs that), and refuses
// a registration without a protocol with its own message.
func TestDMIServesNamedPipe(t *testing.T) {
	client := os.Getenv("DMICLIENT_EXE")
	if client == "" {
		t.Fatal("DMICLIENT_EXE is not set: run these tests with `make wine-test`")
	}
	dir := t.TempDir()
	cfg := minimalConfig(t, dir,
		"    dmiSockPath: npipe://./pipe/kubeedge-dmi\n    enable: false",
		"    dmiSockPath: npipe://./pipe/kubeedge-dmi\n    enable: true",
		// No kubelet: without a container runtime it would end the process.
		"  edged:\n    enable: true", "  edged:\n    enable: false")
	n, found := startNode(t, 2*time.Minute, `DMI server listens on named pipe \\.\pipe\kubeedge-dmi`, "--config", toWindowsPath(cfg))
	if !found {
		t.Fatalf("the DMI server did not report its named pipe:\n%s", n.Log())
	}
	const pipe = `\\.\pipe\kubeedge-dmi`

	t.Run("a mapper registers over the pipe", func(t *testing.T) {
		r := runWindowsProgram(t, 2*time.Minute, client, "register", pipe, "wine-test-mapper")
		if r.code != 0 || !strings.Contains(r.stdout, "registered wine-test-mapper\n") {
			t.Fatalf("dmiclient register: exit %d\n%s%s\nedgecore:\n%s", r.code, r.stdout, r.stderr, n.Log())
		}
		if !strings.Contains(r.stdout, "refused: ") || !strings.Contains(r.stdout, "because the protocol is nil") {
			t.Errorf("a registration without a protocol was not refused by the edge's rule:\n%s", r.stdout)
		}
		if !n.waitFor("success to save mapper info of wine-test-mapper to db", 30*time.Second) {
			t.Errorf("edgecore did not log storing the mapper:\n%s", n.Log())
		}
	})

	t.Run("the pipe admits SYSTEM and Administrators only", func(t *testing.T) {
		r := runWindowsProgram(t, time.Minute, client, "acl", pipe)
		if r.code != 0 {
			t.Fatalf("dmiclient acl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.stdout), "dacl:"))
		// acl.PipeSDDL as set (Wine keeps the generic right), or with
		// GA mapped to a file object's all access (Windows).
		if got != acl.PipeSDDL && got != "D:P(A;;FA;;;SY)(A;;FA;;;BA)" {
			t.Errorf("the pipe's DACL reads back as %q, want SYSTEM and Administrators with all access, protected", got)
		}
	})

	t.Run("a non-administrator token is refused", func(t *testing.T) {
		r := runWindowsProgram(t, time.Minute, client, "nonadmin", pipe)
		if r.code != 0 {
			t.Fatalf("dmiclient nonadmin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "own: opened\n") {
			t.Fatalf("the pipe did not open for the test's own (administrator) token:\n%s", r.stdout)
		}
		if strings.Contains(r.stdout, "restricted: opened\n") && strings.Contains(r.stdout, "restricted, an event open to Administrators only: access denied\n") {
			// Wine 8's server checks a token against an event's DACL
			// (the control above was refused) but not when a client
			// opens a named pipe, so it cannot show the refusal; the
			// DACL the pipe carries is read back by the subtest above.
			t.Skipf("Wine 8 does not check a named pipe's DACL when a client opens it: with Administrators deny-only the token was refused by an "+
				"event open to Administrators only, but opened the pipe:\n%s", r.stdout)
		}
		if !strings.Contains(r.stdout, "restricted: access denied\n") {
			t.Errorf("with Administrators disabled in the token the pipe did not answer access denied:\n%s", r.stdout)
		}
	})

	for _, bad := range []string{"failed to start DMI Server", "failed to remove uds socket"} {
		if strings.Contains(n.Log(), bad) {
			t.Errorf("log contains %q:\n%s", bad, n.Log())
		}
	}
}
