package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

// Held upgrades. A pod that carries the annotation HoldUpgradeAnnotation
// and has not started yet (Pending) is not started by the node's edged
// when the cloud updates it: edged keeps the update and marks the pod
// with the condition HeldUpgrade until an operator on the node releases
// it. On Linux `keadm ctl unhold-upgrade` asks the node's metaserver, a
// loopback HTTP port, to release it. A Windows node opens no such port:
// `edgecore.exe upgrade unhold` checks the pods against the node's own
// database and writes them to a file of the upgrade's state directory
// (Paths.Unhold), which only SYSTEM and Administrators may write; the
// running edgecore takes the file and hands each pod to edged as
// upstream's metaserver does. Releasing thus takes what replacing the
// node's binary takes: an administrator on the host.

// HoldUpgradeAnnotation is the pod annotation that asks the node to hold
// the pod's updates, with the value "true".
const HoldUpgradeAnnotation = "edge.kubeedge.io/hold-upgrade"

// Held reports whether the node's edged holds the updates of p as the
// cloud last sent it: upstream edged's rule (v1.23 edged.holdUpgrade).
func Held(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Annotations[HoldUpgradeAnnotation] == "true" && p.Status.Phase == corev1.PodPending
}

// unholdRequest is what `edgecore.exe upgrade unhold` writes.
type unholdRequest struct {
	// Pods are "<namespace>/<name>".
	Pods []string  `json:"pods"`
	At   time.Time `json:"at"`
}

// RequestUnhold asks the running edgecore to release pods
// ("<namespace>/<name>"), added to those an earlier request names that
// edgecore has not taken yet.
func RequestUnhold(e Env, pods []string) error {
	req, err := loadUnhold(e)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range req.Pods {
		seen[p] = true
	}
	for _, p := range pods {
		if !seen[p] {
			req.Pods = append(req.Pods, p)
			seen[p] = true
		}
	}
	req.At = e.Clock.Now().UTC()
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if err := e.FS.MkdirAll(e.Paths.StateDir); err != nil {
		return fmt.Errorf("create %s: %w%s", e.Paths.StateDir, err, elevateHint(err))
	}
	if err := e.FS.WriteFile(e.Paths.Unhold, data); err != nil {
		return fmt.Errorf("write the request %s: %w%s", e.Paths.Unhold, err, elevateHint(err))
	}
	return nil
}

func loadUnhold(e Env) (unholdRequest, error) {
	data, err := e.FS.ReadFile(e.Paths.Unhold)
	if errors.Is(err, fs.ErrNotExist) {
		return unholdRequest{}, nil
	}
	if err != nil {
		return unholdRequest{}, fmt.Errorf("read %s: %w%s", e.Paths.Unhold, err, elevateHint(err))
	}
	var req unholdRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return unholdRequest{}, fmt.Errorf("%s is not a request to release held pods (%v): delete it and run `edgecore.exe upgrade unhold` again", e.Paths.Unhold, err)
	}
	return req, nil
}

// TakeUnhold returns the pods of the pending request and removes it, so a
// pod is released once; nil when there is none.
func TakeUnhold(e Env) ([]string, error) {
	req, err := loadUnhold(e)
	if err != nil {
		// A file nobody can read as a request is removed, or it would be
		// reported every second.
		if rmErr := e.FS.Remove(e.Paths.Unhold); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w; removing it failed: %v", err, rmErr)
		}
		return nil, err
	}
	if req.Pods == nil {
		return nil, nil
	}
	if err := e.FS.Remove(e.Paths.Unhold); err != nil {
		return nil, fmt.Errorf("remove %s: %w", e.Paths.Unhold, err)
	}
	return req.Pods, nil
}

// FollowUnholds takes each request to release held pods once ready says
// the node runs its pods (edged holds a pod's update only once it has
// loaded the node's pods) and hands each pod to release. It returns when
// ctx ends.
func FollowUnholds(ctx context.Context, e Env, ready func() bool, release func(namespace, name string), logf func(string, ...any)) {
	for {
		if ready() {
			pods, err := TakeUnhold(e)
			if err != nil {
				logf("Releasing held pods: %v", err)
			}
			for _, p := range pods {
				ns, name, err := splitPodKey(p)
				if err != nil {
					logf("Releasing held pods: %s in %s: %v", p, e.Paths.Unhold, err)
					continue
				}
				logf("Releasing the held updates of pod %s/%s, as an administrator asked with `edgecore.exe upgrade unhold`", ns, name)
				release(ns, name)
			}
		}
		if e.sleep(ctx, poll) {
			return
		}
	}
}

// splitPodKey reads "<namespace>/<name>", checking both as the API server
// would.
func splitPodKey(key string) (namespace, name string, err error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return "", "", fmt.Errorf("not <namespace>/<name>")
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return "", "", fmt.Errorf("namespace %q: %s", ns, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return "", "", fmt.Errorf("pod name %q: %s", name, strings.Join(msgs, "; "))
	}
	return ns, name, nil
}

// UnholdOptions are the inputs of `edgecore.exe upgrade unhold`.
type UnholdOptions struct {
	// Pods are the pods to release, by name in Namespace or as
	// "<namespace>/<name>" (the command's arguments).
	Pods      []string
	Namespace string
	// All releases every pod the node holds.
	All bool
	// Timeout bounds the wait for edgecore to take the request.
	Timeout time.Duration
}

const (
	flagNamespace = "--namespace"
	flagAll       = "--all"
)

// NewUnholdOptions are unhold's defaults: the namespace kubectl uses.
func NewUnholdOptions() *UnholdOptions {
	return &UnholdOptions{Namespace: "default", Timeout: 30 * time.Second}
}

