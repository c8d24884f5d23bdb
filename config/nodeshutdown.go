package config

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// The Windows defaults of graceful node shutdown, which join and `config`
// write: at a host shutdown the kubelet stops pods of normal priority
// within the first 20 s, then those of system-critical priority
// (system-node-critical, system-cluster-critical: the node's network, log
// and monitoring agents, which the other pods need while they stop) within
// 10 s more. 30 s in all keeps a reboot short (Windows then waits up to
// service.PreShutdownTimeoutFor(30 s), 70 s, for the service, and only as
// long as the pods take), while a pod gets its preStop hook and a stop
// signal with time to act on it.
const (
	WindowsShutdownGracePeriod             = 30 * time.Second
	WindowsShutdownGracePeriodCriticalPods = 10 * time.Second
)

// GateWindowsGracefulNodeShutdown is the kubelet's feature gate of
// graceful node shutdown on Windows (KEP-4802, alpha in Kubernetes 1.32).
const GateWindowsGracefulNodeShutdown = string(features.WindowsGracefulNodeShutdown)

// The fields graceful node shutdown is configured with.
var (
	fieldShutdownGracePeriod              = field.NewPath("modules", "edged", "tailoredKubeletConfig", "shutdownGracePeriod")
	fieldShutdownGracePeriodCriticalPods  = field.NewPath("modules", "edged", "tailoredKubeletConfig", "shutdownGracePeriodCriticalPods")
	fieldShutdownGracePeriodByPodPriority = field.NewPath("modules", "edged", "tailoredKubeletConfig", "shutdownGracePeriodByPodPriority")
	fieldKubeletFeatureGates              = field.NewPath("modules", "edged", "tailoredKubeletConfig", "featureGates")
)

// NodeShutdown is how the node's kubelet stops its pods at a host
// shutdown, as the kubelet reads its configuration.
type NodeShutdown struct {
	// Grace is the longest it takes: the grace periods of the priority
	// groups, which the kubelet stops one after the other, summed. 0: the
	// kubelet stops no pod (edged off, the feature gate off, no grace
	// period).
	Grace time.Duration
	// Field names where Grace comes from.
	Field string
}

// NodeShutdownOf reads c the way the kubelet of goos does: graceful node
// shutdown is on with its feature gate (GracefulNodeShutdown, on by
// default, on Linux; WindowsGracefulNodeShutdown, off by default, on
// Windows); the grace periods by pod priority apply when given and the
// GracefulNodeShutdownBasedOnPodPriority gate is on, else
// shutdownGracePeriod, of which shutdownGracePeriodCriticalPods is the
// critical pods' part.
func NodeShutdownOf(c *v1alpha2.EdgeCoreConfig, goos string) NodeShutdown {
	if c.Modules == nil || c.Modules.Edged == nil || !c.Modules.Edged.Enable || c.Modules.Edged.TailoredKubeletConfig == nil {
		return NodeShutdown{}
	}
	k := c.Modules.Edged.TailoredKubeletConfig
	gates, err := kubeletGates(k.FeatureGates)
	if err != nil || !gates.Enabled(shutdownGate(goos)) {
		return NodeShutdown{}
	}
	if len(k.ShutdownGracePeriodByPodPriority) > 0 && gates.Enabled(features.GracefulNodeShutdownBasedOnPodPriority) {
		var sum int64
		for _, p := range k.ShutdownGracePeriodByPodPriority {
			sum += p.ShutdownGracePeriodSeconds
		}
		if sum <= 0 {
			return NodeShutdown{}
		}
		return NodeShutdown{Grace: time.Duration(sum) * time.Second, Field: fieldShutdownGracePeriodByPodPriority.String()}
	}
	// As the kubelet splits it: the critical pods' part and the rest, in
	// whole seconds each.
	grace, critical := k.ShutdownGracePeriod.Duration, k.ShutdownGracePeriodCriticalPods.Duration
	if grace <= 0 || critical < 0 || critical > grace {
		return NodeShutdown{}
	}
	seconds := int64((grace-critical)/time.Second) + int64(critical/time.Second)
	return NodeShutdown{Grace: time.Duration(seconds) * time.Second, Field: fieldShutdownGracePeriod.String()}
}

