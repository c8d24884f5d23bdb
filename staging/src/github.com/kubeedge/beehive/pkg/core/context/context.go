// Package context is the in-process message bus shared by all modules of one
// process. It is a set of package-level functions over a single global bus,
// because every module of KubeEdge addresses it that way.
package context

import (
	gocontext "context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge/beehive/pkg/common"
	"github.com/kubeedge/beehive/pkg/core/model"
)

// InboxSize is how many messages a module's inbox holds before Send waits.
const InboxSize = 1024

// DefaultSyncTimeout applies to SendSync and SendToGroupSync when the caller
// passes no positive timeout.
const DefaultSyncTimeout = 30 * time.Second

// Errors callers can test for with errors.Is.
var (
	ErrUnknownModule = errors.New("module is not registered on the bus")
	ErrUnknownGroup  = errors.New("group has no modules on the bus")
	ErrTimeout       = errors.New("timed out")
	ErrStopped       = errors.New("bus is shutting down")
)

// wordedError reads as upstream's bus words the same failure, and still
// matches one of the errors above with errors.Is. Modules pass SendSync's
// error text on to their peers (servicebus and the metaserver answer HTTP
// clients with it, the metaserver agent stores it in an Application's status
// for the cloud), so where upstream has the same failure the text is its.
type wordedError struct {
	text string
	kind error
}

func (e *wordedError) Error() string { return e.text }
func (e *wordedError) Unwrap() error { return e.kind }

func worded(kind error, format string, args ...interface{}) error {
	return &wordedError{text: fmt.Sprintf(format, args...), kind: kind}
}

// inbox is a module's queue. The channel is never closed: closing would make
// a concurrent Send panic. Its end is signalled instead, in two steps:
//   - retired: the inbox no longer belongs to the bus, because Cleanup
//     removed it or AddModule replaced it. Senders still waiting for room
//     give up, so none stays blocked on a queue nobody will read.
//   - gone: Cleanup removed it. A receiver waiting on it returns an error.
//
// A receiver waiting on a replaced inbox keeps waiting (until shutdown), as
// upstream's does: the module instance that was re-added is expected to be
// replaced too, and its next Receive already reads the fresh inbox. Moving
// the waiting call over instead would let a stale instance compete with the
// new one for its messages.
type inbox struct {
	messages    chan model.Message
	retired     chan struct{}
	gone        chan struct{}
	retiredOnce sync.Once
	goneOnce    sync.Once
}

func newInbox() *inbox {
	return &inbox{
		messages: make(chan model.Message, InboxSize),
		retired:  make(chan struct{}),
		gone:     make(chan struct{}),
	}
}

func (in *inbox) retire() { in.retiredOnce.Do(func() { close(in.retired) }) }

func (in *inbox) remove() {
	in.retire()
	in.goneOnce.Do(func() { close(in.gone) })
}

// waiter collects the responses to one sync request. Its buffer holds every
// response it expects, so SendResp never blocks.
type waiter struct {
	responses chan model.Message
}

type bus struct {
	ctx    gocontext.Context
	cancel gocontext.CancelFunc

	mu      sync.RWMutex
	types   map[string]bool
	inboxes map[string]*inbox
	groups  map[string]map[string]struct{}

	waitersMu sync.Mutex
	waiters   map[string]*waiter
}

// The global bus exists from package initialisation on so that modules can
// watch Done() before InitContext runs. It sits behind an atomic pointer so
// that tests can start from a fresh bus while goroutines of earlier tests
// still read the old one.
var global atomic.Pointer[bus]

func init() { global.Store(newBus()) }

func cur() *bus { return global.Load() }

func newBus() *bus {
	ctx, cancel := gocontext.WithCancel(gocontext.Background())
	return &bus{
		ctx:     ctx,
		cancel:  cancel,
		types:   map[string]bool{},
		inboxes: map[string]*inbox{},
		groups:  map[string]map[string]struct{}{},
		waiters: map[string]*waiter{},
	}
}

// InitContext prepares the bus for the given context types. It may be called
// more than once; only the channel type is implemented.
func InitContext(types []string) {
	b := cur()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range types {
		if t != common.MsgCtxTypeChannel {
			klog.Warningf("beehive: context type %q is not supported, modules use %q", t, common.MsgCtxTypeChannel)
			continue
		}
		b.types[t] = true
	}
}

// GetContext returns the process-wide context; it is cancelled on shutdown.
func GetContext() gocontext.Context { return cur().ctx }

// Done is closed when the process-wide context is cancelled.
func Done() <-chan struct{} { return cur().ctx.Done() }

// Cancel cancels the process-wide context and so starts shutdown.
func Cancel() { cur().cancel() }

