//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
)

// What upstream's keadm v1.23 leaves on a Windows host (see
// internal/takeover's package comment for where in keadm each is read).
const (
	keadmExe     = `C:\usr\local\bin\edgecore.exe`
	keadmCmdline = keadmExe + ` --config C:\etc\kubeedge\config\edgecore.yaml --log-file C:\var\log\kubeedge\edgecore.log`
)

// TestWindowsTakeover takes over a node the way upstream's keadm leaves
// it: the service "edgecore" created by the service manager's own tool as
// keadm creates it (automatic start, no recovery actions) running
// C:\usr\local\bin\edgecore.exe with keadm's command line, the
// configuration in C:\etc\kubeedge\config\edgecore.yaml with the join
// token kept in it and windowsService: true, and the certificates a real
// join against the test cloud fetched with the token. The node runs a
// pod. `edgecore.exe takeover --dry-run` changes nothing; `edgecore.exe
// takeover` must leave the same node Ready with the same pod in the same
// container (the fake CRI's container ID unchanged, no sandbox or
// container created again) and the database's rows kept.
//
// Stand-in: the "keadm-installed" edgecore is this build, not upstream's
// edgecore.exe. Upstream's binary built from the tag under Wine as a
// native service with windowsService: true is not run here. This build
// refuses windowsService: true, so the stand-in runs with keadm's file
// without it, and the value keadm v1.23 writes is put into the file once
// the stand-in has read it: the takeover reads and rewrites the file as
// keadm wrote it.
func TestWindowsTakeover(t *testing.T) {
	c := startCluster(t)
	h := newWinHost(t)
	build := h.exe
	j := &journey{t: t, c: c, h: h, token: c.token(t), layout: config.NewLayout(config.Host{GOOS: "windows"})}
	j.fakecri = j.startFakeCRI("fakecri")

	// The certificates: a real join with the token against the test
	// cloud. Then the host is made the way keadm leaves it.
	j.node = j.joinedNode(j.run(j.args(joinCommand), 0).out)
	eventually(t, readyBound, "node "+j.node+" Ready", c.nodeReady(j.node, time.Time{}))
	j.run([]string{"service", "uninstall"}, 0)
	h.install(t, `C:\usr\local\bin`)
	if h.exe != keadmExe {
		fatalf(t, "installed at %s, want keadm's %s", h.exe, keadmExe)
	}
	cfgPath := h.drive(j.layout.ConfigFile)
	cfg := string(j.readFile(cfgPath))
	if !strings.Contains(cfg, `token: ""`) {
		fatalf(t, "join's configuration has no blanked token to put back:\n%s", cfg)
	}
	// keadm keeps the token in the file after the join.
	cfg = strings.Replace(cfg, `token: ""`, "token: "+j.token, 1)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		fatal(t, err)
	}
	for _, args := range [][]string{
		{"create", "edgecore", "binpath=", keadmCmdline, "start=", "auto", "displayname=", "edgecore"},
		{"start", "edgecore"},
	} {
		if r := h.run(t, commandBound, "sc.exe", args...); r.code != 0 {
			fatalf(t, "sc.exe %s: exit %d\n%s", strings.Join(args, " "), r.code, r.out)
		}
	}
	begin := time.Now()
	eventually(t, readyBound, "node Ready under keadm's service", c.nodeReady(j.node, begin))
	e := &edge{os: "windows", name: j.node, fakecri: j.fakecri}
	e.createPod(t, c, "kept")
	eventually(t, podBound, "pod kept Running", c.podRunning("kept"))
	container := c.containerOf(t, "kept")
	// keadm v1.23 writes windowsService: true (see the stand-in above).
	cfg = setWindowsService(t, cfg)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		fatal(t, err)
	}
	before := j.imagePath()
	if !strings.Contains(before, keadmCmdline) {
		fatalf(t, "the service does not run keadm's command line:\n%s", before)
	}

	// The operator's copy of this build, elsewhere.
	h.exe = build
	h.install(t, `C:\Users\admin\Downloads\edgecore`)
	dry := j.run([]string{"takeover", "--dry-run"}, 0)
	for _, want := range []string{"Dry run", "node " + j.node, "modules.edged.windowsService from true to false", "modules.edgeHub.token from "} {
		if !strings.Contains(dry.out, want) {
			errorf(t, "the dry run does not say %q", want)
		}
	}
	if strings.Contains(dry.out, j.token) {
		errorf(t, "the dry run prints the join token")
	}
	if now := string(j.readFile(cfgPath)); now != cfg || j.imagePath() != before {
		fatalf(t, "the dry run changed the host")
	}

	begin = time.Now()
	r := j.run([]string{"takeover", "--timeout", "3m"}, -1)
	if r.code != 0 || !strings.HasPrefix(lastLine(r.out), "result=success action=takeover from=keadm to=") {
		j.dumpLog()
		fatalf(t, "takeover: exit %d, last line %q", r.code, lastLine(r.out))
	}
	eventually(t, readyBound, "node Ready after the takeover", c.nodeReady(j.node, begin))
	c.sameContainer(t, "kept", container, "takeover")
	e.createdOnce(t, 1, "takeover")
	j.knowsPod("kept", "takeover")

	after := string(j.readFile(cfgPath))
	if strings.Contains(after, j.token) || !strings.Contains(after, "windowsService: false") {
		errorf(t, "the configuration after the takeover:\n%s", after)
	}
	if ours, theirs := j.readFile(build), j.readFile(h.drive(keadmExe)); !bytes.Equal(ours, theirs) {
		errorf(t, "%s is not this build after the takeover", keadmExe)
	}
	status := j.imagePath()
	if !strings.Contains(status, `"`+keadmExe+`" --config C:\etc\kubeedge\config\edgecore.yaml`) || strings.Contains(status, "--log-file") {
		errorf(t, "the service's command line after the takeover:\n%s", status)
	}
	t.Logf("takeover: %s in %s; node %s Ready with pod kept in container %s", lastLine(r.out), fmtDur(r.duration), j.node, container)
}

// setWindowsService puts windowsService: true into the edged section.
func setWindowsService(t *testing.T, cfg string) string {
	t.Helper()
	if strings.Contains(cfg, "windowsService:") {
		return strings.Replace(cfg, "windowsService: false", "windowsService: true", 1)
	}
	i := strings.Index(cfg, "    hostnameOverride: ")
	if i < 0 {
		fatalf(t, "no edged section with hostnameOverride:\n%s", cfg)
	}
	return cfg[:i] + "    windowsService: true\n" + cfg[i:]
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
