// Package servicestore is the node's own index of the cluster's Services
// and EndpointSlices: what the Windows kernelspace proxier and the node's
// DNS responder answer from. It is fed in process from metamanager's
// database and its watch hook (internal/modules), holds typed objects in
// memory up to a bounded number, and serves them to informers through a
// ListerWatcher that replays its recent changes by resource version, the
// way an API server's watch cache does: no TCP port, no metaServer.
package servicestore

import (
	"fmt"
	"sort"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Limits bound what the store holds, so that a cluster with more Services
// than an edge node can afford costs the node a refusal, not its memory.
type Limits struct {
	// Services and EndpointSlices are the most objects of each kind
	// held; an object past the limit is refused (and counted).
	Services       int
	EndpointSlices int
	// History is how many recent changes a watch can resume from; a
	// watch from an older resource version is told to list again.
	History int
}

// DefaultLimits hold a large edge cluster: 5,000 Services and 20,000
// EndpointSlices (an EndpointSlice holds at most 100 endpoints by
// default), a few tens of MiB of typed objects at most.
var DefaultLimits = Limits{Services: 5000, EndpointSlices: 20000, History: 2048}

// Kind is what a store object is.
type Kind int

const (
	KindService Kind = iota
	KindEndpointSlice
)

func (k Kind) String() string {
	if k == KindService {
		return "Service"
	}
	return "EndpointSlice"
}

// Key names an object: namespace and name.
type Key struct{ Namespace, Name string }

func (k Key) String() string { return k.Namespace + "/" + k.Name }

// event is one change the store made, at revision rev.
type event struct {
	rev  uint64
	kind Kind
	typ  watch.EventType
	// obj is the object after the change (for a deletion: as it was);
	// old is the object before an update, nil otherwise.
	obj, old runtime.Object
}

// Store is the index. The zero value is not usable: call New.
type Store struct {
	limits Limits

	mu       sync.RWMutex
	rev      uint64
	services map[Key]*v1.Service
	slices   map[Key]*discoveryv1.EndpointSlice
	// byService indexes the EndpointSlices of a Service (the label
	// kubernetes.io/service-name) by the slice's name.
	byService map[Key]map[string]*discoveryv1.EndpointSlice
	history   []event // oldest first, at most limits.History
	watchers  map[*watcher]struct{}
	refused   map[Kind]int
}

// New returns an empty store bounded by l (zero fields take DefaultLimits').
func New(l Limits) *Store {
	if l.Services <= 0 {
		l.Services = DefaultLimits.Services
	}
	if l.EndpointSlices <= 0 {
		l.EndpointSlices = DefaultLimits.EndpointSlices
	}
	if l.History <= 0 {
		l.History = DefaultLimits.History
	}
	return &Store{
		limits:    l,
		services:  map[Key]*v1.Service{},
		slices:    map[Key]*discoveryv1.EndpointSlice{},
		byService: map[Key]map[string]*discoveryv1.EndpointSlice{},
		watchers:  map[*watcher]struct{}{},
		refused:   map[Kind]int{},
	}
}

// LimitError is returned when an object is refused because the store is
// full.
type LimitError struct {
	Kind  Kind
	Key   Key
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s %s not kept: the node already holds %d %ss, its limit", e.Kind, e.Key, e.Limit, e.Kind)
}

// Apply records one change: typ is watch.Added, watch.Modified or
// watch.Deleted, obj a *v1.Service or *discoveryv1.EndpointSlice (kept as
// given: the caller passes an object it no longer changes). An Added or
// Modified object the store does not hold yet is added; a Deleted one it
// does not hold is ignored.
func (s *Store) Apply(typ watch.EventType, obj runtime.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(typ, obj)
}

func (s *Store) applyLocked(typ watch.EventType, obj runtime.Object) error {
	switch o := obj.(type) {
	case *v1.Service:
		k := Key{o.Namespace, o.Name}
		old, had := s.services[k]
		switch typ {
		case watch.Deleted:
			if !had {
				return nil
			}
			delete(s.services, k)
			s.record(KindService, watch.Deleted, old, nil)
		case watch.Added, watch.Modified:
			if !had && len(s.services) >= s.limits.Services {
				s.refused[KindService]++
				return &LimitError{Kind: KindService, Key: k, Limit: s.limits.Services}
			}
			if had && !newer(o.ResourceVersion, old.ResourceVersion) {
				return nil // the same object again (a resend after a reconnection), or an older one
			}
			s.services[k] = o
			if had {
				s.record(KindService, watch.Modified, o, old)
			} else {
				s.record(KindService, watch.Added, o, nil)
			}
		default:
			return fmt.Errorf("event %q of %s %s: not a change the store records", typ, KindService, k)
		}
	case *discoveryv1.EndpointSlice:
		k := Key{o.Namespace, o.Name}
		old, had := s.slices[k]
		switch typ {
		case watch.Deleted:
			if !had {
				return nil
			}
			delete(s.slices, k)
			s.unindex(old)
			s.record(KindEndpointSlice, watch.Deleted, old, nil)
		case watch.Added, watch.Modified:
			if !had && len(s.slices) >= s.limits.EndpointSlices {
				s.refused[KindEndpointSlice]++
				return &LimitError{Kind: KindEndpointSlice, Key: k, Limit: s.limits.EndpointSlices}
			}
			if had && !newer(o.ResourceVersion, old.ResourceVersion) {
				return nil
			}
			if had {
				s.unindex(old)
			}
			s.slices[k] = o
			s.index(o)
			if had {
				s.record(KindEndpointSlice, watch.Modified, o, old)
			} else {
				s.record(KindEndpointSlice, watch.Added, o, nil)
			}
		default:
			return fmt.Errorf("event %q of %s %s: not a change the store records", typ, KindEndpointSlice, k)
		}
	default:
		return fmt.Errorf("the store holds Services and EndpointSlices, not %T", obj)
	}
	return nil
}

func serviceOf(e *discoveryv1.EndpointSlice) (Key, bool) {
	name := e.Labels[discoveryv1.LabelServiceName]
	return Key{e.Namespace, name}, name != ""
}

func (s *Store) index(e *discoveryv1.EndpointSlice) {
	svc, ok := serviceOf(e)
	if !ok {
		return
	}
	m := s.byService[svc]
	if m == nil {
		m = map[string]*discoveryv1.EndpointSlice{}
		s.byService[svc] = m
	}
	m[e.Name] = e
}

func (s *Store) unindex(e *discoveryv1.EndpointSlice) {
	svc, ok := serviceOf(e)
	if !ok {
		return
	}
	if m := s.byService[svc]; m != nil {
		delete(m, e.Name)
		if len(m) == 0 {
			delete(s.byService, svc)
		}
	}
}

// record appends a change to the history and hands it to the watchers.
func (s *Store) record(kind Kind, typ watch.EventType, obj, old runtime.Object) {
	s.rev++
	e := event{rev: s.rev, kind: kind, typ: typ, obj: obj, old: old}
	if len(s.history) >= s.limits.History {
		// Drop the oldest quarter at once, so that the copy is rare.
		n := copy(s.history, s.history[len(s.history)/4:])
		s.history = s.history[:n]
	}
	s.history = append(s.history, e)
	for w := range s.watchers {
		if !w.offer(e) {
			// A watcher that does not keep up is ended; its informer
			// watches again from the last revision it saw.
			delete(s.watchers, w)
			w.closeLocked()
		}
	}
}

// Prune deletes the objects of kind that keep does not name, except those
// whose resource version is newer than listRV (changes that reached the
// node after the list was made): what a fresh list from the cloud says no
// longer exists. It returns the keys deleted.
func (s *Store) Prune(kind Kind, keep map[Key]bool, listRV string) []Key {
	limit, limited := parseRV(listRV)
	newer := func(rv string) bool {
		if !limited {
			return false
		}
		n, ok := parseRV(rv)
		return !ok || n > limit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []Key
	switch kind {
	case KindService:
		for k, o := range s.services {
			if !keep[k] && !newer(o.ResourceVersion) {
				gone = append(gone, k)
				_ = s.applyLocked(watch.Deleted, o)
			}
		}
	case KindEndpointSlice:
		for k, o := range s.slices {
			if !keep[k] && !newer(o.ResourceVersion) {
				gone = append(gone, k)
				_ = s.applyLocked(watch.Deleted, o)
			}
		}
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].String() < gone[j].String() })
	return gone
}

