//go:build e2e && benchnode

// The recovery benchmark (`make bench-recovery`): how long a node takes to
// be Ready again, as Kubernetes reads it (the Ready condition, set by the
// node lifecycle controller of the e2e cluster and by the kubelet), for
// our edgecore and the reference edgecore built from upstream's own main
// in the same module graph, run in turn against the loopback cloud of the
// end-to-end tests with the same configuration and fake runtime. It
// reports figures; it asserts none.

package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// recoverySample holds the figures of one run of one node.
type recoverySample struct {
	// outage: cloudcore's start to the node Ready=True with a heartbeat
	// sent since, after the node lifecycle controller had marked it
	// Ready=Unknown; lease: the same start to the node's Lease renewed
	// (the process alive, not Ready).
	outage, lease time.Duration
	// crash: the start of the edgecore process that replaced a killed one
	// to the node Ready with a heartbeat sent since.
	crash time.Duration
	// unknown: cloudcore's stop to the node Ready=Unknown (the controller's
	// grace period, the same for every node); answered: cloudcore's start
	// to its hub answering (the same for every node: cloudcore's own
	// start-up, part of the outage figures).
	unknown, answered time.Duration
}

func TestBenchRecovery(t *testing.T) {
	runs := envInt(t, "BENCH_RUNS", 5)
	native := os.Getenv("BENCH_LINUX") != "0"
	wine := os.Getenv("BENCH_WINE") != "0"
	variants := []variant{
		{"ours", mustEnv(t, "EDGECORE_BIN"), mustEnv(t, "EDGECORE_EXE")},
		{"reference", mustEnv(t, "REF_EDGECORE_BIN"), mustEnv(t, "REF_EDGECORE_EXE")},
	}
	c := startCluster(t)
	samples := map[string]map[string][]recoverySample{"Linux": {}, "Wine": {}}
	for _, sys := range []struct {
		goos, label string
		on          bool
	}{{"linux", "Linux", native}, {"windows", "Wine", wine}} {
		// A B A B: drift of the machine (other builds, caches) falls on
		// both.
		for i := 1; sys.on && i <= runs; i++ {
			for _, v := range variants {
				t.Run(fmt.Sprintf("%s/%s/%d", sys.goos, v.name, i), func(t *testing.T) {
					samples[sys.label][v.name] = append(samples[sys.label][v.name], recoveryRun(t, c, sys.goos, v, i))
				})
			}
		}
	}
	table := recoveryTable(variants, samples, runs)
	fmt.Print(table)
	if out := os.Getenv("BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			errorl(t, err)
		}
	}
}

// recoveryRun starts a node of variant v, waits until it is Ready, and
// measures a cloud outage and a crash of its process.
func recoveryRun(t *testing.T, c *cluster, goos string, v variant, i int) recoverySample {
	name := fmt.Sprintf("recovery-%s-%s-%d", goos, v.name, i)
	// The cloudcore a run before started ended with that run.
	if c.cloudcore.exited() {
		c.restartCloudcore(t)
	}
	e := newNamedEdge(t, c, goos, name)
	relaxDiskEviction(t, e)
	e.bin = v.linux
	if goos == "windows" {
		e.bin = v.exe
		if v.name != "ours" {
			consoleKubelet(t, e)
		}
	}
	t.Cleanup(func() { keepLog(t, e.edgecore, name) })
	e.startEdgecore(t)
	eventually(t, readyBound, "node "+name+" Ready", c.nodeReady(name, time.Time{}))
	var s recoverySample

	// The outage: long enough for the controller to mark the node
	// Ready=Unknown, then cloudcore started again.
	c.cloudcore.stop()
	s.unknown = c.wentUnknown(t, name, "cloudcore stopped")
	from := c.restartCloudcore(t)
	s.answered = c.hubAnswered.Sub(from)
	s.outage, s.lease, _ = c.timeReady(t, name, from)
	t.Logf("%s: Ready=Unknown %s after cloudcore stopped; after it started again, Lease renewed %s, Ready %s", name,
		fmtDur(s.unknown), fmtDur(s.lease), fmtDur(s.outage))

	// The crash: the process killed and started at once, as a service
	// manager does, in a later second than the killed one's last report.
	e.edgecore.kill()
	nextSecond()
	e.startEdgecore(t)
	s.crash, _, _ = c.timeReady(t, name, e.edgecore.started)
	t.Logf("%s: after a crash, Ready %s after edgecore started", name, fmtDur(s.crash))
	e.edgecore.stop()
	e.fakecri.stop()
	return s
}

// recoveryTable renders the median and the largest figure of each variant,
// and the ratio of ours to the reference's medians, as a Markdown table
// under a line with the date and the machine.
func recoveryTable(vs []variant, samples map[string]map[string][]recoverySample, runs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nRecovery benchmark, %s, %d runs each, run alternately; node lifecycle controller grace period %v\n\n",
		machine(), runs, nodeGrace)
	head, rule := "| figure |", "|---|"
	for _, v := range vs {
		head += fmt.Sprintf(" %s median | %s max |", v.name, v.name)
		rule += "---|---|"
	}
	for _, v := range vs[1:] {
		head += " ours/" + v.name + " (medians) |"
		rule += "---|"
	}
	fmt.Fprintf(&b, "%s\n%s\n", head, rule)
	for _, sys := range []string{"Linux", "Wine"} {
		for _, f := range []struct {
			label string
			get   func(recoverySample) time.Duration
		}{
			{"Ready=True again after Ready=Unknown (a cloud outage), from cloudcore's start", func(s recoverySample) time.Duration { return s.outage }},
			{"Ready again after a crash, from the new edgecore's start", func(s recoverySample) time.Duration { return s.crash }},
			{"Lease renewed after the outage (the node connected, not Ready), from cloudcore's start", func(s recoverySample) time.Duration { return s.lease }},
			{"cloudcore's hub answering, from cloudcore's start (the cloud's own start-up)", func(s recoverySample) time.Duration { return s.answered }},
		} {
			if len(samples[sys][vs[0].name]) == 0 {
				continue
			}
			line := "| " + sys + ": " + f.label + " |"
			medians := make([]float64, len(vs))
			for i, v := range vs {
				var xs []float64
				for _, s := range samples[sys][v.name] {
					xs = append(xs, f.get(s).Seconds())
				}
				medians[i] = median(xs)
				line += fmt.Sprintf(" %.2f s | %.2f s |", medians[i], slices.Max(append(xs, 0)))
			}
			for _, m := range medians[1:] {
				ratio := "–"
				if m != 0 {
					ratio = fmt.Sprintf("%.2f", medians[0]/m)
				}
				line += " " + ratio + " |"
			}
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}
