package context

import (
	"testing"
	"time"

	"github.com/kubeedge/beehive/pkg/core/model"
)

// BenchmarkSendReceive measures one-way throughput from a sender to a module
// draining its inbox.
func BenchmarkSendReceive(b *testing.B) {
	freshBus(b, "sink")
	msg := *model.NewMessage("").BuildRouter("bench", "g", "pod", model.UpdateOperation)
	done := make(chan struct{})
	go func() {
		for i := 0; i < b.N; i++ {
			if _, err := Receive("sink"); err != nil {
				b.Error(err)
				break
			}
		}
		close(done)
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Send("sink", msg)
	}
	<-done
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkSendSyncRoundTrip measures request and response latency through a
// module that answers at once.
func BenchmarkSendSyncRoundTrip(b *testing.B) {
	freshBus(b, "echo")
	responder("echo", func(req model.Message) *model.Message { return req.NewRespByMessage(&req, nil) })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := SendSync("echo", *model.NewMessage(""), 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendSyncParallel measures round trips with concurrent callers, the
// case in which responses can overtake their waiters.
func BenchmarkSendSyncParallel(b *testing.B) {
	freshBus(b, "echo")
	responder("echo", func(req model.Message) *model.Message { return req.NewRespByMessage(&req, nil) })
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := SendSync("echo", *model.NewMessage(""), 5*time.Second); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