// Merge takes the objects of kind from a fresh list of the cloud: each
// one the store does not hold, or holds in an older version, is added or
// updated (with a watch event, as a change from the cloud would be),
// except one the store saw deleted in a version as new as the listed one
// (deleted after the list was made, the deletion already applied). It
// returns the objects taken, for the caller to keep, and the refusals of
// the limits. The list is what the node's store converges on whatever
// the cloud's stream of changes lost (docs/networks.md).
func (s *Store) Merge(kind Kind, objs []runtime.Object) (taken []runtime.Object, errs []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The deletions the history holds, by the last version of each
	// object deleted: a list is merged seconds after the cloud made it,
	// well within the last History changes.
	deleted := map[Key]string{}
	for _, e := range s.history {
		if e.kind == kind && e.typ == watch.Deleted {
			if k, rv, ok := keyOf(e.obj); ok {
				deleted[k] = rv
			}
		}
	}
	for _, obj := range objs {
		k, rv, ok := keyOf(obj)
		if !ok || kindOfObject(obj) != kind {
			errs = append(errs, fmt.Errorf("the cloud's list of %ss holds a %T", kind, obj))
			continue
		}
		if held, ok := s.heldVersion(kind, k); ok && !newer(rv, held) {
			continue
		}
		if gone, ok := deleted[k]; ok && !newer(rv, gone) {
			continue
		}
		if err := s.applyLocked(watch.Modified, obj); err != nil {
			errs = append(errs, err)
			continue
		}
		taken = append(taken, obj)
	}
	return taken, errs
}

