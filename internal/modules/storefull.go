package modules

import (
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge/beehive/pkg/core/model"
	"github.com/kubeedge/kubeedge/edge/pkg/common/modules"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager"
)

// diskFullErrors are how a write refused for want of space reads once
// metaManager has wrapped it: SQLite's SQLITE_FULL, and the OS's ENOSPC
// and ERROR_DISK_FULL should a driver pass them on.
var diskFullErrors = []string{"database or disk is full", "no space left on device", "not enough space on the disk"}

// isDiskFull reports whether err is a write refused for want of space.
func isDiskFull(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	for _, s := range diskFullErrors {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// statusGoesOn is metaManager's StoreFailed policy (patches/0018): when the
// database cannot record a message for want of space, a status update or
// patch edged sends (node and pod statuses, what makes the cloud see the
// node alive and its DiskPressure) and a response on its way between edged
// and the cloud go on unrecorded: the record is a cache of what the cloud
// holds, and without them the cloud marks the node Ready=Unknown while it
// runs its pods. Any other failure, and whatever the cloud sends to create,
// change or delete, is refused as upstream refuses it. The first message
// let through is logged, then at most one every interval, with the count
// since the line before.
type statusGoesOn struct {
	mu       sync.Mutex
	now      func() time.Time
	interval time.Duration
	logged   time.Time
	passed   int
}

func (p *statusGoesOn) decide(msg *model.Message, err error) bool {
	if msg == nil || !isDiskFull(err) {
		return false
	}
	if msg.GetSource() != modules.EdgedModuleName && msg.GetOperation() != model.ResponseOperation {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.passed++
	if now := p.now(); p.logged.IsZero() || now.Sub(p.logged) >= p.interval {
		klog.ErrorS(err, "The node's database is full: statuses go to the cloud without being recorded; free space on the database's volume",
			"resource", msg.GetResource(), "operation", msg.GetOperation(), "passedSinceLastLine", p.passed)
		p.logged, p.passed = now, 0
	}
	return true
}

// installStoreFailed sets metaManager's hook to the policy.
func installStoreFailed() {
	p := &statusGoesOn{now: time.Now, interval: time.Minute}
	metamanager.StoreFailed = p.decide
}
