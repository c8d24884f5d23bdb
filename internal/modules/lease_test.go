package modules

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"
)

// cloudLeases is the node Lease as the kubelet reaches it through edged
// and metamanager: the API server's optimistic concurrency (an update from
// an older resourceVersion is a conflict), and while the hub is down every
// write fails and a read answers the node database's copy, as metamanager
// does.
type cloudLeases struct {
	// Delete and the rest: not used.
	coordinationclient.LeaseInterface

	mu        sync.Mutex
	connected bool
	lease     *coordinationv1.Lease // in the cloud
	local     *coordinationv1.Lease // in the node's database
	rv        int
	updates   []time.Time // RenewTime of each write the cloud accepted
}

var errHubDown = errors.New("failed to process remote: node is not connected")

func (c *cloudLeases) Get(_ context.Context, name string, _ metav1.GetOptions) (*coordinationv1.Lease, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lease
	if !c.connected {
		l = c.local
	}
	if l == nil || l.Name != name {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, name)
	}
	return l.DeepCopy(), nil
}

func (c *cloudLeases) Update(_ context.Context, l *coordinationv1.Lease, _ metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.connected {
		return nil, errHubDown
	}
	if l.ResourceVersion != c.lease.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, l.Name,
			errors.New("the object has been modified"))
	}
	c.rv++
	c.lease = l.DeepCopy()
	c.lease.ResourceVersion = strconv.Itoa(c.rv)
	c.local = c.lease.DeepCopy() // metamanager stores the answer
	c.updates = append(c.updates, l.Spec.RenewTime.Time)
	return c.lease.DeepCopy(), nil
}

func (c *cloudLeases) Create(_ context.Context, l *coordinationv1.Lease, _ metav1.CreateOptions) (*coordinationv1.Lease, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.connected {
		return nil, errHubDown
	}
	if c.lease != nil {
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, l.Name)
	}
	c.rv++
	c.lease = l.DeepCopy()
	c.lease.ResourceVersion = strconv.Itoa(c.rv)
	c.local = c.lease.DeepCopy()
	c.updates = append(c.updates, l.Spec.RenewTime.Time)
	return c.lease.DeepCopy(), nil
}

func (c *cloudLeases) setConnected(up bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connected = up
}

func (c *cloudLeases) accepted() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.updates...)
}

// leaseFixture is a keeper in a heartbeat client whose node Leases are
// cloud, with a clock moved by hand.
type leaseFixture struct {
	t      *testing.T
	cloud  *cloudLeases
	keeper *leaseKeeper
	now    time.Time
	// kubelet is the Lease client the kubelet's lease controller uses.
	kubelet coordinationclient.LeaseInterface
	nodes   *fake.Clientset
}

type fixtureClient struct {
	*fake.Clientset
	cloud *cloudLeases
}

func (c fixtureClient) CoordinationV1() coordinationclient.CoordinationV1Interface {
	return fixtureGroup{CoordinationV1Interface: c.Clientset.CoordinationV1(), cloud: c.cloud}
}

type fixtureGroup struct {
	coordinationclient.CoordinationV1Interface
	cloud *cloudLeases
}

func (g fixtureGroup) Leases(ns string) coordinationclient.LeaseInterface {
	if ns != v1.NamespaceNodeLease {
		return g.CoordinationV1Interface.Leases(ns)
	}
	return g.cloud
}

func newLeaseFixture(t *testing.T) *leaseFixture {
	f := &leaseFixture{t: t, now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	f.cloud = &cloudLeases{connected: true, rv: 7}
	f.cloud.lease = &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "win-1", Namespace: v1.NamespaceNodeLease, ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("win-1"), LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime: &metav1.MicroTime{Time: f.now.Add(-time.Minute)},
		},
	}
	f.cloud.local = f.cloud.lease.DeepCopy()
	f.keeper = newLeaseKeeper("win-1", 40)
	f.keeper.now = func() time.Time { return f.now }
	// The Node as the node's database has it, for the Lease's owner.
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1", UID: "u-1"}}
	f.nodes = fake.NewSimpleClientset(node)
	client := f.keeper.wrap(fixtureClient{Clientset: f.nodes, cloud: f.cloud})
	f.kubelet = client.CoordinationV1().Leases(v1.NamespaceNodeLease)
	if _, kept := client.CoordinationV1().Leases("kube-system").(nodeLeases); kept {
		t.Fatal("a Lease outside kube-node-lease went through the keeper")
	}
	return f
}

