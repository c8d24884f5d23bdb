// Package preflight decides whether a Windows host is ready for edgecore:
// containerd, CNI, the sandbox image, the way to cloudcore and the host
// itself. Each check takes its facts from Probes and turns them into rows of
// a table, so the decisions are tested on any OS with fake probes; the real
// probes are in probe_*.go.
package preflight

import (
	"context"
	"strings"
)

// Status of a row.
type Status string

const (
	Pass Status = "PASS"
	// Warn: edgecore may work, or the check could not tell.
	Warn Status = "WARN"
	// Fail: edgecore or its pods will not work until the Fix is applied.
	Fail Status = "FAIL"
	// Skip: the check does not apply yet; the Detail says why and when it
	// will.
	Skip Status = "SKIP"
)

// Row is one line of the preflight table. Fix is a single line and is
// always set when Status is Fail.
type Row struct {
	Name   string
	Status Status
	Detail string
	Fix    string
}

func pass(name, detail string) Row { return Row{Name: name, Status: Pass, Detail: detail} }

func warn(name, detail, fix string) Row {
	return Row{Name: name, Status: Warn, Detail: detail, Fix: fix}
}

func fail(name, detail, fix string) Row {
	return Row{Name: name, Status: Fail, Detail: detail, Fix: fix}
}

func skip(name, reason string) Row { return Row{Name: name, Status: Skip, Detail: reason} }

// notProbed is the row for a check whose probe this build does not have;
// it must not pass silently.
func notProbed(name string) Row {
	return warn(name, "not checked: no probe for it in this build", "")
}

// couldNotCheck is the row for a probe that failed to find out.
func couldNotCheck(name string, err error) Row {
	return warn(name, "could not check: "+oneLine(err.Error()), "")
}

// Run runs the checks in the order the table shows them.
func Run(ctx context.Context, cfg Config, p Probes) []Row {
	cfg = cfg.withDefaults()
	var rows []Row
	rows = append(rows, checkWindowsBuild(p))
	rows = append(rows, checkContainersFeature(p))
	rows = append(rows, checkElevated(p))
	rows = append(rows, checkNoKubelet(p))
	rows = append(rows, checkFreeDisk(cfg, p))
	rows = append(rows, checkProtected(cfg, p)...)
	rows = append(rows, checkRuntimeFolders(cfg, p)...)
	rows = append(rows, checkCNIFolders(cfg, p)...)
	rows = append(rows, checkHostShutdown(cfg, p)...)
	rows = append(rows, checkCRI(ctx, cfg, p)...)
	rows = append(rows, checkCNIConfig(cfg, p)...)
	rows = append(rows, checkPodNetwork(cfg, p)...)
	rows = append(rows, checkServices(cfg, p)...)
	rows = append(rows, checkSandboxImage(ctx, cfg, p))
	rows = append(rows, checkRegistries(ctx, cfg, p)...)
	rows = append(rows, checkCloudCore(ctx, cfg, p)...)
	rows = append(rows, checkClock(cfg, p)...)
	return rows
}

// ExitCode is 1 when any row failed, 0 otherwise.
func ExitCode(rows []Row) int {
	for _, r := range rows {
		if r.Status == Fail {
			return 1
		}
	}
	return 0
}

// oneLine keeps probe errors (which may quote multi-line output) on the
// row's single line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
