package node

import (
	"context"
	"errors"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
)

// runtimeProbe asks the container runtime at an endpoint whether it
// answers (hostprobe's CRI probe in production).
type runtimeProbe func(ctx context.Context, endpoint string) error

// Timing of the wait for the runtime. At boot containerd opens its pipe
// moments after edgecore starts, and every poll interval of lateness adds
// to the node's time to Ready (a 2 s poll was most of the 2.4 s from
// start to Ready in the journey's crash); a poll of a runtime that is not
// there is one failed pipe open, so four a second cost nothing.
const (
	runtimePollInterval = 250 * time.Millisecond
	runtimeLogInterval  = 30 * time.Second
)

// waitForRuntime returns once the container runtime answers at endpoint,
// or with ctx's cause when the node is stopped first. A server the node
// does not trust (servertrust) does not count as an answer: the node
// waits on, logging the refusal with the serving process. The kubelet inside
// edged gives up at once when the runtime does not answer ("validate
// service connection"), and edgecore ends with it. At boot containerd can
// come up after edgecore: when it is not a service edgecore depends on, or
// while it is still opening its pipe. Waiting here makes the node's start
// independent of that order instead of relying on the service manager's
// next restart.
func waitForRuntime(ctx context.Context, endpoint string, probe runtimeProbe, poll, logEvery time.Duration) error {
	began := time.Now()
	var lastLog time.Time
	for {
		err := probe(ctx, endpoint)
		if err == nil {
			if !lastLog.IsZero() {
				klog.InfoS("The container runtime answers; starting the node", "endpoint", redact.URL(endpoint), "waited", time.Since(began).Round(time.Second))
			}
			return nil
		}
		var refused *servertrust.RefusedError
		if (lastLog.IsZero() || time.Since(lastLog) >= logEvery) && errors.As(err, &refused) {
			// Waiting for containerd to serve its pipe again: the
			// server there now gets no call.
			klog.ErrorS(err, "Not starting the node on a container runtime it does not trust; waiting for one it does", "endpoint", redact.URL(endpoint), "waited", time.Since(began).Round(time.Second))
			lastLog = time.Now()
		} else if lastLog.IsZero() || time.Since(lastLog) >= logEvery {
			klog.InfoS("Waiting for the container runtime before starting the node: is containerd running? (Get-Service containerd; Start-Service containerd)",
				"endpoint", redact.URL(endpoint), "waited", time.Since(began).Round(time.Second), "err", redact.String(err.Error()))
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(poll):
		}
	}
}