// AddModule creates the module's inbox. A module that already has one gets a
// fresh, empty inbox, as on upstream's bus: upstream re-adds a module to give
// it a clean start, and its module tests re-add modules expecting none of the
// messages queued by earlier tests. Messages still queued in the old inbox
// are dropped. Group memberships are kept and reach the new inbox. Our own
// restart back-off (package core) does not come here, so a module it
// restarts keeps its queue.
func AddModule(info *common.ModuleInfo) {
	b := cur()
	if info == nil || info.ModuleName == "" {
		klog.Error("beehive: refusing to add a module without a name")
		return
	}
	if info.IsRemote {
		klog.Warningf("beehive: module %s asks for a remote transport, which is not supported; it gets an in-process inbox", info.ModuleName)
	}
	b.mu.Lock()
	old, replaced := b.inboxes[info.ModuleName]
	b.inboxes[info.ModuleName] = newInbox()
	b.mu.Unlock()
	if replaced {
		klog.V(2).Infof("beehive: module %s re-added; %d queued messages dropped", info.ModuleName, len(old.messages))
		old.retire()
	}
}

// AddModuleGroup makes module a member of group. A module without an inbox
// is logged and left out, as on upstream's bus, so that a group never counts
// a member nothing can be delivered to (SendToGroupSync would wait for it).
// Membership is by name: a module re-added by AddModule keeps its groups,
// which then reach its fresh inbox.
func AddModuleGroup(module, group string) {
	b := cur()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.inboxes[module]; !ok {
		klog.Warningf("beehive: module %s has no inbox; not adding it to group %s", module, group)
		return
	}
	members, ok := b.groups[group]
	if !ok {
		members = map[string]struct{}{}
		b.groups[group] = members
	}
	members[module] = struct{}{}
}

// Cleanup removes the module's inbox and group memberships. Senders and a
// receiver blocked on that inbox are released.
func Cleanup(module string) {
	b := cur()
	b.mu.Lock()
	in, ok := b.inboxes[module]
	delete(b.inboxes, module)
	for group, members := range b.groups {
		delete(members, module)
		if len(members) == 0 {
			delete(b.groups, group)
		}
	}
	b.mu.Unlock()
	if ok {
		in.remove()
	}
}

func (b *bus) lookup(module string) (*inbox, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	in, ok := b.inboxes[module]
	return in, ok
}

func (b *bus) groupMembers(group string) []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	members := make([]string, 0, len(b.groups[group]))
	for m := range b.groups[group] {
		members = append(members, m)
	}
	return members
}

// deliver queues m, waiting while the inbox is full until the deadline (a nil
// channel waits without limit), the module is removed or the bus stops.
func (b *bus) deliver(module string, in *inbox, m model.Message, deadline <-chan time.Time) error {
	select {
	case in.messages <- m:
		return nil
	default:
	}
	select {
	case in.messages <- m:
		return nil
	case <-in.retired:
		// Cleaned up or re-added while the inbox was full: the message
		// belongs to a queue that was discarded.
		return fmt.Errorf("deliver %s to %s: inbox was removed or replaced: %w", m.Header.ID, module, ErrUnknownModule)
	case <-b.ctx.Done():
		return fmt.Errorf("deliver %s to %s: %w", m.Header.ID, module, ErrStopped)
	case <-deadline:
		return fmt.Errorf("deliver %s to %s: inbox full: %w", m.Header.ID, module, ErrTimeout)
	}
}

// Send queues m in the module's inbox. An unknown module is logged and the
// message dropped; Send never panics, also not after Cleanup.
func Send(module string, m model.Message) {
	b := cur()
	in, ok := b.lookup(module)
	if !ok {
		klog.Warningf("beehive: dropping message to unknown module %s: %s", module, m.String())
		return
	}
	if err := b.deliver(module, in, m, nil); err != nil {
		klog.Warningf("beehive: dropping message: %v", err)
	}
}

// Receive returns the next message of the module's inbox, blocking until one
// arrives. It fails for an unknown module, once the module is cleaned up and
// once the bus shuts down, so no module stays blocked after shutdown.
func Receive(module string) (model.Message, error) {
	b := cur()
	in, ok := b.lookup(module)
	if !ok {
		return model.Message{}, worded(ErrUnknownModule, "failed to get channel for module(%s)", module)
	}
	select {
	case m := <-in.messages:
		return m, nil
	default:
	}
	select {
	case m := <-in.messages:
		return m, nil
	case <-in.gone:
		return model.Message{}, fmt.Errorf("receive for %s: module was cleaned up: %w", module, ErrUnknownModule)
	case <-b.ctx.Done():
		return model.Message{}, fmt.Errorf("receive for %s: %w", module, ErrStopped)
	}
}

