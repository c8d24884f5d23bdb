package core

import (
	"strings"
	"testing"
)

// certManagerStart stands for an upstream Start that panics, as edgehub's
// certificate manager does when the cloud refuses the join token.
func certManagerStart() { panic("failed to apply the edge certs") }

// withoutLegacyRestart turns EnableModuleRestart off for one test: an
// earlier test in the package turns it on, and with it every module has a
// policy.
func withoutLegacyRestart(t *testing.T) {
	was := restartEnabled.Swap(false)
	t.Cleanup(func() { restartEnabled.Store(was) })
}

func TestPanicHandlerGetsAPanicOfAModuleWithoutPolicy(t *testing.T) {
	withoutLegacyRestart(t)
	type report struct {
		module string
		value  any
		stack  string
	}
	got := make(chan report, 1)
	SetPanicHandler(func(module string, value any, stack []byte) {
		got <- report{module, value, string(stack)}
	})
	defer SetPanicHandler(nil)

	runModule(&testModule{name: "websocket", enabled: true, start: certManagerStart})

	select {
	case r := <-got:
		if r.module != "websocket" || r.value != "failed to apply the edge certs" {
			t.Errorf("handler got module %q, value %v", r.module, r.value)
		}
		// The operator needs the frames where it panicked, not only the
		// handler's own.
		if !strings.Contains(r.stack, "certManagerStart") {
			t.Errorf("the stack lacks the panicking function:\n%s", r.stack)
		}
	default:
		t.Fatal("the handler was not called")
	}
}

// A module with a restart policy is the bus's to restart: its panic never
// reaches the handler.
func TestPanicHandlerLeavesModulesWithAPolicyToTheBus(t *testing.T) {
	SetPanicHandler(func(string, any, []byte) { t.Error("the handler was called for a module with a restart policy") })
	defer SetPanicHandler(nil)
	runModule(&testModule{name: "edged", enabled: true, start: certManagerStart,
		policy: &ModuleRestartPolicy{RestartType: RestartTypeOnFailure, Retries: 1, IntervalSecond: 1}})
}
