package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// A module's panic must end edgecore through klog's exit hook (which a
// service turns into a reported stop) and leave the panic with its stack
// in standard error, which a service sends to panic.log.
func TestModulePanickedEndsThroughTheExitHook(t *testing.T) {
	panicLog, err := os.Create(filepath.Join(testdir.New(t, "node-panic-"), "panic.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer panicLog.Close()
	stderr, exit := os.Stderr, klog.OsExit
	defer func() { os.Stderr, klog.OsExit = stderr, exit }()
	os.Stderr = panicLog
	code := -1
	klog.OsExit = func(c int) { code = c }

	modulePanicked("websocket", "failed to apply the edge certs, err: code: 401", []byte("goroutine 94 [running]:\ncertificate.(*CertManager).Start()\n"))

	if code != 2 {
		t.Errorf("exit hook called with %d, want 2 (the runtime's code for a panic)", code)
	}
	data, err := os.ReadFile(panicLog.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"panic: failed to apply the edge certs, err: code: 401", "module websocket panicked", "(*CertManager).Start()"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("standard error lacks %q:\n%s", want, data)
		}
	}
}
