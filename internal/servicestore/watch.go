package servicestore

import (
	"fmt"
	"sort"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// watchBuffer is how many changes a watcher may lag behind before it is
// ended (its informer then resumes from the last revision it saw).
const watchBuffer = 512

// Transform turns an object of the store into what a ListerWatcher's
// reader gets; it returns a copy when it changes anything (the store's
// objects are shared) and nil to leave the object out.
type Transform func(runtime.Object) runtime.Object

// ListerWatcher serves kind to an informer (cache.NewSharedIndexInformer):
// the objects whose labels sel matches, each passed through tf (nil: as
// they are). Nothing leaves the process.
func (s *Store) ListerWatcher(kind Kind, sel labels.Selector, tf Transform) cache.ListerWatcher {
	if sel == nil {
		sel = labels.Everything()
	}
	return &listerWatcher{s: s, kind: kind, sel: sel, tf: tf}
}

type listerWatcher struct {
	s    *Store
	kind Kind
	sel  labels.Selector
	tf   Transform
}

// view is obj as the reader sees it, or nil when it is left out.
func (l *listerWatcher) view(obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	m, err := metaLabels(obj)
	if err != nil || !l.sel.Matches(labels.Set(m)) {
		return nil
	}
	if l.tf != nil {
		return l.tf(obj)
	}
	return obj
}

func metaLabels(obj runtime.Object) (map[string]string, error) {
	switch o := obj.(type) {
	case *v1.Service:
		return o.Labels, nil
	case *discoveryv1.EndpointSlice:
		return o.Labels, nil
	}
	return nil, fmt.Errorf("unexpected %T", obj)
}

// List returns every object of the kind the reader sees, at the store's
// current revision.
func (l *listerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	l.s.mu.RLock()
	defer l.s.mu.RUnlock()
	rv := strconv.FormatUint(l.s.rev, 10)
	switch l.kind {
	case KindService:
		list := &v1.ServiceList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
		for _, k := range sortedKeys(l.s.services) {
			if o := l.view(l.s.services[k]); o != nil {
				list.Items = append(list.Items, *o.(*v1.Service))
			}
		}
		return list, nil
	default:
		list := &discoveryv1.EndpointSliceList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
		for _, k := range sortedKeys(l.s.slices) {
			if o := l.view(l.s.slices[k]); o != nil {
				list.Items = append(list.Items, *o.(*discoveryv1.EndpointSlice))
			}
		}
		return list, nil
	}
}

func sortedKeys[T any](m map[Key]T) []Key {
	keys := make([]Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

// Watch streams the changes after opts.ResourceVersion ("" or "0": from
// now). A revision older than the history holds is answered with the API
// server's "expired" error, after which an informer lists again.
func (l *listerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	from := l.s.rev
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		n, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("resource version %q is not a number", opts.ResourceVersion))
		}
		if n > l.s.rev {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("resource version %d is ahead of the store's %d", n, l.s.rev))
		}
		from = n
	}
	w := &watcher{lw: l, ch: make(chan watch.Event, watchBuffer)}
	// The changes after from that the history still holds, then the
	// live ones.
	if from < l.s.rev {
		oldest := l.s.rev + 1
		if len(l.s.history) > 0 {
			oldest = l.s.history[0].rev
		}
		if from+1 < oldest {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (oldest kept %d)", from, oldest))
		}
		for _, e := range l.s.history {
			if e.rev > from && !w.offer(e) {
				return nil, apierrors.NewResourceExpired(fmt.Sprintf("too many changes since resource version %d", from))
			}
		}
	}
	l.s.watchers[w] = struct{}{}
	return w, nil
}

// watcher is one Watch: a buffered channel the store writes to without
// waiting.
type watcher struct {
	lw     *listerWatcher
	ch     chan watch.Event
	once   sync.Once
	closed bool // under the store's lock
}

// offer queues e as the reader sees it; false when the buffer is full.
// Called with the store's lock held.
func (w *watcher) offer(e event) bool {
	if e.kind != w.lw.kind || w.closed {
		return true
	}
	now, before := w.lw.view(e.obj), w.lw.view(e.old)
	var out watch.Event
	switch {
	case e.typ == watch.Deleted && now != nil:
		out = watch.Event{Type: watch.Deleted, Object: now}
	case e.typ == watch.Deleted:
		return true
	case now != nil && before == nil:
		// Added, or an update that brought it into view.
		out = watch.Event{Type: watch.Added, Object: now}
	case now != nil:
		out = watch.Event{Type: watch.Modified, Object: now}
	case before != nil:
		// An update that took it out of view.
		out = watch.Event{Type: watch.Deleted, Object: before}
	default:
		return true
	}
	// The informer keeps the resource version of the last event it saw
	// and resumes from it: each event carries the store's revision.
	out.Object = withRevision(out.Object, e.rev)
	select {
	case w.ch <- out:
		return true
	default:
		return false
	}
}

// withRevision returns obj with the store's revision as its resource
// version, on a shallow copy (the store's objects are shared).
func withRevision(obj runtime.Object, rev uint64) runtime.Object {
	rv := strconv.FormatUint(rev, 10)
	switch o := obj.(type) {
	case *v1.Service:
		c := *o
		c.ObjectMeta.ResourceVersion = rv
		return &c
	case *discoveryv1.EndpointSlice:
		c := *o
		c.ObjectMeta.ResourceVersion = rv
		return &c
	}
	return obj
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.ch }

// Stop ends the watch; the reader's channel closes.
func (w *watcher) Stop() {
	s := w.lw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watchers, w)
	w.closeLocked()
}

func (w *watcher) closeLocked() {
	w.once.Do(func() {
		w.closed = true
		close(w.ch)
	})
}
