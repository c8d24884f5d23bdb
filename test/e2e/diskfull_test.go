//go:build e2e && chaos

package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
)

// The node's data folder filling up (`make chaos-diskfull`, and part of
// `make chaos`): the Linux node keeps its database, its own log, the
// kubelet's root directory (the pods' folders) and the pods' logs on a
// small ext4 volume of its own, which the test fills while pods run, three
// times: space returns with the node running; the node is killed while
// full and started once space returned; it is killed and started while
// still full.
//
// What the node must do, and what the test asserts:
//   - the pods keep running: the kubelet stops, creates or starts nothing
//     for them in the fake runtime while the volume is full;
//   - the node reports the pressure: the kubelet's eviction manager sees
//     the volume of its root directory (nodefs) below its threshold and
//     sets DiskPressure=True, which the cloud sees (and the node lifecycle
//     controller turns into the disk-pressure taint);
//   - edgecore keeps running (no crash, no panic), keeps its node Ready
//     with heartbeats sent while the volume is full, and says in its log
//     which folder is full and what to do;
//   - the database stays whole (`PRAGMA integrity_check`) through the fill,
//     through a kill -9 while the volume is full and through the restart
//     after space came back, and keeps every pod;
//   - it recovers when space returns: DiskPressure=False, statuses flow,
//     and a pod created then starts;
//   - started while the volume is full (a service restarted after a
//     crash), it waits for space, saying why, instead of ending (a crash
//     loop), and starts by itself once space returns.
//
// The eviction thresholds: the kubelet's defaults make nodefs.available
// 10% a hard threshold, and at a hard threshold the kubelet evicts the
// node's pods one by one (10 s apart) whether or not they use the volume.
// An edge node's pods cannot go elsewhere, so the scenario runs the node
// as docs/measurements.md ("Fault injection: disk full") advises an
// operator to: the volume's signal as a soft threshold with a grace period
// longer than an outage lasts, which reports DiskPressure (and stops the
// node admitting pods) at once and evicts only if the volume stays full
// past the grace period. The pressure transition period is 30 s instead of
// 5 minutes so that the recovery fits in the test.

const (
	diskFullVolume     = 64 << 20
	diskFullHold       = 45 * time.Second
	diskFullTransition = 30 * time.Second
)

