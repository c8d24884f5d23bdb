//go:build e2e

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
)

// What upstream's keadm v1.23 leaves on a Windows host (see
// internal/takeover's package comment for where in keadm each is read).
const (
	keadmExe     = `C:\usr\local\bin\edgecore.exe`
	keadmCmdline = keadmExe + ` --config C:\etc\kubeedge\config\edgecore.yaml --log-file C:\var\log\kubeedge\edgecore.log`
	// keadmNode is the name keadm joins the node as (--edgenode-name).
	keadmNode = "keadm-node"
)

// TestWindowsTakeover takes over the node upstream's keadm v1.23 makes,
// made by upstream's own code: test/keadmnode (KEADMNODE_EXE) does what
// keadm's join does on Windows with keadm's and upstream's functions from
// this module graph (upstream's defaults for Windows and keadm's edits,
// the release tarball unpacked by keadm, the service "edgecore" created
// and started by keadm's extsystem with keadm's command line), with
// upstream's edgecore main built from the module graph as the release's
// binary (KEADM_EDGECORE_EXE, make bench-node's reference, stamped with
// its own KubeEdge version). That edgecore fetches the node's
// certificates with the token and blanks it in the file, as on a real
// node. The fixtures the unit tests take over must be what that code
// writes now.
//
// The node runs a pod. The operator copies this build where the quick
// start says, C:\Program Files\edgecore (nothing runs from the checkout,
// wherever it is). A planted upgrade journal is refused by name;
// `takeover --dry-run` runs no program of the keadm host (no process of
// keadm's binary starts besides the service's) and changes nothing.
// `takeover --token` then replaces upstream's binary (the digest of the
// installed file is the reference's before, this build's after), and the
// new process (its own start line) connects with a new certificate it
// applied for, the old key gone, and the same node is Ready with the same
// pod in the same container.
func TestWindowsTakeover(t *testing.T) {
	c := startCluster(t)
	h := newWinHost(t)
	build := h.exe
	upstream := mustEnv(t, "KEADM_EDGECORE_EXE")
	j := &journey{t: t, c: c, h: h, token: c.token(t), layout: config.NewLayout(config.Host{GOOS: "windows"}), node: keadmNode}
	// Upstream's edgecore answers the service manager only once its
	// embedded kubelet starts (the kubelet's initForOS with
	// windowsService: true), seconds after the process does. Windows
	// waits 30 s for a service to connect (ServicesPipeTimeout); Wine's
	// service manager 10 s, and it reads the value as a string when it
	// starts: the host gets 120 s, for a loaded build machine.
	if r := h.run(t, commandBound, "reg.exe", "add", `HKLM\System\CurrentControlSet\Control`, "/v", "ServicesPipeTimeout", "/t", "REG_SZ", "/d", "120000", "/f"); r.code != 0 {
		fatalf(t, "reg add ServicesPipeTimeout: exit %d\n%s", r.code, r.out)
	}
	h.restart(t)
	j.fakecri = j.startFakeCRI("fakecri")

	// The fixtures are what upstream's code writes.
	fixtures := filepath.Join(t.TempDir(), "fixtures")
	if r := h.run(t, commandBound, mustEnv(t, "KEADMNODE_EXE"), append([]string{"config", "--out", winPath(fixtures)}, keadmFixtureArgs(t)...)...); r.code != 0 {
		fatalf(t, "keadmnode config: exit %d\n%s", r.code, r.out)
	}
	for _, name := range []string{"join.yaml", "node.yaml"} {
		if got, want := j.readFile(filepath.Join(fixtures, name)), j.readFile(filepath.Join("..", "keadmnode", "testdata", name)); !bytes.Equal(got, want) {
			errorf(t, "test/keadmnode/testdata/%s is not what upstream's code writes now: run make keadm-fixture", name)
		}
	}

	// keadm's join, with upstream's edgecore in the release tarball.
	join := []string{"join", "--edgecore", winPath(upstream), "--cloudcore-ipport", "127.0.0.1:" + strconv.Itoa(hubPort),
		"--certport", strconv.Itoa(certPort), "--edgenode-name", keadmNode, "--token", j.token}
	r := h.run(t, joinBound, mustEnv(t, "KEADMNODE_EXE"), join...)
	t.Logf("keadmnode join: exit %d after %s\n%s", r.code, fmtDur(r.duration), indent(strings.ReplaceAll(r.out, j.token, "<token>")))
	if r.code != 0 {
		j.dumpLog()
		fatalf(t, "keadm's join did not finish")
	}
	eventually(t, readyBound, "node "+keadmNode+" Ready on upstream's edgecore", c.nodeReady(keadmNode, time.Time{}))
	cfgPath := h.drive(j.layout.ConfigFile)
	cfg := string(j.readFile(cfgPath))
	for _, want := range []string{`token: ""`, "windowsService: true", "podSandboxImage: kubeedge/pause:3.6", "hostnameOverride: " + keadmNode} {
		if !strings.Contains(cfg, want) {
			errorf(t, "the configuration keadm and upstream's edgecore left lacks %q:\n%s", want, cfg)
		}
	}
	if before := j.imagePath(); !strings.Contains(before, keadmCmdline) {
		fatalf(t, "the service does not run keadm's command line:\n%s", before)
	}
	if got, want := fileDigest(t, h.drive(keadmExe)), fileDigest(t, upstream); got != want {
		fatalf(t, "%s is not upstream's edgecore before the takeover", keadmExe)
	}
	e := &edge{os: "windows", name: keadmNode, fakecri: j.fakecri}
	e.createPod(t, c, "kept")
	eventually(t, podBound, "pod kept Running", c.podRunning("kept"))
	container := c.containerOf(t, "kept")
	oldCert := j.read(j.layout.CertFile)

	// The operator's copy of this build, where the quick start puts it.
	h.exe = build
	h.install(t, `C:\Program Files\edgecore`)

	// A planted upgrade journal is named, nothing done.
	planted := h.drive(j.layout.UpgradeDir + `\journal.json`)
	if err := os.MkdirAll(filepath.Dir(planted), 0o755); err != nil {
		fatal(t, err)
	}
	if err := os.WriteFile(planted, []byte(`{"kind":"upgrade","phase":"swap"}`), 0o644); err != nil {
		fatal(t, err)
	}
	refused := j.run([]string{"takeover", "--dry-run"}, 1)
	if !strings.Contains(refused.out, j.layout.UpgradeDir+": the upgrade journal and staged binaries") {
		errorf(t, "the takeover does not name the planted upgrade folder:\n%s", refused.out)
	}
	if err := os.RemoveAll(filepath.Dir(planted)); err != nil {
		fatal(t, err)
	}

	// The dry run: no process of keadm's binary besides the service's,
	// nothing changed.
	pids := h.keadmProcesses(t)
	if len(pids) != 1 {
		fatalf(t, "want the service's process of %s only, found %v", keadmExe, pids)
	}
	imageBefore, digestBefore := j.imagePath(), fileDigest(t, h.drive(keadmExe))
	var mu sync.Mutex
	seen := map[int]bool{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, p := range h.keadmProcesses(t) {
				mu.Lock()
				seen[p] = true
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	dry := j.run([]string{"takeover", "--dry-run", "--token", j.token}, 0)
	close(stop)
	<-done
	for p := range seen {
		if p != pids[0] {
			errorf(t, "a process of %s (%d) ran during the dry run", keadmExe, p)
		}
	}
	for _, want := range []string{"Dry run", "node " + keadmNode, "modules.edged.windowsService from true to false",
		"upstream's KubeEdge edgecore", "move " + j.layout.CertFile + " and " + j.layout.KeyFile + " aside"} {
		if !strings.Contains(dry.out, want) {
			errorf(t, "the dry run does not say %q", want)
		}
	}
	if strings.Contains(dry.out, j.token) {
		errorf(t, "the dry run prints the join token")
	}
	if string(j.readFile(cfgPath)) != cfg || j.imagePath() != imageBefore || fileDigest(t, h.drive(keadmExe)) != digestBefore ||
		!slices.Equal(h.keadmProcesses(t), pids) {
		fatalf(t, "the dry run changed the host")
	}

	// The takeover, rotating the certificate keadm left readable.
	logOffset := fileSize(h.drive(j.layout.LogFile))
	r = j.run([]string{"takeover", "--timeout", "3m", "--token", c.token(t)}, -1)
	if r.code != 0 || !strings.HasPrefix(lastLine(r.out), "result=success action=takeover from=keadm to=") {
		j.dumpLog()
		fatalf(t, "takeover: exit %d, last line %q", r.code, lastLine(r.out))
	}
	if got, want := fileDigest(t, h.drive(keadmExe)), fileDigest(t, build); got != want {
		errorf(t, "%s is not this build after the takeover", keadmExe)
	}
	// The new process: its own start line, then Ready since it started.
	started := startedAt(t, h.drive(j.layout.LogFile), logOffset)
	c.timeReady(t, keadmNode, started)
	for _, want := range []string{"edgehub connected to cloudcore", "moved " + j.layout.KeyFile + " aside", "removed the old " + j.layout.KeyFile} {
		if !strings.Contains(r.out, want) {
			errorf(t, "the takeover does not say %q", want)
		}
	}
	if bytes.Equal(j.read(j.layout.CertFile), oldCert) {
		errorf(t, "the node's certificate is keadm's after the takeover with --token")
	}
	for _, f := range []string{j.layout.CertFile, j.layout.KeyFile} {
		if fileExists(h.drive(f) + ".retired") {
			errorf(t, "the old %s is left beside the new one", f)
		}
	}
	c.sameContainer(t, "kept", container, "takeover")
	e.createdOnce(t, 1, "takeover")
	j.knowsPod("kept", "takeover")

	// This build blanks the new token once the certificate is issued.
	var after string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if after = string(j.readFile(cfgPath)); strings.Contains(after, `token: ""`) {
			break
		}
		if time.Now().After(deadline) {
			j.dumpLog()
			fatalf(t, "the new token is still in the configuration a minute after the new certificate was issued")
		}
	}
	if !strings.Contains(after, "windowsService: false") || !strings.Contains(after, "podSandboxImage: kubeedge/pause:3.6") {
		errorf(t, "the configuration after the takeover:\n%s", after)
	}
	status := j.imagePath()
	if !strings.Contains(status, `"`+keadmExe+`" --config C:\etc\kubeedge\config\edgecore.yaml`) || strings.Contains(status, "--log-file") {
		errorf(t, "the service's command line after the takeover:\n%s", status)
	}
	t.Logf("takeover: %s in %s; node %s Ready with pod kept in container %s, a new certificate", lastLine(r.out), fmtDur(r.duration), keadmNode, container)
}

// keadmFixtureArgs are the Makefile's KEADM_FIXTURE_ARGS: the fixtures'
// fixed inputs.
func keadmFixtureArgs(t *testing.T) []string {
	return strings.Fields(mustEnv(t, "KEADM_FIXTURE_ARGS"))
}

// keadmProcesses are the IDs of the processes of the host's prefix that
// run keadm's binary (Wine shows a Windows program's path as its command
// line).
func (h *winHost) keadmProcesses(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		fatal(t, err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if strings.Contains(strings.ToLower(string(cmd)), strings.ToLower(keadmExe)) && bytes.Contains(env, []byte("WINEPREFIX="+h.prefix+"\x00")) {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

func fileDigest(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		fatal(t, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// imagePath is the service's command line as the registry holds it.
func (j *journey) imagePath() string {
	j.t.Helper()
	r := j.h.run(j.t, commandBound, "reg.exe", "query", `HKLM\System\CurrentControlSet\Services\edgecore`, "/v", "ImagePath")
	if r.code != 0 {
		fatalf(j.t, "reg query: exit %d\n%s", r.code, r.out)
	}
	return r.out
}