// heldVersion is the resource version of the object of kind k, if held.
func (s *Store) heldVersion(kind Kind, k Key) (string, bool) {
	if kind == KindService {
		o, ok := s.services[k]
		if !ok {
			return "", false
		}
		return o.ResourceVersion, true
	}
	o, ok := s.slices[k]
	if !ok {
		return "", false
	}
	return o.ResourceVersion, true
}

func keyOf(obj runtime.Object) (Key, string, bool) {
	switch o := obj.(type) {
	case *v1.Service:
		return Key{o.Namespace, o.Name}, o.ResourceVersion, true
	case *discoveryv1.EndpointSlice:
		return Key{o.Namespace, o.Name}, o.ResourceVersion, true
	}
	return Key{}, "", false
}

func kindOfObject(obj runtime.Object) Kind {
	if _, ok := obj.(*v1.Service); ok {
		return KindService
	}
	return KindEndpointSlice
}

// newer reports whether resource version rv replaces held: the cloud's
// versions are etcd revisions, which only grow for one object; one that
// is not a number (or none) always replaces.
func newer(rv, held string) bool {
	a, okA := parseRV(rv)
	b, okB := parseRV(held)
	if !okA || !okB {
		return rv != held || rv == ""
	}
	return a > b
}

func parseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}

// Service returns the Service namespace/name.
func (s *Store) Service(namespace, name string) (*v1.Service, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, ok := s.services[Key{namespace, name}]
	return o, ok
}

// EndpointSlices returns the EndpointSlices of the Service
// namespace/service, by name.
func (s *Store) EndpointSlices(namespace, service string) []*discoveryv1.EndpointSlice {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.byService[Key{namespace, service}]
	out := make([]*discoveryv1.EndpointSlice, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// HasNamespace reports whether any Service lives in namespace.
func (s *Store) HasNamespace(namespace string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k := range s.services {
		if k.Namespace == namespace {
			return true
		}
	}
	return false
}

// Stats are the store's counts, for logs and preflight.
type Stats struct {
	Services, EndpointSlices int
	// Refused counts objects turned away by the limits since the start.
	RefusedServices, RefusedEndpointSlices int
	Revision                               uint64
}

// Stats reports what the store holds.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Stats{Services: len(s.services), EndpointSlices: len(s.slices),
		RefusedServices: s.refused[KindService], RefusedEndpointSlices: s.refused[KindEndpointSlice], Revision: s.rev}
}

// Keys returns the keys held of kind, sorted.
func (s *Store) Keys(kind Kind) []Key {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Key
	if kind == KindService {
		for k := range s.services {
			out = append(out, k)
		}
	} else {
		for k := range s.slices {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
