package modules

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/klog/v2"
	kubeletutil "k8s.io/kubernetes/pkg/kubelet/util"
)

// leaseKeeper renews the node's Lease the moment edgeHub connects to
// cloudcore. The Lease is the node's heartbeat: the cloud (and the e2e)
// counts a node as alive again once it is renewed. The kubelet renews it
// every 10 s (a quarter of nodeLeaseDurationSeconds), and a renewal while
// the hub is down fails at once (metamanager refuses it) and is tried
// again only 10 s later; so after an outage, and after a start in which
// the kubelet tried before the hub connected, the node stayed unrenewed
// for up to 10 s after the connection was back.
//
// The keeper sits in the kubelet's heartbeat client, where it sees the
// Lease as the kubelet last received it; a Lease the cloud does not have
// yet it creates as the kubelet would. It renews only on behalf of a
// kubelet that has tried to renew within the Lease's duration: a kubelet
// that stopped is not kept alive by edgecore. A renewal changes the
// Lease's resourceVersion under the kubelet; the kubelet's next update,
// made from the version the keeper renewed, is sent with the keeper's
// version instead, as the kubelet would after reading the Lease again,
// so the cloud sees one extra Lease write per reconnection and the kubelet
// no conflict.
type leaseKeeper struct {
	node string
	// duration is the kubelet's nodeLeaseDurationSeconds.
	duration int32
	now      func() time.Time
	// client is the kubelet's heartbeat client, unwrapped.
	client kubernetes.Interface

	// renewing serialises renewals: two connections in quick succession
	// do not renew twice at once.
	renewing sync.Mutex

	mu sync.Mutex
	// leases is the kubelet's Lease client for kube-node-lease, through
	// edged to the cloud; nil until the kubelet first uses it.
	leases coordinationclient.LeaseInterface
	// held is the node's Lease as the kubelet last received it.
	held *coordinationv1.Lease
	// renewed is the keeper's last renewal since then, made from held
	// (or from an earlier renewal made from it), if any.
	renewed *coordinationv1.Lease
	// tried is when the kubelet last asked for its Lease.
	tried time.Time
}

func newLeaseKeeper(node string, durationSeconds int32) *leaseKeeper {
	return &leaseKeeper{node: node, duration: durationSeconds, now: time.Now}
}

// wrap returns the kubelet's heartbeat client with the node's Lease kept.
func (k *leaseKeeper) wrap(c kubernetes.Interface) kubernetes.Interface {
	k.mu.Lock()
	k.client = c
	k.mu.Unlock()
	return leaseClient{Interface: c, keeper: k}
}

// connected is edgehub.ConnectionChanged (patches/0012).
func (k *leaseKeeper) connected(up bool) {
	if up {
		go k.renew(context.Background())
	}
}

// renew renews the node's Lease if the kubelet is renewing it; see
// leaseKeeper.
func (k *leaseKeeper) renew(ctx context.Context) {
	k.renewing.Lock()
	defer k.renewing.Unlock()
	k.mu.Lock()
	leases, held, base, tried, client := k.leases, k.held, k.held, k.tried, k.client
	if k.renewed != nil {
		base = k.renewed
	}
	k.mu.Unlock()
	if leases == nil || tried.IsZero() {
		// The kubelet has not started renewing; its first renewal
		// comes with its start.
		return
	}
	duration := time.Duration(k.duration) * time.Second
	if base != nil && base.Spec.LeaseDurationSeconds != nil {
		duration = time.Duration(*base.Spec.LeaseDurationSeconds) * time.Second
	}
	if k.now().Sub(tried) > duration {
		klog.InfoS("Not renewing the node lease on connection: the kubelet has not tried to for longer than the lease lasts", "node", k.node, "lastTry", tried)
		return
	}
	var err error
	if base == nil {
		// The kubelet has not received its Lease yet (its first read
		// came while the hub was down and the node's database has
		// none): read it from the cloud.
		base, err = leases.Get(ctx, k.node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// Nor has the cloud: the kubelet's first try came before
			// the node was in its database (it needs the node for the
			// Lease's owner), and while the hub is down its reads fail
			// and it tries again only up to 7 s later (its backoff).
			k.create(ctx, client, leases)
			return
		}
		if err != nil {
			klog.InfoS("Not renewing the node lease on connection", "node", k.node, "err", err)
			return
		}
	}
	got, err := k.update(ctx, leases, base)
	chained := err == nil && held != nil
	if apierrors.IsConflict(err) {
		// The version the kubelet holds is older than the cloud's (the
		// node's database gave it while the hub was down), or the
		// kubelet renewed in the meantime: read it again, once.
		if base, err = leases.Get(ctx, k.node, metav1.GetOptions{}); err == nil {
			got, err = k.update(ctx, leases, base)
		}
	}
	if err != nil {
		klog.InfoS("Renewing the node lease on connection failed; the kubelet renews it on its own", "node", k.node, "err", err)
		return
	}
	k.mu.Lock()
	if chained && k.held != nil && k.held.ResourceVersion == held.ResourceVersion {
		k.renewed = got
	} else {
		// Renewed from a version the kubelet never held: its next
		// update conflicts and it reads the Lease again, as it would
		// without the keeper.
		k.renewed = nil
	}
	k.mu.Unlock()
	klog.InfoS("Renewed the node lease on connection", "node", k.node)
}