func TestChaosDiskFullLinux(t *testing.T) {
	c := startCluster(t)
	e := newNamedEdge(t, c, "linux", "diskfull-linux")
	ctx := context.Background()
	data := mountSmallVolume(t, filepath.Join(e.dir, "data"), diskFullVolume)
	logFile := filepath.Join(data, "log", "edgecore.log")
	db := filepath.Join(data, "edgecore.db")
	e.keepDataOn(t, data)

	t.Cleanup(func() { keepOnFailure(t, logFile) })
	e.startWithLogFile(t, logFile)
	eventually(t, readyBound, "node "+e.name+" Ready", c.nodeReady(e.name, time.Time{}))
	for _, pod := range []string{"app-1", "app-2"} {
		e.createPod(t, c, pod)
		eventually(t, podBound, "pod "+pod+" Running", c.podRunning(pod))
	}
	before := map[string]string{"app-1": c.containerOf(t, "app-1"), "app-2": c.containerOf(t, "app-2")}

	// Round 1: the volume fills while the node runs, then space returns.
	filled := fillVolume(t, data)
	pressure := eventually(t, 2*time.Minute, "DiskPressure=True on "+e.name, c.diskPressure(e.name, true))
	t.Logf("volume full: DiskPressure=True %s after the fill", fmtDur(pressure))
	time.Sleep(time.Until(filled.Add(diskFullHold)))
	if e.edgecore.exited() {
		fatalf(t, "edgecore ended while its data volume was full")
	}
	eventually(t, readyBound, "node Ready with a heartbeat sent while the volume was full", c.nodeReady(e.name, filled))
	untouched(t, e.fakecri.log, filled, "the volume filling up", "app-1", "app-2")
	dbWhole(t, db, "while the volume is full")
	e.saidVolumeFull(t, logFile, data)

	freed := freeVolume(t, data)
	cleared := eventually(t, 2*time.Minute+diskFullTransition, "DiskPressure=False on "+e.name, c.diskPressure(e.name, false))
	eventually(t, readyBound, "node Ready with a heartbeat after space returned", c.nodeReady(e.name, freed))
	e.createPod(t, c, "app-3")
	newPod := eventually(t, podBound, "pod app-3 Running after space returned", c.podRunning("app-3"))
	for pod, container := range before {
		c.sameContainer(t, pod, container, "the volume filling up")
	}
	dbWhole(t, db, "after space returned")
	t.Logf("space returned: DiskPressure=False %s after it (transition period %v), a new pod Running %s after that", fmtDur(cleared), diskFullTransition, fmtDur(newPod))

	// Round 2: a crash while the volume is full, the restart after space
	// returned.
	filled = fillVolume(t, data)
	pressure2 := eventually(t, 2*time.Minute, "DiskPressure=True on "+e.name+" again", c.diskPressure(e.name, true))
	// Something for the node to write while it cannot: the pod's deletion.
	if err := c.client.CoreV1().Pods("default").Delete(ctx, "app-3", metav1.DeleteOptions{}); err != nil {
		fatal(t, err)
	}
	time.Sleep(10 * time.Second)
	e.edgecore.kill()
	dbWhole(t, db, "after a kill -9 while the volume was full")
	freeVolume(t, data)
	nextSecond()
	e.startWithLogFile(t, logFile)
	restarted := e.edgecore.started
	again := c.readyAgain(t, e.name, restarted, restarted, "edgecore started after a kill -9 while the volume was full")
	for pod, container := range before {
		keptRunning(t, e.fakecri.log, pod, container, restarted, "the crash while the volume was full")
		c.sameContainer(t, pod, container, "the crash while the volume was full")
	}
	eventually(t, podBound, "the deletion of app-3 made while the volume was full confirmed by the node", func() (bool, error) {
		_, err := c.client.CoreV1().Pods("default").Get(ctx, "app-3", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	eventually(t, 2*time.Minute+diskFullTransition, "DiskPressure=False on "+e.name+" after the restart", c.diskPressure(e.name, false))
	e.createPod(t, c, "app-4")
	eventually(t, podBound, "pod app-4 Running after the restart", c.podRunning("app-4"))
	dbWhole(t, db, "after the restart")

	// Round 3: a crash while the volume is full and the start at once,
	// still full, as a service manager restarts a crashed service. The
	// node waits for space before it opens its database (upstream ends
	// the process when it cannot make its tables: a crash loop) and says
	// why; it starts by itself once space returns.
	fillVolume(t, data)
	eventually(t, 2*time.Minute, "DiskPressure=True on "+e.name+" a third time", c.diskPressure(e.name, true))
	e.edgecore.kill()
	nextSecond()
	e.startWithLogFile(t, logFile)
	eventually(t, time.Minute, "edgecore started on a full volume saying why it waits", func() (bool, error) {
		return e.edgecore.logContains("no space left for the node's database (edgecore.db) in " + data), nil
	})
	time.Sleep(20 * time.Second)
	if e.edgecore.exited() {
		fatalf(t, "edgecore started on a full volume ended: a service would crash-loop")
	}
	waited := e.edgecore.started
	freed = freeVolume(t, data)
	startedOnFull := eventually(t, readyBound, "node Ready after space returned to a node started on a full volume", c.nodeReady(e.name, freed))
	for pod, container := range before {
		keptRunning(t, e.fakecri.log, pod, container, waited, "the start on a full volume")
		c.sameContainer(t, pod, container, "the start on a full volume")
	}
	dbWhole(t, db, "after the start on a full volume")
	for _, pod := range []string{"app-1", "app-2", "app-4"} {
		if known, err := dbHoldsPod(db, pod); err != nil || !known {
			errorf(t, "the node's database does not hold pod %s after the disk-full rounds (%v)", pod, err)
		}
	}
	e.noPanic(t, logFile)
	wantCreated(t, e.fakecri.log, "the disk-full scenario", map[string]created{
		"default/app-1": {1, 1}, "default/app-2": {1, 1}, "default/app-3": {1, 1}, "default/app-4": {1, 1},
	})
	fmt.Printf("diskfull figures (linux edge, %d MiB volume): DiskPressure=True %s after the fill (%s the second time); False %s after space returned (transition period %v); after a kill -9 while full and the restart once space returned, Ready again %s after the start; started on the full volume, Ready %s after space returned\n",
		diskFullVolume>>20, fmtDur(pressure), fmtDur(pressure2), fmtDur(cleared), diskFullTransition, fmtDur(again), fmtDur(startedOnFull))
}

// mountSmallVolume makes an ext4 file system of size bytes in an image
// beside dir and mounts it on dir (root only). No blocks are reserved for
// root: the node runs as root, and reserved blocks would let it write on
// after the volume shows full. The edge's cleanup unmounts it.
func mountSmallVolume(t *testing.T, dir string, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a size-limited volume for the node's data needs root")
	}
	img := dir + ".img"
	f, err := os.Create(img)
	if err != nil {
		fatal(t, err)
	}
	if err := f.Truncate(size); err != nil {
		fatal(t, err)
	}
	f.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatal(t, err)
	}
	for _, argv := range [][]string{{"mkfs.ext4", "-q", "-F", "-m", "0", img}, {"mount", "-o", "loop", img, dir}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			fatalf(t, "%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// keepDataOn moves everything the node writes as it runs onto the volume
// at data: its database, the kubelet's root directory and the pods' logs
// (the log file is given at start), and sets the eviction thresholds the
// scenario's comment explains.
func (e *edge) keepDataOn(t *testing.T, data string) {
	t.Helper()
	cfg, _, err := config.Load(e.cfgPath, config.Host{GOOS: e.os})
	if err != nil {
		fatal(t, err)
	}
	cfg.DataBase.DataSource = filepath.Join(data, "edgecore.db")
	ed := cfg.Modules.Edged
	ed.RootDirectory = filepath.Join(data, "kubelet")
	k := ed.TailoredKubeletConfig
	k.PodLogsDir = filepath.Join(data, "pods")
	// The images stay on the host's disk (the fake runtime's image
	// folder), with the e2e's thresholds for it.
	// The configuration is decoded over upstream's defaults, whose hard
	// nodefs thresholds a map without them would keep: "0%" is the
	// kubelet's way to turn a signal off.
	k.EvictionHard = map[string]string{"memory.available": "100Mi", "imagefs.available": "1Gi", "imagefs.inodesFree": "5%",
		"nodefs.available": "0%", "nodefs.inodesFree": "0%"}
	k.EvictionSoft = map[string]string{"nodefs.available": "10%", "nodefs.inodesFree": "5%"}
	k.EvictionSoftGracePeriod = map[string]string{"nodefs.available": "1h", "nodefs.inodesFree": "1h"}
	k.EvictionPressureTransitionPeriod = metav1.Duration{Duration: diskFullTransition}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		fatal(t, err)
	}
	if err := os.WriteFile(e.cfgPath, out, 0o600); err != nil {
		fatal(t, err)
	}
}

// startWithLogFile starts edgecore logging to logFile, as a service does.
// What it prints before its log is open, and a Go panic, stay in the
// process's own log in the edge's folder.
func (e *edge) startWithLogFile(t *testing.T, logFile string) {
	t.Helper()
	e.starts++
	bin, args := e.command(e.bin, "--config", e.cfgArg, "--log-file", e.path(logFile))
	e.edgecore = start(t, e.dir, fmt.Sprintf("edgecore-%d", e.starts), e.env, bin, args...)
}

// fillVolume writes a file on the volume at dir until the volume refuses
// more, and returns when it began.
func fillVolume(t *testing.T, dir string) time.Time {
	t.Helper()
	began := time.Now()
	f, err := os.OpenFile(filepath.Join(dir, "filler"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fatal(t, err)
	}
	defer f.Close()
	written := int64(0)
	for _, chunk := range []int{1 << 20, 4 << 10, 512} {
		buf := make([]byte, chunk)
		for {
			n, err := f.Write(buf)
			written += int64(n)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				fatal(t, err)
			}
		}
	}
	f.Sync()
	var st syscall.Statfs_t
	syscall.Statfs(dir, &st)
	t.Logf("filled %s with %d MiB: %d bytes free", dir, written>>20, st.Bavail*uint64(st.Bsize))
	return began
}

// freeVolume removes what fillVolume wrote and returns when.
func freeVolume(t *testing.T, dir string) time.Time {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		fatal(t, err)
	}
	t.Logf("freed %s", dir)
	return time.Now()
}

// diskPressure holds when the node's DiskPressure condition is want.
func (c *cluster) diskPressure(name string, want bool) func() (bool, error) {
	return func() (bool, error) {
		n, err := c.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeDiskPressure {
				return (cond.Status == corev1.ConditionTrue) == want, fmt.Errorf("DiskPressure %s (%s: %s)", cond.Status, cond.Reason, cond.Message)
			}
		}
		return false, fmt.Errorf("no DiskPressure condition")
	}
}

// dbWhole runs SQLite's integrity check on the node's database.
func dbWhole(t *testing.T, path, when string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		fatal(t, err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&got); err != nil {
		errorf(t, "integrity_check of %s %s: %v", path, when, err)
		return
	}
	if got != "ok" {
		errorf(t, "integrity_check of %s %s: %s", path, when, got)
		return
	}
	t.Logf("integrity_check of the node's database %s: ok", when)
}

// saidVolumeFull checks that the node said, where an operator looks, that
// its data volume is full, naming the folder: in its log file once space
// returned (the lines it could not write meanwhile are counted there) or,
// while the file cannot grow, on standard error.
func (e *edge) saidVolumeFull(t *testing.T, logFile, dir string) {
	t.Helper()
	eventually(t, time.Minute, "edgecore saying that "+dir+" is full", func() (bool, error) {
		data, _ := os.ReadFile(e.edgecore.log)
		logged, _ := os.ReadFile(logFile)
		for _, b := range [][]byte{data, logged} {
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, "no space left") && strings.Contains(line, dir) {
					t.Logf("edgecore said: %s", line)
					return true, nil
				}
			}
		}
		return false, errors.New("no line naming the folder and the lack of space")
	})
}