// shutdownGate is the kubelet's graceful node shutdown gate on goos.
func shutdownGate(goos string) featuregate.Feature {
	if goos == Windows {
		return features.WindowsGracefulNodeShutdown
	}
	return features.GracefulNodeShutdown
}

// kubeletGates are the kubelet's feature gates with the configuration's
// featureGates applied, as edged applies them.
func kubeletGates(set map[string]bool) (featuregate.FeatureGate, error) {
	gates := utilfeature.DefaultFeatureGate.DeepCopy()
	if err := gates.SetFromMap(set); err != nil {
		return nil, err
	}
	return gates, nil
}

// applyWindowsNodeShutdown writes the Windows defaults of graceful node
// shutdown into k: the grace periods and the feature gate.
func applyWindowsNodeShutdown(k *v1alpha2.TailoredKubeletConfiguration) {
	k.ShutdownGracePeriod = metav1.Duration{Duration: WindowsShutdownGracePeriod}
	k.ShutdownGracePeriodCriticalPods = metav1.Duration{Duration: WindowsShutdownGracePeriodCriticalPods}
	gates := map[string]bool{}
	for name, on := range k.FeatureGates {
		gates[name] = on
	}
	gates[GateWindowsGracefulNodeShutdown] = true
	k.FeatureGates = gates
}

// validateNodeShutdown refuses, on Windows, grace periods the kubelet
// would silently ignore: without the feature gate, with the critical
// pods' part over the whole, with both ways of giving them, or negative.
func validateNodeShutdown(k *v1alpha2.TailoredKubeletConfiguration) field.ErrorList {
	var errs field.ErrorList
	grace, critical := k.ShutdownGracePeriod.Duration, k.ShutdownGracePeriodCriticalPods.Duration
	byPriority := len(k.ShutdownGracePeriodByPodPriority) > 0
	if grace < 0 {
		errs = append(errs, field.Invalid(fieldShutdownGracePeriod, grace.String(), "must not be negative: 0s leaves the pods to the runtime at a host shutdown"))
	}
	if critical < 0 || (grace >= 0 && critical > grace) {
		errs = append(errs, field.Invalid(fieldShutdownGracePeriodCriticalPods, critical.String(),
			fmt.Sprintf("must be between 0s and shutdownGracePeriod (%v), or the kubelet stops no pod at a host shutdown: lower it", grace)))
	}
	if byPriority && (grace != 0 || critical != 0) {
		errs = append(errs, field.Invalid(fieldShutdownGracePeriodByPodPriority, fmt.Sprintf("%d entries", len(k.ShutdownGracePeriodByPodPriority)),
			"cannot be used together with shutdownGracePeriod and shutdownGracePeriodCriticalPods: set both of those to 0s, or remove this list"))
	}
	for i, p := range k.ShutdownGracePeriodByPodPriority {
		if p.ShutdownGracePeriodSeconds < 0 {
			errs = append(errs, field.Invalid(fieldShutdownGracePeriodByPodPriority.Index(i).Child("shutdownGracePeriodSeconds"), p.ShutdownGracePeriodSeconds, "must not be negative"))
		}
	}
	if grace <= 0 && !byPriority {
		return errs
	}
	gates, err := kubeletGates(k.FeatureGates)
	if err != nil {
		return append(errs, field.Invalid(fieldKubeletFeatureGates, k.FeatureGates, err.Error()))
	}
	if !gates.Enabled(features.WindowsGracefulNodeShutdown) {
		path, value := fieldShutdownGracePeriod, grace.String()
		if byPriority {
			path, value = fieldShutdownGracePeriodByPodPriority, fmt.Sprintf("%d entries", len(k.ShutdownGracePeriodByPodPriority))
		}
		errs = append(errs, field.Invalid(path, value, fmt.Sprintf(
			"the kubelet stops pods at a host shutdown only with the feature gate %s: set %s.%s: true, "+
				"or shutdownGracePeriod: 0s to leave the pods to the runtime at a host shutdown",
			GateWindowsGracefulNodeShutdown, fieldKubeletFeatureGates, GateWindowsGracefulNodeShutdown)))
	}
	return errs
}
