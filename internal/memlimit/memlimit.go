// Package memlimit sets the Go runtime's memory policy of the node: a soft
// memory limit (runtime/debug.SetMemoryLimit) for a long-running agent on a
// host whose memory belongs to its workloads.
//
// Go's collector alone lets the heap grow to twice what is live
// (GOGC=100) and hands freed pages back to the OS only slowly; with a soft
// limit the collector and the scavenger work harder as the process nears
// it, so edgecore's footprint stays within what the host can spare. The
// limit is soft: a heap that truly needs more still gets it, with the
// collector capped at about half the CPU, rather than failing.
//
// Where the limit comes from, first match wins:
//
//  1. --memory-limit: a size ("300Mi", "1Gi", bytes) or "off" for none;
//  2. the GOMEMLIMIT environment variable, which the Go runtime itself has
//     applied (edgecore leaves it alone);
//  3. the kubelet's kubeReserved memory (modules.edged.tailoredKubeletConfig
//     .kubeReserved.memory): what the operator reserved for the node agents;
//  4. a sixteenth of the host's memory (on Linux, of the cgroup's limit if
//     that is lower), between 128 MiB and 1 GiB.
//
// GOGC is Go's: edgecore keeps the runtime's default of 100 and an
// operator's GOGC setting.
package memlimit

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	// FlagName is the command-line flag that overrides the policy.
	FlagName = "memory-limit"

	// The derived limit lies within these bounds: below 128 MiB the
	// collector would run nearly all the time (the node's live heap is
	// tens of MiB), and above 1 GiB a limit no longer protects a host.
	minDerived = 128 << 20
	maxDerived = 1 << 30
	// hostShare is the part of the host's memory the derived limit is.
	hostShare = 16
	// minExplicit refuses limits that would leave the collector running
	// constantly.
	minExplicit = 32 << 20
)

// Source says where a limit came from.
type Source string

const (
	FromFlag         Source = "--" + FlagName
	FromEnvironment  Source = "GOMEMLIMIT"
	FromKubeReserved Source = "kubeReserved.memory"
	FromHost         Source = "host memory"
	// None means no limit could be derived (the host's memory is unknown).
	None Source = "none"
)

// Setting is the value of --memory-limit: empty for the derived policy,
// "off" for no limit, or a size.
type Setting struct {
	set   bool
	off   bool
	bytes int64
}

// String implements pflag.Value.
func (s *Setting) String() string {
	switch {
	case !s.set:
		return ""
	case s.off:
		return "off"
	default:
		return resource.NewQuantity(s.bytes, resource.BinarySI).String()
	}
}

// Set implements pflag.Value: it takes "off" or a size such as 300Mi.
func (s *Setting) Set(v string) error {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "off") {
		*s = Setting{set: true, off: true}
		return nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return fmt.Errorf("%q is neither a size such as 300Mi or 1Gi nor off", v)
	}
	if q.Value() < minExplicit {
		return fmt.Errorf("%s is below the smallest limit edgecore runs with, 32Mi", v)
	}
	*s = Setting{set: true, bytes: q.Value()}
	return nil
}

// Type implements pflag.Value.
func (s *Setting) Type() string { return "size" }

// Inputs are what the policy is derived from.
type Inputs struct {
	Flag Setting
	// Env looks up an environment variable.
	Env func(string) string
	// KubeReserved is the kubelet's kubeReserved setting.
	KubeReserved map[string]string
	// HostMemory is the memory of the host, or of the container edgecore
	// runs in, in bytes; 0 when unknown.
	HostMemory uint64
}

// Policy is the outcome: the limit to set, or none to leave the runtime
// as it is.
type Policy struct {
	// Limit in bytes; math.MaxInt64 means no limit.
	Limit  int64
	Source Source
	// Apply says the runtime's limit must be set; false when GOMEMLIMIT
	// already set it.
	Apply bool
	// GOGC is the collector's setting, Go's default or the operator's.
	GOGC string
}

// Decide derives the policy; it changes nothing.
func Decide(in Inputs) (Policy, error) {
	switch {
	case in.Flag.set && in.Flag.off:
		return Policy{Limit: math.MaxInt64, Source: FromFlag, Apply: true}, nil
	case in.Flag.set:
		return Policy{Limit: in.Flag.bytes, Source: FromFlag, Apply: true}, nil
	case in.Env != nil && in.Env("GOMEMLIMIT") != "":
		// The runtime parsed it at start; report what it made of it.
		return Policy{Limit: debug.SetMemoryLimit(-1), Source: FromEnvironment}, nil
	}
	if v, ok := in.KubeReserved["memory"]; ok {
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Value() <= 0 {
			return Policy{}, fmt.Errorf("kubeReserved memory %q is not a size such as 512Mi", v)
		}
		return Policy{Limit: q.Value(), Source: FromKubeReserved, Apply: true}, nil
	}
	if in.HostMemory == 0 {
		return Policy{Limit: math.MaxInt64, Source: None}, nil
	}
	limit := int64(min(max(in.HostMemory/hostShare, minDerived), maxDerived))
	return Policy{Limit: limit, Source: FromHost, Apply: true}, nil
}

// Configure derives the policy from the flag, the environment, kubeReserved
// and the host, applies it and returns it.
func Configure(flag Setting, kubeReserved map[string]string) (Policy, error) {
	p, err := Decide(Inputs{Flag: flag, Env: os.Getenv, KubeReserved: kubeReserved, HostMemory: HostMemory()})
	if err != nil {
		return p, err
	}
	p.GOGC = "100 (Go's default)"
	if v := os.Getenv("GOGC"); v != "" {
		p.GOGC = v + " (GOGC)"
	}
	if p.Apply {
		debug.SetMemoryLimit(p.Limit)
	}
	return p, nil
}

// String describes the policy for the log.
func (p Policy) String() string {
	s := fmt.Sprintf("soft memory limit %s (%s)", resource.NewQuantity(p.Limit, resource.BinarySI), p.Source)
	if p.Limit == math.MaxInt64 {
		s = fmt.Sprintf("no soft memory limit (%s)", p.Source)
	}
	if p.GOGC != "" {
		s += ", GC percent " + p.GOGC
	}
	return s
}