// renewAsKubelet does what the kubelet's lease controller does every
// renewal interval: update from the Lease it holds, and after a failure
// read it again and update from that.
func (f *leaseFixture) renewAsKubelet(held *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	f.t.Helper()
	ctx := context.Background()
	if held != nil {
		l := held.DeepCopy()
		l.Spec.RenewTime = &metav1.MicroTime{Time: f.now}
		got, err := f.kubelet.Update(ctx, l, metav1.UpdateOptions{})
		if err == nil {
			return got, nil
		}
	}
	got, err := f.kubelet.Get(ctx, "win-1", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	l := got.DeepCopy()
	l.Spec.RenewTime = &metav1.MicroTime{Time: f.now}
	if got, err = f.kubelet.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return got, err
	}
	return got, nil
}

// An outage: the kubelet's renewals fail while the hub is down. When the
// hub connects the keeper renews the Lease at once, and the kubelet's next
// update, from the version it held, goes through without a conflict: one
// extra write a reconnection, none lost.
func TestLeaseRenewedWhenTheHubConnects(t *testing.T) {
	f := newLeaseFixture(t)
	held, err := f.renewAsKubelet(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.cloud.setConnected(false)
	f.now = f.now.Add(10 * time.Second)
	if _, err := f.renewAsKubelet(held); err == nil {
		t.Fatal("a renewal went through with the hub down")
	}
	f.now = f.now.Add(5 * time.Second)
	f.cloud.setConnected(true)
	f.keeper.renew(context.Background())
	got := f.cloud.accepted()
	if len(got) != 2 || !got[1].Equal(f.now) {
		t.Fatalf("the cloud accepted renewals at %v; want the kubelet's and one at the connection, %v", got, f.now)
	}
	// The kubelet's next renewal, from the version it holds.
	f.now = f.now.Add(5 * time.Second)
	l := held.DeepCopy()
	l.Spec.RenewTime = &metav1.MicroTime{Time: f.now}
	if held, err = f.kubelet.Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the kubelet's update after the keeper's renewal: %v", err)
	}
	if got := f.cloud.accepted(); len(got) != 3 || !got[2].Equal(f.now) {
		t.Fatalf("the cloud accepted renewals at %v; want the kubelet's at %v last", got, f.now)
	}
	// And the one after that: nothing is rewritten any more.
	f.now = f.now.Add(10 * time.Second)
	if _, err := f.renewAsKubelet(held); err != nil || len(f.cloud.accepted()) != 4 {
		t.Fatalf("the kubelet's second update: %v, %d accepted", err, len(f.cloud.accepted()))
	}
}

// At a start the kubelet may read its Lease before the hub connects: the
// node's database answers, with a version older than the cloud's (the
// database missed the last renewal). The keeper's renewal conflicts, reads
// the cloud's Lease and renews that; the kubelet's next update goes
// through.
func TestLeaseRenewedAtStartFromAStaleCopy(t *testing.T) {
	f := newLeaseFixture(t)
	f.cloud.local.ResourceVersion = "6"
	f.cloud.setConnected(false)
	held, err := f.kubelet.Get(context.Background(), "win-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.renewAsKubelet(held); err == nil {
		t.Fatal("a renewal went through with the hub down")
	}
	f.now = f.now.Add(time.Second)
	f.cloud.setConnected(true)
	f.keeper.renew(context.Background())
	if got := f.cloud.accepted(); len(got) != 1 || !got[0].Equal(f.now) {
		t.Fatalf("the cloud accepted renewals at %v; want one at the connection, %v", got, f.now)
	}
	f.now = f.now.Add(10 * time.Second)
	l := held.DeepCopy()
	l.Spec.RenewTime = &metav1.MicroTime{Time: f.now}
	_, err = f.kubelet.Update(context.Background(), l, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		// The kubelet held "6", which the keeper did not renew from; its
		// update conflicts and it reads the Lease again, as without the
		// keeper.
		t.Fatalf("the kubelet's update from the stale copy: %v, want a conflict", err)
	}
	if _, err := f.renewAsKubelet(nil); err != nil {
		t.Fatal(err)
	}
}