// addWaiter registers interest in responses to id before the request leaves,
// so a responder that answers at once cannot beat the caller.
func (b *bus) addWaiter(id string, expected int) *waiter {
	w := &waiter{responses: make(chan model.Message, expected)}
	b.waitersMu.Lock()
	b.waiters[id] = w
	b.waitersMu.Unlock()
	return w
}

func (b *bus) removeWaiter(id string) {
	b.waitersMu.Lock()
	delete(b.waiters, id)
	b.waitersMu.Unlock()
}

// markSync gives m an ID if it has none, since responses find their
// request by it, and marks m as awaiting a response.
func markSync(m *model.Message) {
	if m.Header.ID == "" {
		m.UpdateID()
	}
	m.Header.Sync = true
}

func syncTimeout(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return DefaultSyncTimeout
	}
	return timeout
}

// SendSync delivers m marked as sync and waits for the response whose parent
// ID is m's ID.
func SendSync(module string, m model.Message, timeout time.Duration) (model.Message, error) {
	b := cur()
	in, ok := b.lookup(module)
	if !ok {
		return model.Message{}, worded(ErrUnknownModule, "bad request module name(%s)", module)
	}
	timeout = syncTimeout(timeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	markSync(&m)

	w := b.addWaiter(m.Header.ID, 1)
	defer b.removeWaiter(m.Header.ID)
	if err := b.deliver(module, in, m, timer.C); err != nil {
		if errors.Is(err, ErrTimeout) {
			return model.Message{}, worded(ErrTimeout, "timeout to send message %s", m.Header.ID)
		}
		return model.Message{}, fmt.Errorf("send sync: %w", err)
	}
	select {
	case resp := <-w.responses:
		return resp, nil
	case <-timer.C:
		return model.Message{}, worded(ErrTimeout, "timeout to get response for message %s", m.Header.ID)
	case <-b.ctx.Done():
		return model.Message{}, fmt.Errorf("send sync %s to %s: %w", m.Header.ID, module, ErrStopped)
	}
}

// SendResp hands resp to whoever waits on its parent ID. It never blocks; a
// response nobody waits for is logged and dropped.
func SendResp(resp model.Message) {
	b := cur()
	b.waitersMu.Lock()
	w, ok := b.waiters[resp.Header.ParentID]
	b.waitersMu.Unlock()
	if !ok {
		klog.Warningf("beehive: dropping response nobody waits for: %s", resp.String())
		return
	}
	select {
	case w.responses <- resp:
	default:
		klog.Warningf("beehive: dropping surplus response: %s", resp.String())
	}
}

// SendToGroup delivers m to every module of group without blocking the
// caller: a full inbox is waited for on a goroutine of its own.
func SendToGroup(group string, m model.Message) {
	b := cur()
	members := b.groupMembers(group)
	if len(members) == 0 {
		klog.Warningf("beehive: dropping message to unknown group %s: %s", group, m.String())
		return
	}
	for _, module := range members {
		in, ok := b.lookup(module)
		if !ok {
			continue
		}
		select {
		case in.messages <- m:
		default:
			go func(module string, in *inbox) {
				if err := b.deliver(module, in, m, nil); err != nil {
					klog.Warningf("beehive: dropping group message: %v", err)
				}
			}(module, in)
		}
	}
}

// SendToGroupSync delivers m to every module of group and waits until each has
// responded with a message whose parent ID is m's ID.
func SendToGroupSync(group string, m model.Message, timeout time.Duration) error {
	b := cur()
	members := b.groupMembers(group)
	if len(members) == 0 {
		return fmt.Errorf("send sync to group %s: %w", group, ErrUnknownGroup)
	}
	timeout = syncTimeout(timeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	markSync(&m)

	w := b.addWaiter(m.Header.ID, len(members))
	defer b.removeWaiter(m.Header.ID)
	for _, module := range members {
		in, ok := b.lookup(module)
		if !ok {
			return fmt.Errorf("send sync to group %s: %s: %w", group, module, ErrUnknownModule)
		}
		if err := b.deliver(module, in, m, timer.C); err != nil {
			return fmt.Errorf("send sync to group %s: %w", group, err)
		}
	}
	for got := 0; got < len(members); got++ {
		select {
		// The waiter is keyed by m's ID, so a response to any other message
		// never counts here: it is dropped by SendResp and the call runs
		// into its deadline.
		case <-w.responses:
		case <-timer.C:
			return fmt.Errorf("send sync to group %s: %d of %d modules responded within %v: %w",
				group, got, len(members), timeout, ErrTimeout)
		case <-b.ctx.Done():
			return fmt.Errorf("send sync to group %s: %w", group, ErrStopped)
		}
	}
	return nil
}