// noPanic checks every log of the edge's edgecore runs for a panic.
func (e *edge) noPanic(t *testing.T, logFile string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(e.dir, "edgecore-*.log"))
	logs = append(logs, logFile)
	for _, p := range logs {
		data, _ := os.ReadFile(p)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "panic:") || strings.Contains(line, "goroutine ") && strings.Contains(line, "[running]") || strings.Contains(line, "Observed a panic") {
				errorf(t, "%s: %s", p, line)
			}
		}
	}
}

// keepOnFailure copies the node's log file out of the test's folder, which
// goes with the test, when the test failed.
func keepOnFailure(t *testing.T, logFile string) {
	if !t.Failed() {
		return
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Logf("the node's log %s: %v", logFile, err)
		return
	}
	kept := filepath.Join(os.TempDir(), fmt.Sprintf("diskfull-edgecore-%d.log", time.Now().Unix()))
	if err := os.WriteFile(kept, data, 0o600); err == nil {
		t.Logf("the node's log is kept in %s", kept)
	}
}

// untouched checks, in the runtime's record since after, that the running
// kubelet kept relisting the runtime and neither stopped, created nor
// started anything for the pods (in namespace default).
func untouched(t *testing.T, criLog string, after time.Time, event string, pods ...string) {
	t.Helper()
	relists := 0
	for _, c := range criCalls(t, criLog, after) {
		if c.method == "ListPodSandbox" {
			relists++
		}
		if c.pod == nil || !slices.Contains(pods, strings.TrimPrefix(c.pod.pod, "default/")) {
			continue
		}
		switch c.pod.call {
		case "RunPodSandbox", "StopPodSandbox", "CreateContainer", "StartContainer", "StopContainer", "RemoveContainer", "RemovePodSandbox":
			errorf(t, "during %s the kubelet made a %s", event, c.pod)
		}
	}
	if relists == 0 {
		errorf(t, "during %s the kubelet did not list the runtime's sandboxes once", event)
	}
	t.Logf("during %s the kubelet relisted the runtime %d times and left pods %v alone", event, relists, pods)
}

// dbHoldsPod looks into the node's database at path for the pod (in
// namespace default), as knowsPod does for the e2e's own folder.
func dbHoldsPod(path, name string) (bool, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	err = db.QueryRow("SELECT count(*) FROM meta WHERE key = ?", "default/pod/"+name).Scan(&n)
	return n > 0, err
}