// Before the kubelet has asked for its Lease, and once it has not tried
// for longer than the Lease lasts, a connection renews nothing: the keeper
// vouches only for a kubelet that is renewing.
func TestLeaseNotRenewedForAKubeletThatIsNotRenewing(t *testing.T) {
	f := newLeaseFixture(t)
	f.keeper.renew(context.Background())
	if got := f.cloud.accepted(); len(got) != 0 {
		t.Fatalf("renewed before the kubelet started: %v", got)
	}
	if _, err := f.renewAsKubelet(nil); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(41 * time.Second)
	f.keeper.renew(context.Background())
	if got := f.cloud.accepted(); len(got) != 1 {
		t.Fatalf("renewed for a kubelet silent for 41 s of a 40 s lease: %v", got)
	}
	f.now = f.now.Add(-2 * time.Second)
	f.keeper.renew(context.Background())
	if got := f.cloud.accepted(); len(got) != 2 {
		t.Fatalf("did not renew for a kubelet that tried 39 s ago: %v", got)
	}
}

// With no Lease held (the kubelet's first read failed while the hub was
// down and the database had none) the keeper reads the cloud's and
// renews it.
func TestLeaseReadFromTheCloudWhenNoneIsHeld(t *testing.T) {
	f := newLeaseFixture(t)
	f.cloud.local = nil
	f.cloud.setConnected(false)
	if _, err := f.kubelet.Get(context.Background(), "win-1", metav1.GetOptions{}); err == nil {
		t.Fatal("the database answered a Lease it does not have")
	}
	f.cloud.setConnected(true)
	f.keeper.renew(context.Background())
	if got := f.cloud.accepted(); len(got) != 1 || !got[0].Equal(f.now) {
		t.Fatalf("the cloud accepted %v; want one renewal at the connection", got)
	}
}

// A node whose hub went down before the kubelet created its Lease: the
// kubelet's first try comes before the node is in its database (it needs
// the Node for the Lease's owner), its next a renewal interval later, and
// while the hub is down its reads fail and it tries again only up to 7 s
// later. At the connection the keeper creates the Lease as the kubelet
// would, and the kubelet then reads and renews it. Without the Node in
// the database it creates nothing, as the kubelet does not.
func TestLeaseCreatedWhenTheCloudHasNone(t *testing.T) {
	f := newLeaseFixture(t)
	f.cloud.lease, f.cloud.local = nil, nil
	f.cloud.setConnected(false)
	ctx := context.Background()
	if _, err := f.kubelet.Get(ctx, "win-1", metav1.GetOptions{}); err == nil {
		t.Fatal("the database answered a Lease it does not have")
	}
	f.now = f.now.Add(3 * time.Second)
	f.cloud.setConnected(true)
	f.keeper.renew(ctx)
	got, err := f.cloud.Get(ctx, "win-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after the connection the cloud has no Lease: %v", err)
	}
	if !got.Spec.RenewTime.Time.Equal(f.now) || *got.Spec.HolderIdentity != "win-1" || *got.Spec.LeaseDurationSeconds != 40 ||
		len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != "u-1" || got.OwnerReferences[0].Kind != "Node" {
		t.Errorf("the keeper created %+v; want the node's Lease for 40 s, owned by its Node, renewed at the connection %v", got, f.now)
	}
	// The kubelet's next try reads it and renews it.
	f.now = f.now.Add(4 * time.Second)
	if _, err := f.renewAsKubelet(nil); err != nil || len(f.cloud.accepted()) != 2 {
		t.Fatalf("the kubelet's renewal after the keeper created the Lease: %v, %d writes", err, len(f.cloud.accepted()))
	}

	f = newLeaseFixture(t)
	f.cloud.lease, f.cloud.local = nil, nil
	if err := f.nodes.CoreV1().Nodes().Delete(ctx, "win-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.kubelet.Get(ctx, "win-1", metav1.GetOptions{})
	f.keeper.renew(ctx)
	if got := f.cloud.accepted(); len(got) != 0 {
		t.Fatalf("the keeper created a Lease without the Node to own it: %v", got)
	}
}
