package node

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// The service runs the kubelet's ProcessShutdownEvent, bounded by the
// configuration's grace periods, and gets its error.
func TestHostShutdownRunsTheKubeletsHandler(t *testing.T) {
	var order []string
	boom := errors.New("killing pod default/app failed")
	ns := hostShutdown(func() error { order = append(order, "pods"); return boom },
		config.NodeShutdown{Grace: 30 * time.Second, Field: "modules.edged.tailoredKubeletConfig.shutdownGracePeriod"}, time.Now,
		func(d time.Duration) { order = append(order, "settle "+d.String()) })
	if ns.Grace != 30*time.Second {
		t.Errorf("Grace = %v, want the configuration's 30s", ns.Grace)
	}
	if err := ns.Run(); !errors.Is(err, boom) {
		t.Errorf("Run = %v, want the handler's error", err)
	}
	// The pods' last statuses get time to leave before the node stops,
	// within what the service allows past the grace periods.
	if strings.Join(order, ", ") != "pods, settle 2s" {
		t.Errorf("ran %q, want the handler once, then the settle", order)
	}
	if statusSettle >= service.NodeShutdownSlack {
		t.Errorf("statusSettle %v leaves nothing of NodeShutdownSlack %v", statusSettle, service.NodeShutdownSlack)
	}
}

// A preparation the service manager cannot answer (Wine) is reported, and
// the manager still registers.
func TestTolerantPrepareWarnsInsteadOfFailing(t *testing.T) {
	refused := errors.New("Could not access config of service edgecore: Invalid level.")
	var gotName string
	var gotPeriod time.Duration
	var warned []error
	prepare := tolerantPrepare(func(_ struct{}, name string, period time.Duration) error {
		gotName, gotPeriod = name, period
		return refused
	}, func(err error) { warned = append(warned, err) })
	if err := prepare(struct{}{}, "edgecore", 30*time.Second); err != nil {
		t.Errorf("prepare = %v, want nil so that the manager registers", err)
	}
	if gotName != "edgecore" || gotPeriod != 30*time.Second {
		t.Errorf("upstream asked for %q and %v, want edgecore and 30s", gotName, gotPeriod)
	}
	if len(warned) != 1 || !errors.Is(warned[0], refused) {
		t.Errorf("warned %v, want upstream's error once", warned)
	}
	ok := tolerantPrepare(func(struct{}, string, time.Duration) error { return nil }, func(err error) { warned = append(warned, err) })
	if err := ok(struct{}{}, "edgecore", time.Second); err != nil || len(warned) != 1 {
		t.Errorf("a preparation that works: %v, %d warnings", err, len(warned))
	}
}

// A service whose pre-shutdown time-out is shorter than the
// configuration's node shutdown needs does not start, naming the file, the
// field and the fix; when the time-out cannot be read, the node runs.
func TestCheckPreShutdown(t *testing.T) {
	ns := config.NodeShutdown{Grace: 30 * time.Second, Field: "modules.edged.tailoredKubeletConfig.shutdownGracePeriod"}
	installed := func(timeout time.Duration) func(string) (service.Status, error) {
		return func(name string) (service.Status, error) {
			if name != service.DefaultName {
				t.Errorf("queried service %q, want %q", name, service.DefaultName)
			}
			return service.Status{Name: name, Installed: true, State: service.Running, PreShutdownTimeout: timeout}, nil
		}
	}
	if err := checkPreShutdown(`C:\etc\kubeedge\config\edgecore.yaml`, ns, installed(70*time.Second)); err != nil {
		t.Errorf("70s for 30s of pods: %v", err)
	}
	err := checkPreShutdown(`C:\etc\kubeedge\config\edgecore.yaml`, ns, installed(35*time.Second))
	var short *service.PreShutdownError
	if !errors.As(err, &short) {
		t.Fatalf("35s for 30s of pods = %v, want a PreShutdownError", err)
	}
	for _, want := range []string{`config file C:\etc\kubeedge\config\edgecore.yaml`, ns.Field, "waits only 35s", "service install", "or lower " + ns.Field} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	for name, query := range map[string]func(string) (service.Status, error){
		"query failed": func(string) (service.Status, error) { return service.Status{}, errors.New("access is denied") },
		"unreadable":   installed(0),
	} {
		if err := checkPreShutdown("edgecore.yaml", ns, query); err != nil {
			t.Errorf("%s: %v, want the node to run", name, err)
		}
	}
}