// AddFlags binds unhold's flags to o; the defaults are o's values.
func (o *UnholdOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "Namespace of the pods named without one")
	fs.BoolVar(&o.All, "all", o.All, "Release every pod this node holds (keadm ctl unhold-upgrade node)")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the running edgecore to take the request")
}

// Complete is the options contract's: the command sets Pods from its
// arguments, and unhold's flags need nothing of the host.
func (o *UnholdOptions) Complete(*deps.Dependencies) error { return nil }

// Validate checks unhold's arguments and flags, naming each, its value
// and the fix.
func (o UnholdOptions) Validate() error {
	var errs field.ErrorList
	switch {
	case o.All && len(o.Pods) > 0:
		errs = append(errs, field.Invalid(field.NewPath(flagAll), strings.Join(o.Pods, " "), "give either pod names or --all, not both"))
	case !o.All && len(o.Pods) == 0:
		errs = append(errs, field.Required(field.NewPath("POD"), "name the pods to release (kubectl get pods -A --field-selector spec.nodeName=<node> shows them), or give --all"))
	}
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, field.Invalid(field.NewPath(flagNamespace), o.Namespace, strings.Join(msgs, "; ")+": give the pod's namespace as kubectl shows it"))
	}
	for _, p := range o.Pods {
		if _, _, err := splitPodKey(o.key(p)); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("POD"), p, err.Error()+": give the pod's name, or <namespace>/<name>"))
		}
	}
	if o.Timeout <= 0 {
		errs = append(errs, field.Invalid(field.NewPath(flagTimeout), o.Timeout.String(), "give how long to wait for edgecore to take the request, e.g. 30s"))
	}
	if len(errs) > 0 {
		return &config.InvalidError{What: "upgrade unhold options", Errs: errs}
	}
	return nil
}

// key is pod as "<namespace>/<name>".
func (o UnholdOptions) key(pod string) string {
	if strings.Contains(pod, "/") {
		return pod
	}
	return o.Namespace + "/" + pod
}

// Unhold releases the pods o names, or all the node holds, and waits, at
// most o.Timeout, for the running edgecore to take them, saying on out
// what happens. Every pod is checked against the node's database first,
// with upstream metaserver's rules: a pod the node does not hold is an
// error naming why, and nothing is asked of edgecore then.
func Unhold(ctx context.Context, out io.Writer, e Env, f Facts, o UnholdOptions) error {
	in, err := FindInstalled(e, f, e.Service)
	if err != nil {
		return err
	}
	pods, err := f.Pods(in.DataSource)
	if err != nil {
		return fmt.Errorf("read the node's pods: %w", err)
	}
	byKey := map[string]*corev1.Pod{}
	var held []string
	for i := range pods {
		k := pods[i].Namespace + "/" + pods[i].Name
		byKey[k] = &pods[i]
		if Held(&pods[i]) {
			held = append(held, k)
		}
	}
	sort.Strings(held)
	var targets []string
	if o.All {
		if len(held) == 0 {
			fmt.Fprintf(out, "No pod on this node is held: none carries %s: \"true\" and waits to start (Pending), by the node's database %s.\n", HoldUpgradeAnnotation, in.DataSource)
			return nil
		}
		targets = held
	} else {
		var errs field.ErrorList
		named := map[string]bool{}
		for _, name := range o.Pods {
			k := o.key(name)
			p := byKey[k]
			switch {
			case named[k]:
				continue
			case p == nil:
				errs = append(errs, field.NotFound(field.NewPath("POD"), k))
			case p.Annotations[HoldUpgradeAnnotation] != "true":
				errs = append(errs, field.Invalid(field.NewPath("POD"), k, fmt.Sprintf("the pod does not carry the annotation %s: \"true\", so the node does not hold it", HoldUpgradeAnnotation)))
			case p.DeletionTimestamp != nil:
				errs = append(errs, field.Invalid(field.NewPath("POD"), k, "the pod is being deleted"))
			case p.Status.Phase != corev1.PodPending:
				errs = append(errs, field.Invalid(field.NewPath("POD"), k, fmt.Sprintf("the pod is %s: the node holds only a pod that has not started (Pending)", p.Status.Phase)))
			default:
				targets = append(targets, k)
			}
			named[k] = true
		}
		if len(errs) > 0 {
			hint := "the node holds none"
			if len(held) > 0 {
				hint = "the node holds " + strings.Join(held, ", ")
			}
			return fmt.Errorf("%w (%s, by its database %s)", &config.InvalidError{What: "upgrade unhold", Errs: errs}, hint, in.DataSource)
		}
	}
	if err := RequestUnhold(e, targets); err != nil {
		return err
	}
	fmt.Fprintf(out, "Asked edgecore to release %s.\n", strings.Join(targets, ", "))
	deadline := e.Clock.Now().Add(o.Timeout)
	for {
		if req, err := loadUnhold(e); err == nil && req.Pods == nil {
			fmt.Fprintf(out, "edgecore handed them to the kubelet, which starts them now. Follow them with:\n")
			for _, k := range targets {
				ns, name, _ := strings.Cut(k, "/")
				fmt.Fprintf(out, "  kubectl get pod -n %s %s\n", ns, name)
			}
			return nil
		}
		if !e.Clock.Now().Before(deadline) || e.sleep(ctx, poll) {
			return fmt.Errorf("edgecore has not taken the request within %s: it takes it once the service runs and the node is Ready (Get-Service %s; kubectl get node); the request stays in %s until then", o.Timeout, e.Service, e.Paths.Unhold)
		}
	}
}