// create makes the node's Lease as the kubelet's lease controller does:
// held by the node, for the configured duration, owned by the Node (by
// the kubelet's own owner function, which reads the Node from the node's
// database).
func (k *leaseKeeper) create(ctx context.Context, client kubernetes.Interface, leases coordinationclient.LeaseInterface) {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: k.node, Namespace: v1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &k.node,
			LeaseDurationSeconds: &k.duration,
			RenewTime:            &metav1.MicroTime{Time: k.now()},
		},
	}
	err := kubeletutil.SetNodeOwnerFunc(client, k.node)(l)
	if err == nil {
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
	}
	if err != nil {
		// The node is not in the database yet, or the kubelet was
		// quicker.
		klog.InfoS("Creating the node lease on connection failed; the kubelet creates it on its own", "node", k.node, "err", err)
		return
	}
	klog.InfoS("Created the node lease on connection", "node", k.node)
}

func (k *leaseKeeper) update(ctx context.Context, leases coordinationclient.LeaseInterface, base *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	l := base.DeepCopy()
	l.Spec.RenewTime = &metav1.MicroTime{Time: k.now()}
	return leases.Update(ctx, l, metav1.UpdateOptions{})
}

// kubeletAsks records a request of the kubelet for the node's Lease and
// returns the Lease to send: an update made from the version the keeper
// renewed goes with the keeper's version.
func (k *leaseKeeper) kubeletAsks(leases coordinationclient.LeaseInterface, l *coordinationv1.Lease) *coordinationv1.Lease {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.leases = leases
	k.tried = k.now()
	if l == nil || k.renewed == nil || k.held == nil || l.ResourceVersion != k.held.ResourceVersion {
		return l
	}
	l = l.DeepCopy()
	l.ResourceVersion = k.renewed.ResourceVersion
	return l
}

// kubeletReceived records the Lease the kubelet got back.
func (k *leaseKeeper) kubeletReceived(l *coordinationv1.Lease, err error) {
	if err != nil || l == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held = l.DeepCopy()
	k.renewed = nil
}

// leaseClient is a clientset whose node Lease goes through the keeper;
// everything else passes through.
type leaseClient struct {
	kubernetes.Interface
	keeper *leaseKeeper
}

func (c leaseClient) CoordinationV1() coordinationclient.CoordinationV1Interface {
	return leaseGroup{CoordinationV1Interface: c.Interface.CoordinationV1(), keeper: c.keeper}
}

type leaseGroup struct {
	coordinationclient.CoordinationV1Interface
	keeper *leaseKeeper
}

func (g leaseGroup) Leases(namespace string) coordinationclient.LeaseInterface {
	leases := g.CoordinationV1Interface.Leases(namespace)
	if namespace != v1.NamespaceNodeLease {
		return leases
	}
	return nodeLeases{LeaseInterface: leases, keeper: g.keeper}
}

type nodeLeases struct {
	coordinationclient.LeaseInterface
	keeper *leaseKeeper
}

func (n nodeLeases) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	if name != n.keeper.node {
		return n.LeaseInterface.Get(ctx, name, opts)
	}
	n.keeper.kubeletAsks(n.LeaseInterface, nil)
	l, err := n.LeaseInterface.Get(ctx, name, opts)
	n.keeper.kubeletReceived(l, err)
	return l, err
}

func (n nodeLeases) Create(ctx context.Context, lease *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error) {
	if lease == nil || lease.Name != n.keeper.node {
		return n.LeaseInterface.Create(ctx, lease, opts)
	}
	n.keeper.kubeletAsks(n.LeaseInterface, nil)
	l, err := n.LeaseInterface.Create(ctx, lease, opts)
	n.keeper.kubeletReceived(l, err)
	return l, err
}

func (n nodeLeases) Update(ctx context.Context, lease *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if lease == nil || lease.Name != n.keeper.node {
		return n.LeaseInterface.Update(ctx, lease, opts)
	}
	l, err := n.LeaseInterface.Update(ctx, n.keeper.kubeletAsks(n.LeaseInterface, lease), opts)
	n.keeper.kubeletReceived(l, err)
	return l, err
}
